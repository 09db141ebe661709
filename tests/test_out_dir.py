"""An output folder holding an earlier run: refused before any work, replaced with
--overwrite (only that run's files), continued with --resume."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import aflite.jobs
import aflite.jobs.filter_job
from aflite.cli.main import app
from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.jobs.out_dir import check_out_dir, previous_run


@pytest.fixture(scope="module")
def snli_300(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "snli.jsonl"
    path.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:300]))
    return path


def _args(src, out, *extra):
    return [
        "filter", str(src), "--text-fields", "hypothesis", "--id-field", "id",
        "--target-size", "250", "--n-partitions", "8", "--out-dir", str(out), "--quiet",
        "--no-report", *extra,
    ]  # fmt: skip


def _invoke(args):
    r = CliRunner().invoke(app, args)
    return r.exit_code, r.output, r.exception


def _no_work(monkeypatch):
    def read(*a, **k):
        raise AssertionError("the input was read before the output folder was checked")

    monkeypatch.setattr(aflite.jobs.filter_job, "prepare", read)


@pytest.mark.parametrize(
    "leftover",
    ["summary.json", ".checkpoint/", "kept.csv", "removed.jsonl", "scores.parquet", "kept/",
     "warmup.npz", ".kept.jsonl.a1b2c3.part"],
)  # fmt: skip
def test_earlier_run_is_refused_before_any_work(tmp_path, monkeypatch, snli_300, leftover):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    if leftover.endswith("/"):
        (out / leftover).mkdir()
    else:
        (out / leftover).write_text("old")
    _no_work(monkeypatch)
    code, _, exc = _invoke(_args(snli_300, out))
    assert code == 1 and isinstance(exc, DataError)
    msg = str(exc)
    assert "\n" not in msg and msg.startswith(f"{out}: holds a previous run")
    assert "--overwrite" in msg and "--resume" in msg and leftover.strip("/") in msg
    assert sorted(p.name for p in out.iterdir()) == sorted(["notes.txt", leftover.strip("/")])


def test_refusal_through_main_is_one_line_exit_2(tmp_path, monkeypatch, capsys, snli_300):
    import sys

    from aflite.cli.main import main

    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")
    monkeypatch.setattr(sys, "argv", ["aflite", *_args(snli_300, out)])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert (
        err == f"aflite: error: {out}: holds a previous run (summary.json); pass --overwrite "
        "to replace it or --resume to continue it\n"
    )


def test_unrelated_files_are_not_a_previous_run(tmp_path):
    for name in ("notes.txt", "kept_notes.txt", "removed-by-hand.csv", "data.jsonl"):
        (tmp_path / name).write_text("x")
    (tmp_path / "plots").mkdir()
    assert previous_run(tmp_path) == []
    assert previous_run(tmp_path / "missing") == []
    assert check_out_dir(tmp_path, overwrite=False, resume=False) == []


def test_overwrite_removes_only_the_earlier_runs_files(tmp_path, snli_300):
    out = tmp_path / "out"
    out.mkdir()
    # an earlier run on a CSV file, with a report and a left-over checkpoint
    for name in ("kept.csv", "removed.csv", "scores.parquet", "report.html", "extra.bin",
                 "export-label-studio-removed.json", "export-csv-all.csv"):  # fmt: skip
        (out / name).write_text("old")
    (out / "summary.json").write_text(json.dumps({"outputs": {"x": "extra.bin"}}))
    (out / ".checkpoint").mkdir()
    (out / ".checkpoint" / "manifest.json").write_text("{}")
    (out / "result").mkdir()
    for name in ("notes.txt", "kept_notes.txt", "export-notes.txt"):
        (out / name).write_text("mine")

    code, output, exc = _invoke(_args(snli_300, out, "--overwrite"))
    assert code == 0, (output, exc)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        ["kept.jsonl", "removed.jsonl", "scores.parquet", "card.md", "summary.json", "result",
         "notes.txt", "kept_notes.txt", "export-notes.txt"]
    )  # fmt: skip
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "summary.json").read_text())["counts"]["input"] == 300

    # the finished run is itself refused next time
    code, _, exc = _invoke(_args(snli_300, out))
    assert code == 1 and "holds a previous run" in str(exc)


def test_overwrite_refuses_an_input_among_the_outputs(tmp_path, monkeypatch, snli_300):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.jsonl").write_text(snli_300.read_text())
    _no_work(monkeypatch)
    code, _, exc = _invoke(_args(out / "kept.jsonl", out, "--overwrite"))
    assert code == 1 and isinstance(exc, DataError)
    assert "the input is an output of the run in" in str(exc)
    assert (out / "kept.jsonl").read_text() == snli_300.read_text()


def test_overwrite_refuses_an_id_file_among_the_outputs(tmp_path, monkeypatch, snli_300):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")
    ids = out / "export-csv-removed.csv"  # an export, edited into a reviewer's decisions
    ids.write_text("id\n")
    _no_work(monkeypatch)
    code, _, exc = _invoke(_args(snli_300, out, "--overwrite", "--drop-ids", str(ids)))
    assert code == 1 and "the input is an output of the run in" in str(exc)
    assert ids.read_text() == "id\n"


def test_overwrite_and_resume_together_are_refused(tmp_path):
    with pytest.raises(DataError, match="--overwrite and --resume"):
        check_out_dir(tmp_path, overwrite=True, resume=True)


def test_resume_accepts_an_earlier_run(tmp_path):
    (tmp_path / ".checkpoint").mkdir()
    assert check_out_dir(tmp_path, overwrite=False, resume=True) == []


def test_summary_cannot_point_outside_the_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "precious.txt").write_text("x")
    (out / "summary.json").write_text(json.dumps({"outputs": {"a": "../precious.txt"}}))
    assert previous_run(out) == [out / "summary.json"]


@pytest.mark.parametrize("earlier, replaced", [("bundled", True), ("other", False)])
def test_demo_replaces_only_an_earlier_demo(tmp_path, monkeypatch, earlier, replaced):
    jobs = []

    def capture(job, **k):
        jobs.append(job)
        raise DataError("stop here")

    monkeypatch.setattr(aflite.jobs, "run_filter_job", capture)
    out = tmp_path / "demo"
    out.mkdir()
    source = str(bundled_snli()) if earlier == "bundled" else str(tmp_path / "mine.jsonl")
    (out / "summary.json").write_text(json.dumps({"input": source}))
    _invoke(["demo", "--out-dir", str(out), "--quiet"])
    assert jobs[0].overwrite is replaced
