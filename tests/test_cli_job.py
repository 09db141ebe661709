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


def test_the_names_the_filter_pipeline_replaced_still_work_and_warn(tmp_path):
    import json

    import aflite.jobs
    from aflite.api.pipeline import FilterPlan
    from aflite.data import bundled_snli

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:60]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(input=str(src), text=["hypothesis"], target_size=0.8)
    with pytest.warns(DeprecationWarning, match="load_job_inputs is deprecated"):
        inputs = aflite.jobs.load_job_inputs(job)
    with pytest.warns(DeprecationWarning, match="plan_job"):
        plan = aflite.jobs.plan_job(job, inputs)
    assert isinstance(plan, FilterPlan) and plan.target == 48
    with pytest.warns(DeprecationWarning, match="JobPlan"):
        assert aflite.jobs.JobPlan is FilterPlan
    with pytest.warns(DeprecationWarning):
        phi = aflite.jobs.compute_representation(
            job, None, inputs, plan.warm_rows, plan.rest, progress=False
        )
    assert phi.shape[0] == 60
