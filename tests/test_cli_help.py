"""``--version``, help screens without type tags, flags as pairs, and ``--quiet`` reaching
third-party progress bars."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

import aflite
import aflite.jobs
from aflite._internal.progress import silence_third_party_progress
from aflite.cli.main import app
from aflite.errors import DataError

# option parsing runs beside files under the names the examples use
pytestmark = pytest.mark.usefixtures("placeholder_inputs")


COMMANDS = [
    [], ["filter"], ["demo"], ["report"], ["audit"], ["pmi-query"], ["experiment"],
    ["experiment", "synthetic"], ["experiment", "compare"], ["experiment", "ood"], ["score"],
]  # fmt: skip
QUIET_ENV = ("TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")


def _help(words):
    r = CliRunner().invoke(app, [*words, "--help"], prog_name="aflite", env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    return r.output


def test_version():
    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0
    assert r.output == f"aflite {aflite.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", aflite.__version__)


def test_version_through_main_exits_0(monkeypatch, capsys):
    from aflite.cli.main import main

    monkeypatch.setattr(sys, "argv", ["aflite", "--version"])
    main()  # returns: exit code 0
    assert capsys.readouterr().out == f"aflite {aflite.__version__}\n"


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w) or "aflite")
def test_help_has_no_type_tags_and_flags_come_in_pairs(words):
    text = _help(words)
    assert text.startswith(f"Usage: aflite {' '.join(words)}".rstrip())
    assert not re.search(r"<(str|bool|int|float|path|list)[^>]*>", text), text
    assert "--no-no-" not in text
    assert "[default: no-" not in text  # an off flag needs no default shown
    for flag in re.findall(r"^\s+(--[a-z-]+)(?: / (--[a-z-]+))?", text, flags=re.M):
        name, negative = flag
        if name in ("--version", "--help") or not negative:
            continue
        assert negative == "--no-" + name[2:], flag


@pytest.mark.parametrize("words", COMMANDS + [["export"]], ids=lambda w: " ".join(w) or "aflite")
def test_usage_lines_and_field_options_read_alike(words):
    text = _help(words)
    usage = text.splitlines()[0]
    assert "{" not in usage and "}" not in usage, usage  # INPUT, not {INPUT}
    for name, value in re.findall(r"^  --([a-z-]+)(?: (\S+))?\s", text, flags=re.M):
        if name == "card-field":  # a field of the data set card, not a column of the input
            assert value == "KEY=VALUE", (name, value)
        elif name.endswith("-field") or name == "field":
            assert value.endswith("FIELD"), (name, value)  # [SET:]FIELD too
        elif name.endswith("-fields"):
            assert value == "FIELDS", (name, value)


def test_filter_help_shows_report_pair_and_value_names():
    text = _help(["filter"])
    assert re.search(r"^\s+--report / --no-report\s", text, flags=re.M), text
    assert re.search(r"^\s+--quiet / --no-quiet\s", text, flags=re.M)
    assert re.search(r"^\s+--out-dir DIR\s", text, flags=re.M)
    assert re.search(r"^\s+INPUT\s+JSON Lines", text, flags=re.M)
    # options other commands define without a value name get click's plain names
    assert re.search(r"^\s+--dev TEXT\s", _help(["experiment", "compare"]), flags=re.M)


@pytest.fixture
def captured_job(monkeypatch):
    jobs = []

    def capture(job, **kwargs):
        jobs.append((job, kwargs))
        raise DataError("stop here")

    monkeypatch.setattr(aflite.jobs, "run_filter_job", capture)
    for name in QUIET_ENV:
        monkeypatch.delenv(name, raising=False)
    return jobs


def test_report_flag_pair(tmp_path, captured_job):
    base = ["filter", "in.jsonl", "--out-dir", str(tmp_path / "o")]
    for extra, expected in (([], True), (["--no-report"], False), (["--report"], True)):
        CliRunner().invoke(app, base + extra)
        assert captured_job[-1][0].report is expected


def test_quiet_silences_third_party_bars(tmp_path, captured_job, monkeypatch):
    calls = []
    fake = types.ModuleType("datasets")
    fake.disable_progress_bars = lambda: calls.append("datasets")
    monkeypatch.setitem(sys.modules, "datasets", fake)
    monkeypatch.delitem(sys.modules, "sentence_transformers", raising=False)

    CliRunner().invoke(app, ["filter", "in.jsonl", "--out-dir", str(tmp_path / "o")])
    assert captured_job[-1][1]["progress"] is True
    assert not any(name in os.environ for name in QUIET_ENV) and calls == []

    CliRunner().invoke(app, ["filter", "in.jsonl", "--out-dir", str(tmp_path / "o"), "--quiet"])
    assert captured_job[-1][1]["progress"] is False
    assert all(os.environ[name] == "1" for name in QUIET_ENV)
    assert calls == ["datasets"]  # an imported library is told directly
    assert "sentence_transformers" not in sys.modules  # nothing imported to silence it


@pytest.mark.slow
def test_silenced_libraries_show_no_bars(tmp_path):
    pytest.importorskip("datasets")
    pytest.importorskip("transformers")
    code = (
        "from aflite._internal.progress import silence_third_party_progress as s\n"
        "s()\n"
        "import tqdm, datasets, transformers, huggingface_hub.utils as hub\n"
        "print(tqdm.tqdm(range(2)).disable, datasets.utils.are_progress_bars_disabled(),"
        " transformers.utils.logging.is_progress_bar_enabled(),"
        " hub.are_progress_bars_disabled())\n"
    )
    r = _python(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True", "False", "True"]


def _python(code, cwd):
    """Run ``code`` in a fresh interpreter on this checkout's aflite, with no quiet switches."""
    env = {k: v for k, v in os.environ.items() if k not in QUIET_ENV}
    env["PYTHONPATH"] = str(Path(aflite.__file__).parents[1])
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd
    )


HEAVY = ("torch", "sklearn", "matplotlib", "pandas", "datasets", "sentence_transformers",
         "scipy", "pyarrow", "tqdm")  # fmt: skip


@pytest.mark.parametrize("module", ["aflite", "aflite.cli.main"])
def test_start_up_imports_no_heavy_module(tmp_path, module):
    r = _python(
        f"import {module}, sys; print([m for m in {HEAVY!r} if m in sys.modules])", tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("package", ["aflite", "aflite.features", "aflite.audits",
                                     "aflite.experiments", "aflite.scoring"])  # fmt: skip
def test_every_public_name_imports(package):
    p = importlib.import_module(package)
    names = list(p.__all__) + (["filter"] if package == "aflite" else [])
    assert len(names) >= 8
    assert all(getattr(p, n) is not None for n in names)
    assert set(p.__all__) <= set(dir(p))
    namespace: dict = {}
    exec(f"from {package} import *", namespace)
    assert set(p.__all__) <= set(namespace)


def test_lazy_names_are_the_real_objects():
    from aflite import FilterResult
    from aflite import filter as aflite_filter
    from aflite.algorithm import FilterResult as real_result
    from aflite.algorithm import adversarial_filter

    assert FilterResult is real_result and aflite_filter.__code__ is adversarial_filter.__code__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        aflite.nope  # noqa: B018
    with pytest.raises(ImportError):
        from aflite import nope  # noqa: F401


def test_silencing_twice_is_harmless(monkeypatch):
    for name in QUIET_ENV:
        monkeypatch.delenv(name, raising=False)
    silence_third_party_progress()
    silence_third_party_progress()
    assert os.environ["TQDM_DISABLE"] == "1"
