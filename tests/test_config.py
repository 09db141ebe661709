"""One source per option: the configs' fields give the command line's options, the presets,
``--config`` files and the API's checks; a bad value is the same one line from every door,
named as a flag on the command line and as a field in Python."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from conftest import run_in_process
from typer.testing import CliRunner

import aflite.jobs
from aflite.cli.main import app  # every command registered
from aflite.config import (
    PRESET_OPTIONS,
    PRESETS,
    ConfigError,
    FilterConfig,
    ScoreConfig,
    config_fields,
    flag,
    preset,
    scorer_options,
)
from aflite.errors import DataError

# option parsing runs beside files under the names the examples use
pytestmark = pytest.mark.usefixtures("placeholder_inputs")


def _flag_to_name(message: str) -> str:
    """A message with every flag named as its field (``--label-field`` -> ``label``)."""
    from aflite._internal.options import flag_names

    names = flag_names()
    return re.sub(
        r"--([a-z][a-z-]*)",
        lambda m: names.get(m.group(1).replace("-", "_")) or m.group(1).replace("-", "_"),
        message,
    )


def _flags(f) -> list[str]:
    """Every flag of a config field."""
    own = f.metadata["flag"]
    return [own] if isinstance(own, str) else list(own) if own else [flag(f.name)]


# (field, a bad value as Python gives it, the same as the command line types it)
BAD = [
    ("threshold", 75, "75"),
    ("threshold", -0.1, "-0.1"),
    ("strategy", "slice", "slice"),
    ("train_size", 0, "0"),
    ("train_size", "abc", "abc"),
    ("train_size", 1.5, "1.5"),
    ("target_size", 0, "0"),
    ("slice_size", -3, "-3"),
    ("n_partitions", 0, "0"),
    ("seed", -1, "-1"),
    ("min_bias", 2, "2"),
    ("min_bias", "x", "x"),
    ("balance", "x", "x"),
    ("features", "bogus", "bogus"),
    ("audits", "pmi,pmx", "pmi,pmx"),
    ("warmup_fraction", 2, "2"),
    ("backend", "spark", "spark"),
    ("partitions", "random", "random"),
    ("threads", 0, "0"),
    ("ray_address", "auto", "auto"),
    ("text", "label", "label"),
    ("by", "nosuch", "nosuch"),
    ("model", "forest", "forest"),
]


@pytest.mark.parametrize("field, value, typed", BAD, ids=[f"{f}={t}" for f, _, t in BAD])
def test_a_bad_value_is_the_same_line_from_python_and_the_command_line(
    monkeypatch, field, value, typed
):
    with pytest.raises(ConfigError) as e:
        FilterConfig(input="data.jsonl", **{field: value})
    python = str(e.value)
    assert python.startswith(f"{field}: ") and "\n" not in python

    def no_work(job, **_):  # the check comes before any work
        raise AssertionError("the run started")

    monkeypatch.setattr(aflite.jobs, "run_filter_job", no_work)
    r = run_in_process("filter", "data.jsonl", flag(field), typed)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    cli = r.stderr.removeprefix("aflite: error: ").rstrip("\n")
    assert cli.startswith(flag(field) + ": ")
    assert _flag_to_name(cli) == _flag_to_name(python)  # the same words, only named otherwise


def test_the_api_names_fields_and_checks_before_any_work(monkeypatch):
    import aflite

    rows = [{"text": f"w{i % 5}", "label": i % 2} for i in range(40)]
    with pytest.raises(DataError, match=r"^threshold: must be in \[0, 1\], got 75$"):
        aflite.filter_dataset(rows, label="label", threshold=75)
    with pytest.raises(DataError, match=r"^preset: unknown preset 'papr'.*did you mean 'paper'"):
        aflite.filter_dataset(rows, label="label", preset="papr")


def test_a_config_is_frozen():
    job = FilterConfig(input="data.jsonl")
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.threshold = 0.9  # type: ignore[misc]
    assert dataclasses.replace(job, threshold=0.9).threshold == 0.9
    with pytest.raises(ConfigError, match="^threshold: "):
        dataclasses.replace(job, threshold=9)


# --- the command line is generated from the configs ---------------------------------------------


def _help(*command: str) -> str:
    r = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("command, cls", [(("filter",), FilterConfig), (("score",), ScoreConfig)])
def test_help_lists_every_config_field_with_its_help(command, cls):
    text = _help(*command)
    bare = re.sub(r"\s+", "", text)  # help wraps lines, even inside a --flag-name
    for f in config_fields(cls):
        if f.metadata["argument"]:
            assert "INPUT" in text
        elif f.metadata["entries"] is None:
            for each in _flags(f):
                assert each + " " in text or each + "," in text, f.name
            help_ = f.metadata["help"]
            if not hasattr(help_, "kind"):  # a registry's list is filled in when shown
                assert re.sub(r"\s+", "", str(help_)) in bare, f.name


def test_score_help_lists_every_option_a_scorer_declares():
    text = _help("score")
    declared = scorer_options()
    assert {"epochs", "C", "el2n_epoch", "ambiguous_share", "n_partitions"} <= set(declared)
    for name in declared:
        assert "--" + name.replace("_", "-") + " " in text, name


def _captured(monkeypatch, module, attr, *args: str):
    seen = []

    def fake(job, **_):
        seen.append(job)
        raise SystemExit(0)

    monkeypatch.setattr(module, attr, fake)
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return seen[0]


@pytest.mark.parametrize("name", list(scorer_options()))
def test_every_scorer_option_reaches_the_score_job_and_the_api(monkeypatch, name):
    import aflite.jobs.score_job as score_job
    from aflite.scoring import resolve_scorers

    default, _ = scorer_options()[name]
    value = default if isinstance(default, str) else default * 2
    job = _captured(monkeypatch, score_job, "run_score_job",
                    "score", "data.jsonl", "--" + name.replace("_", "-"), str(value))  # fmt: skip
    assert dict(job.options) == {name: value}
    # and the API accepts it by the same name
    assert resolve_scorers(None, has_partial=False, options={name: value})


def test_a_config_file_gives_scorer_options_and_flags_override_it(monkeypatch, tmp_path):
    import aflite.jobs.score_job as score_job

    toml = tmp_path / "run.toml"
    toml.write_text('epochs = 3\nC = 0.5\nscorers = "pvi,aum"\nn_folds = 4\n')
    job = _captured(monkeypatch, score_job, "run_score_job",
                    "score", "data.jsonl", "--config", str(toml), "--C", "2")  # fmt: skip
    assert dict(job.options) == {"epochs": 3, "C": 2}
    assert job.scorers == ("pvi", "aum") and job.n_folds == 4


def test_a_misspelt_scorer_option_in_a_config_file_is_named(tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text("epoch = 3\n")
    r = run_in_process("score", "data.jsonl", "--config", str(toml))
    assert r.returncode == 2
    assert r.stderr == f"aflite: error: {toml}: unknown option 'epoch'; did you mean 'epochs'?\n"


# --- presets -------------------------------------------------------------------------------------


def test_one_table_of_defaults_and_the_presets_are_instances_of_it():
    import dataclasses
    import inspect

    from aflite.algorithm import FilterOptions, adversarial_filter
    from aflite.api import filter_dataset
    from aflite.experiments import compare_experiment

    assert set(PRESETS) == {"paper", "practical"}
    assert all(type(p) is FilterOptions for p in PRESETS.values())
    # aflite.filter's defaults: Algorithm 1 as published, on block partitions
    paper, defaults = PRESETS["paper"], FilterOptions()
    assert paper == dataclasses.replace(defaults, partitions="uniform")
    assert (paper.threshold, paper.min_bias, paper.slice_size) == (0.75, None, 500)
    # the command line starts from the practical preset: the same fields, other defaults
    practical = PRESETS["practical"]
    assert practical.changed_from(defaults) == {
        "threshold": 0.6, "slice_size": 0.05, "min_bias": 0.02, "model": "ridge",
        "n_partitions": "auto",
    }  # fmt: skip
    config = FilterConfig(input="data.jsonl")
    assert FilterOptions.of(config) == practical
    assert isinstance(config, FilterOptions)  # the config is the options, passed as is
    # no signature re-lists an option with its own default
    for fn in (adversarial_filter, filter_dataset, compare_experiment):
        params = inspect.signature(fn).parameters
        assert not set(params) & set(PRESET_OPTIONS), fn.__name__
    # the checks and help of an option are declared once: the config's are the options'
    ours = {f.name: f for f in config_fields(FilterConfig)}
    for f in dataclasses.fields(FilterOptions):
        assert ours[f.name].metadata["check"] is f.metadata["check"], f.name
        assert ours[f.name].metadata["help"] == f.metadata["help"], f.name


def test_a_preset_on_the_command_line_and_explicit_options_over_it(monkeypatch):
    job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                    "filter", "data.jsonl", "--preset", "paper")  # fmt: skip
    assert job == FilterConfig.build(preset("paper"), {"input": "data.jsonl"})
    assert (job.threshold, job.min_bias, job.partitions, job.slice_size) == (
        0.75,
        None,
        "uniform",
        500,
    )
    job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                    "filter", "data.jsonl", "--preset", "paper", "--threshold", "0.6",
                    "--min-bias", "0.05")  # fmt: skip
    assert (job.threshold, job.min_bias, job.partitions) == (0.6, 0.05, "uniform")
    # an explicit value equal to the default still overrides the preset
    job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                    "filter", "data.jsonl", "--preset", "paper", "--partitions", "blocks")  # fmt: skip
    assert job.partitions == "blocks"


def test_a_preset_in_python(monkeypatch):
    import aflite
    import aflite.algorithm

    seen = {}

    def fake(x, y, **kw):
        seen.update(kw)
        raise SystemExit(0)

    monkeypatch.setattr(aflite.algorithm, "adversarial_filter", fake)
    rows = [{"text": f"w{i % 5}", "label": i % 2} for i in range(40)]
    with pytest.raises(SystemExit):
        aflite.filter_dataset(rows, label="label", preset="paper", slice_size=4, target_size=20)
    options = seen["options"]  # one object, handed down as made
    assert options.threshold == 0.75 and options.min_bias is None
    assert options.partitions == "uniform" and options.slice_size == 4


# --- --config FILE -------------------------------------------------------------------------------


def test_a_toml_file_gives_options_and_flags_override_it(monkeypatch, tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text(
        'preset = "paper"\nthreshold = 0.7\ntext-fields = ["premise", "hypothesis"]\n'
        'min_bias = "off"\ntrain_size = 200\n'
    )
    job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                    "filter", "data.jsonl", "--config", str(toml), "--train-size", "0.2")  # fmt: skip
    assert job.threshold == 0.7 and job.partitions == "uniform"  # the file over its preset
    assert job.text == ("premise", "hypothesis") and job.min_bias is None
    assert job.train_size == 0.2  # the flag over the file


def test_a_file_may_name_an_option_by_its_flag_or_its_name(monkeypatch, tmp_path):
    # label, text, ... in Python and in a file; --label-field, ... on the command line; an
    # older run's summary.json says label_field: all read as the same options
    for text in ('label = "gold"\nchoices = "endings"\n',
                 'label-field = "gold"\nchoices_field = "endings"\n',
                 'label_field = "gold"\nchoices-fields = ["endings"]\n'):  # fmt: skip
        toml = tmp_path / "run.toml"
        toml.write_text(text)
        job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                        "filter", "data.jsonl", "--config", str(toml))  # fmt: skip
        assert (job.label, job.choices) == ("gold", "endings"), text
    toml.write_text('choices_field = "endings"\nchoices_fields = ["a", "b"]\n')
    r = run_in_process("filter", "data.jsonl", "--config", str(toml))
    assert r.returncode == 2
    assert (
        r.stderr
        == f"aflite: error: {toml}: 'choices_fields' gives option 'choices' a second time\n"
    )
    job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                    "filter", "data.jsonl", "--label-field", "gold", "--choices-fields", "a,b")  # fmt: skip
    assert job == FilterConfig(input="data.jsonl", label="gold", choices=["a", "b"])
    assert job.choices == ("a", "b")


@pytest.mark.parametrize(
    "text, message",
    [
        ("treshold = 0.7\n", "run.toml: unknown option 'treshold'; did you mean 'threshold'?"),
        ("threshold = 7\n", "run.toml: threshold: must be in [0, 1], got 7"),
        ("threshold = \n", "run.toml: not TOML"),
    ],
)
def test_a_bad_config_file_is_one_line(tmp_path, text, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(text)
    r = run_in_process("filter", "data.jsonl", "--config", "run.toml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("aflite: error: " + message), r.stderr


@pytest.mark.parametrize("extra", [[], ["--partitions", "uniform"]], ids=["blocks", "uniform"])
def test_a_run_repeats_from_its_summary(tmp_path, extra):
    import numpy as np

    rng = np.random.default_rng(0)
    rows = []
    for i in range(160):
        y = i % 2
        words = " ".join(f"w{k}" for k in rng.integers(0, 40, 4))
        rows.append({"id": f"r{i}", "text": ("nobody " if y and i % 3 else "") + words,
                     "label": "ab"[y]})  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = tmp_path / "a", tmp_path / "b"
    r = run_in_process("filter", str(src), "--n-partitions", "4", "--train-size", "30",
                       "--slice-size", "10", "--threshold", "0.5", "--seed", "3", "--quiet",
                       "--min-bias", "off", *extra,
                       "--no-report", "--out-dir", str(a))  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = run_in_process("filter", "--config", str(a / "summary.json"), "--out-dir", str(b),
                       "--quiet", "--no-report")  # fmt: skip
    assert r.returncode == 0, r.stderr

    def kept(d):
        return [json.loads(line)["id"] for line in (d / "kept.jsonl").read_text().splitlines()]

    assert kept(a) == kept(b) and 0 < len(kept(a)) < len(rows)
    sa, sb = (json.loads((d / "summary.json").read_text())["options"] for d in (a, b))
    assert sa == sb


def test_every_option_an_audit_reads_is_an_audit_option():
    from aflite.audits import AuditContext, AuditOptions
    from aflite.config import AuditConfig

    data = {"texts", "labels", "choices", "suffix", "tag", "given_features", "_features"}
    read = {f.name for f in dataclasses.fields(AuditContext)} - data
    assert read == set(AuditOptions.names())  # the context is the options, as given
    assert issubclass(AuditConfig, AuditOptions)
    text = _help("audit")
    for f in config_fields(AuditConfig):
        if f.name == "input":
            continue
        for each in _flags(f):
            assert each + " " in text or each + "," in text, f.name


def test_a_bad_audit_option_is_one_line_before_any_work(tmp_path):
    r = run_in_process("audit", "nowhere.jsonl", "--text-fields", "t", "--min-count", "0")
    assert r.returncode == 2
    assert r.stderr == "aflite: error: --min-count: must be a positive whole number, got 0\n"
    r = run_in_process("audit", "nowhere.jsonl", "--text-fields", "t", "--tokenizer", "spacey")
    assert (
        "--tokenizer: unknown value 'spacey': choose one of regex, spacy; did you mean "
        "'spacy'?" in r.stderr
    )


def test_a_preset_in_a_config_file_gives_way_to_the_command_line(monkeypatch, tmp_path):
    toml = tmp_path / "run.toml"
    toml.write_text('preset = "paper"\nthreshold = 0.65\n')
    for name, partitions in ((None, "uniform"), ("practical", "blocks")):
        extra = ["--preset", name] if name else []
        job = _captured(monkeypatch, aflite.jobs, "run_filter_job",
                        "filter", "data.jsonl", "--config", str(toml), *extra)  # fmt: skip
        assert (job.threshold, job.partitions) == (0.65, partitions), name
