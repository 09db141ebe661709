"""The command line's ``filter`` options are the job's fields, with the job's defaults: an
option is declared once, in :class:`aflite.jobs.FilterJob`, and the command line follows."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from typer.testing import CliRunner

from aflite.cli import filtering as cli_filter
from aflite.cli.app import app
from aflite.jobs import FilterJob

# option parsing runs beside files under the names the examples use
pytestmark = pytest.mark.usefixtures("placeholder_inputs")


CLI_ONLY = {"quiet", "ctx", "preset", "config_file"}  # how the command line runs, not what
# the job computes (--preset and --config only give the fields values)
RENAMED = {"input_path": "input"}


def _cli_fields() -> set[str]:
    names = set(inspect.signature(cli_filter.filter_cmd).parameters) - CLI_ONLY
    return {RENAMED.get(n, n) for n in names}


def test_every_job_field_is_a_filter_option_and_back():
    job_fields = {f.name for f in dataclasses.fields(FilterJob)}
    assert job_fields - _cli_fields() == set(), "job fields without a command-line option"
    assert _cli_fields() - job_fields == set(), "command-line options the job does not know"


def _captured_job(monkeypatch, *args: str) -> FilterJob:
    seen: list[FilterJob] = []

    def fake_run(job, **_):
        seen.append(job)
        raise SystemExit(0)

    import aflite.jobs

    monkeypatch.setattr(aflite.jobs, "run_filter_job", fake_run)
    result = CliRunner().invoke(app, ["filter", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


def test_the_command_lines_defaults_are_the_jobs(monkeypatch, tmp_path):
    monkeypatch.setenv("AFLITE_CACHE", str(tmp_path / "cache"))
    job = _captured_job(monkeypatch, "data.jsonl")
    assert job == FilterJob(input="data.jsonl")


@pytest.mark.parametrize(
    "option, value, field, expected",
    [
        ("--target-size", "0.3", "target_size", 0.3),
        ("--train-size", "200", "train_size", 200),
        ("--min-bias", "off", "min_bias", None),
        ("--balance", "classes", "balance", "classes"),
        ("--input-format", "csv", "input_format", "csv"),
        ("--backend", "ray", "backend", "ray"),
    ],
)
def test_an_option_reaches_its_job_field(monkeypatch, option, value, field, expected):
    job = _captured_job(monkeypatch, "data.jsonl", option, value)
    assert getattr(job, field) == expected
