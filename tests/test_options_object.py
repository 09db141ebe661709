"""The filter's options as one object (:class:`aflite.FilterOptions`): declared and checked
once, given to :func:`aflite.filter` as an object, as keywords of the same names or both,
passed down unchanged from the command line's config and the data API, and the one driver
that every way of filtering goes through (AFLITE, a given score, a registered scorer)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import planted_data

import aflite
from aflite.algorithm.loop import options as options_module
from aflite.config import ConfigError, FilterConfig


@pytest.fixture(scope="module")
def data():
    x, y, planted = planted_data(n=300)
    return x, y, planted


def _same(a, b):
    np.testing.assert_array_equal(a.kept, b.kept)
    assert a.params == b.params


def test_an_options_object_and_keywords_of_the_same_names_run_the_same(data):
    x, y, _ = data
    kw = dict(target_size=150, train_size=60, slice_size=15, threshold=0.6, n_partitions=16)
    by_keywords = aflite.filter(x, y, seed=0, **kw)
    by_object = aflite.filter(x, y, seed=0, options=aflite.FilterOptions(**kw))
    _same(by_keywords, by_object)
    # both: the keywords win over the object's values
    both = aflite.filter(x, y, seed=0, options=aflite.FilterOptions(**(kw | {"threshold": 0.9})),
                         threshold=0.6)  # fmt: skip
    _same(by_keywords, both)
    # a preset is an options object; the command line's config is one too
    practical = aflite.filter(x, y, seed=0, options=aflite.PRESETS["practical"])
    config = FilterConfig(input="data.jsonl", seed=0)
    _same(practical, aflite.filter(x, y, seed=0, options=config))


def test_the_options_are_checked_once_when_made_and_trusted_inside(data, monkeypatch):
    x, y, _ = data
    made = []
    real = options_module.FilterOptions.__post_init__

    def counted(self):
        made.append(self)
        real(self)

    monkeypatch.setattr(options_module.FilterOptions, "__post_init__", counted)
    opts = aflite.FilterOptions(target_size=150, train_size=60, slice_size=30, n_partitions=8)
    assert len(made) == 1
    aflite.filter(x, y, options=opts, progress=False)
    assert len(made) == 1  # handed down as made: no copy, no second check
    aflite.filter(x, y, options=opts, threshold=0.7, progress=False)
    assert len(made) == 2  # one changed copy, checked once


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"threshold": 75}, "^threshold: must be in \\[0, 1\\], got 75$"),
        ({"n_partitions": 0}, "^n_partitions: must be a positive whole number or auto, got 0$"),
        ({"balance": "labels"}, "^balance: must be none or classes, got 'labels'$"),
        ({"strategy": "slice"}, "did you mean 'slicing'"),
        ({"target_size": 1.5}, "^target_size: as a fraction must be in \\(0, 1\\), got 1.5$"),
    ],
)
def test_a_bad_option_is_one_error_naming_it_before_any_data_is_read(kw, message):
    with pytest.raises(ConfigError, match=message):
        aflite.FilterOptions(**kw)
    with pytest.raises(ConfigError, match=message):  # the array is never looked at
        aflite.filter(object(), object(), **kw)


def test_a_misspelt_option_keyword_is_a_type_error_with_a_did_you_mean(data):
    x, y, _ = data
    with pytest.raises(TypeError, match="treshold; did you mean 'threshold'"):
        aflite.filter(x, y, treshold=0.7)
    with pytest.raises(TypeError, match=r"^filter\(\): options must be a FilterOptions, got dict$"):
        aflite.filter(x, y, options={"threshold": 0.7})


def test_changed_copies_are_checked_and_the_presets_cannot_be_changed():
    paper = aflite.PRESETS["paper"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        paper.threshold = 0.5  # type: ignore[misc]
    with pytest.raises(ConfigError, match="^slice_size: "):
        dataclasses.replace(paper, slice_size=-3)
    with pytest.raises(TypeError):
        aflite.PRESETS["mine"] = paper  # type: ignore[index]


def test_the_data_api_hands_the_options_down_as_one_object(monkeypatch):
    import aflite.algorithm

    seen = {}

    def fake(x, y, **kw):
        seen.update(kw)
        raise SystemExit(0)

    monkeypatch.setattr(aflite.algorithm, "adversarial_filter", fake)
    rows = [{"text": f"w{i % 5}", "label": i % 2} for i in range(40)]
    opts = aflite.FilterOptions.of(aflite.PRESETS["practical"], target_size=20, slice_size=4)
    with pytest.raises(SystemExit):
        aflite.filter_dataset(rows, label="label", options=opts)
    assert seen["options"] is opts
    with pytest.raises(TypeError, match="options= or preset=, not both"):
        aflite.filter_dataset(rows, label="label", options=opts, preset="paper")


def test_one_driver_for_every_ranker(data):
    x, y, planted = data
    kw = dict(target_size=200, train_size=60, n_partitions=8, seed=0, device="cpu")
    # a given score: the give-away rows (planted) as the easiest
    given = aflite.filter(x, y, ranker=aflite.ByScores(planted.astype(float)), slice_size=None,
                          **kw)  # fmt: skip
    assert given.stop_reason == "by_score" and not planted[given.kept].any()  # all removed
    # a registered scorer, run once before the loop
    scored = aflite.filter(x, y, ranker=aflite.ByScorer("pvi"), slice_size=None, **kw)
    assert scored.params["by"] == "pvi" and len(scored.kept) == 200
    assert planted[scored.removed].mean() > 0.8
    # what AFLITE's phases alone read is refused with a ranker, naming it
    with pytest.raises(ValueError, match=r"^ranker=ByScorer\(...\): checkpoint applies to AFLITE"):
        aflite.filter(x, y, ranker=aflite.ByScorer("pvi"), checkpoint=print, **kw)
    with pytest.raises(ValueError, match="slice_size=None .* applies to ranker= only"):
        aflite.filter(x, y, slice_size=None, **kw)
    with pytest.raises(ValueError, match="ranker must be None"):
        aflite.filter(x, y, ranker="pvi", **kw)


# --- the audits' options --------------------------------------------------------------------


@pytest.fixture
def spy_audit():
    """An audit that records the context it is given."""
    from aflite.audits import AUDITS, AuditResult, register_audit

    seen = []

    @register_audit("spy-options", description="records its context")
    def _spy(ctx):
        seen.append(ctx)
        return [AuditResult("spy", "ok", [], [])]

    yield seen
    AUDITS.unregister("spy-options")


def test_the_audits_read_the_options_as_given_from_every_entry_point(spy_audit, tmp_path):
    import json

    from aflite.audits import AuditOptions, run_audits

    rows = [{"t": f"w{i % 7} x{i % 3}", "label": i % 2} for i in range(60)]
    opts = AuditOptions(min_count=3, identity_min_count="5,2", seed=7)
    assert opts.identity_min_count == (2, 5)
    run_audits({"t": [r["t"] for r in rows]}, [r["label"] for r in rows], options=opts,
               audits=["spy-options"])  # fmt: skip
    aflite.audit(rows, label="label", text="t", audits=["spy-options"], options=opts)
    aflite.audit(rows, label="label", text="t", audits=["spy-options"], min_count=3,
                 identity_min_count="5,2", seed=7)  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from conftest import run_in_process

    r = run_in_process("audit", str(path), "--text-fields", "t", "--audits", "spy-options",
                       "--min-count", "3", "--identity-min-count", "5,2", "--seed", "7",
                       "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len(spy_audit) == 4
    for ctx in spy_audit:  # the same options, whichever way they came
        assert AuditOptions.of(ctx) == AuditOptions.of(opts, field="t")
    with pytest.raises(TypeError, match="min_cont; did you mean 'min_count'"):
        run_audits({"t": ["a"] * 4}, [0, 1] * 2, audits=["spy-options"], min_cont=3)
    with pytest.raises(ConfigError, match="^identity_min_count: min counts must be integers"):
        AuditOptions(identity_min_count="ten")


def test_a_missing_identity_word_file_fails_before_any_audit_runs(spy_audit, tmp_path):
    from aflite.audits import run_audits

    texts = {"t": [f"w{i % 7} woman" for i in range(40)]}
    with pytest.raises(OSError):
        run_audits(texts, [i % 2 for i in range(40)], audits=["identity", "spy-options"],
                   identity_words=str(tmp_path / "absent.tsv"))  # fmt: skip
    assert spy_audit == []  # the identity audit's check ran first


def test_the_audit_api_checks_its_options_and_names_before_reading_the_data():
    with pytest.raises(ConfigError, match="^min_count: must be a positive whole number, got 0$"):
        aflite.audit("/nowhere/rows.jsonl", label="label", min_count=0)
    with pytest.raises(ValueError, match="did you mean 'pmi'"):
        aflite.audit("/nowhere/rows.jsonl", label="label", audits="pmx")


# --- one name for an option from the command line to the Python API --------------------------

# the options only a run on files has: where it reads and writes, and what it adds to a run
# (a warm-up model, Ray, --by); the Python API takes every other one
# under the config's own name
_RUN_ONLY = {
    "filter_dataset": {"input", "out_dir", "resume", "overwrite", "report", "by",
                       "warmup_fraction", "warmup_finetune", "backend", "ray_address"},
    "score_dataset": {"input", "out_dir", "overwrite", "report"},
    "audit": {"input", "compare", "features", "cache_dir", "json_out"},
    # compare's sets come read (LabelledData) or read with the label field "label"
    "compare_experiment": {"label", "text", "ood_group_field", "markdown", "json_out"},
}  # fmt: skip


def test_the_python_api_takes_each_commands_options_under_their_config_names():
    import inspect

    from aflite.audits import AuditOptions
    from aflite.config import AuditConfig, CompareConfig, ScoreConfig
    from aflite.experiments import compare_experiment

    pairs = [
        (aflite.filter_dataset, FilterConfig, aflite.FilterOptions),
        (aflite.score_dataset, ScoreConfig, None),
        (aflite.audit, AuditConfig, AuditOptions),
        (compare_experiment, CompareConfig, None),
    ]
    for fn, config, options in pairs:
        params = inspect.signature(fn).parameters
        # the options object's fields are keywords of the same names (**kwargs)
        by_keyword = set(options.names()) if options is not None else set()
        assert options is None or "options" in params, fn.__name__
        missing = {n for n in config.names() if n not in params and n not in by_keyword}
        assert missing == _RUN_ONLY[fn.__name__], fn.__name__


def test_what_a_ranking_by_score_does_not_read_changes_nothing(data):
    x, y, planted = data
    kw = dict(target_size=200, train_size=60, n_partitions=8, seed=0, slice_size=20)
    by = aflite.ByScores(planted.astype(float))
    plain = aflite.filter(x, y, ranker=by, **kw)
    greedy = aflite.filter(x, y, ranker=by, strategy="greedy", threshold=0.9, **kw)
    assert len(plain.history) == len(greedy.history) == 5  # slices of 20, not of 1
    np.testing.assert_array_equal(plain.kept, greedy.kept)
    with pytest.raises(ValueError, match="^scores: row 3 is not a number$"):
        aflite.filter(x, y, ranker=aflite.ByScores(np.where(np.arange(300) == 3, np.nan, 0.0)),
                      **kw)  # fmt: skip


def test_options_are_named_and_made_of_the_right_kinds(data):
    x, y, _ = data
    with pytest.raises(TypeError, match="positional"):
        aflite.FilterOptions(0.5, 64)  # type: ignore[misc]
    with pytest.raises(ConfigError, match="^model: must be a model family's name or a model"):
        aflite.FilterOptions(model=3)
    assert aflite.FilterOptions(threshold="0.7").threshold == 0.7  # as a file may give it
    with pytest.raises(ConfigError, match="^threshold: must be a number, got 'high'$"):
        aflite.FilterOptions(threshold="high")
    with pytest.raises(ValueError, match="^features have 300 rows but labels have 10$"):
        aflite.filter(x, y[:10])


def test_the_data_api_reads_its_field_arguments_as_the_command_line_does():
    rows = [{"p": f"w{i % 5}", "c1": f"x{i % 3}", "c2": f"z{i % 4}", "label": i % 2}
            for i in range(40)]  # fmt: skip
    listed = aflite.filter_dataset(rows, label="label", choices=["c1", "c2"], context=["p"],
                                   target_size=30, device="cpu")  # fmt: skip
    typed = aflite.filter_dataset(rows, label="label", choices="c1,c2", context="p",
                                  target_size=30, device="cpu")  # fmt: skip
    assert typed.fingerprint == listed.fingerprint
    with pytest.raises(TypeError, match="options= takes an aflite.FilterOptions, got FilterConfig"):
        aflite.filter_dataset(rows, label="label", options=FilterConfig(input="rows.jsonl"))
    with pytest.raises(TypeError, match="preset= takes a preset's name"):
        aflite.filter_dataset(rows, label="label", preset=aflite.PRESETS["paper"])
