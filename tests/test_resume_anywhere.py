"""``--resume`` knows the input by its content, not by how its path was typed: the same file as
``../wf/pairs.jsonl`` or by its absolute path continues the run. A folder holding another run
is refused in one line naming what differs, with advice that works when followed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_in_process

from aflite.data import bundled_snli
from aflite.jobs import FilterJob, run_filter_job

OPTS = ["--text-fields", "hypothesis", "--target-size", "0.5", "--slice-size", "0.02",
        "--min-bias", "off", "--threshold", "0.4", "--n-partitions", "16", "--quiet",
        "--no-report"]  # fmt: skip


@pytest.fixture
def wf(tmp_path, monkeypatch) -> Path:
    """A working folder ``wf/`` holding ``pairs.jsonl``, the command run from ``elsewhere/``."""
    (tmp_path / "wf").mkdir()
    (tmp_path / "elsewhere").mkdir()
    rows = bundled_snli().read_text().splitlines(keepends=True)[:400]
    (tmp_path / "wf" / "pairs.jsonl").write_text("".join(rows))
    monkeypatch.chdir(tmp_path / "elsewhere")
    return tmp_path / "wf"


def _cut(out: str, data: str = "../wf/pairs.jsonl", seed: int = 0) -> None:
    """A run of ``data`` into ``out`` killed after its first phase: its checkpoint left."""
    job = FilterJob(input=data, text=("hypothesis",), target_size=0.5, slice_size=0.02,
                    min_bias=None, threshold=0.4, n_partitions=16, seed=seed, out_dir=out,
                    report=False)  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(job, progress=False, log=lambda s: None, stop_after_phases=1)
    assert (Path(out) / ".checkpoint").is_dir()


def test_a_finished_run_resumes_by_any_path_to_the_same_file(wf):
    out = wf / "out"
    assert (
        run_in_process("filter", "../wf/pairs.jsonl", *OPTS, "--out-dir", "../wf/out").returncode
        == 0
    )
    for given in (str(wf / "pairs.jsonl"), "../wf/../wf/pairs.jsonl"):
        r = run_in_process("filter", given, *OPTS, "--out-dir", str(out), "--resume")
        assert (r.returncode, r.stdout) == (0, f"{out} already holds a finished run; nothing to "
                                               "resume\n"), r.stderr  # fmt: skip


def test_a_checkpoint_resumes_by_the_absolute_path_into_the_same_rows(wf):
    whole = wf / "whole"
    r = run_in_process("filter", str(wf / "pairs.jsonl"), *OPTS, "--out-dir", str(whole))
    assert r.returncode == 0, r.stderr
    _cut("../wf/cut")
    r = run_in_process("filter", str(wf / "pairs.jsonl"), *OPTS, "--out-dir", str(wf / "cut"),
                       "--resume")  # fmt: skip
    assert r.returncode == 0, r.stderr
    for name in ("kept.jsonl", "removed.jsonl"):
        assert (wf / "cut" / name).read_bytes() == (whole / name).read_bytes()


def test_another_runs_checkpoint_names_the_option_and_either_advice_works(wf):
    _cut("../wf/cut", seed=0)
    args = ["filter", str(wf / "pairs.jsonl"), *OPTS, "--out-dir", str(wf / "cut")]
    r = run_in_process(*args, "--resume", "--seed", "1")
    assert (r.returncode, r.stderr) == (2, (
        f"aflite: error: {wf / 'cut'}: holds the checkpoint of a run with --seed 0, not 1; run "
        "with --seed 0 to resume it, or pass --overwrite instead of --resume to start over\n"))  # fmt: skip
    shutil.copytree(wf / "cut", wf / "cut2")
    r = run_in_process(*args, "--resume", "--seed", "0")
    assert r.returncode == 0 and r.stdout.startswith("resuming from phase 1\nkept "), r.stderr
    r = run_in_process(*args[:-1], str(wf / "cut2"), "--overwrite", "--seed", "1")
    assert r.returncode == 0 and r.stdout.startswith("kept "), r.stderr


def test_a_checkpoint_of_other_rows_names_the_input_and_the_advice_works(wf):
    _cut("../wf/cut")
    other = wf / "other.jsonl"
    other.write_text("".join((wf / "pairs.jsonl").read_text().splitlines(keepends=True)[1:]))
    args = ["filter", str(other), *OPTS, "--out-dir", str(wf / "cut")]
    r = run_in_process(*args, "--resume")
    assert (r.returncode, r.stderr) == (2, (
        f"aflite: error: {wf / 'cut'}: holds the checkpoint of a run of another input (not the "
        f"rows {other} holds); pass --overwrite instead of --resume to start over\n"))  # fmt: skip
    r = run_in_process(*args, "--overwrite")
    assert r.returncode == 0 and r.stdout.startswith("kept "), r.stderr


def test_a_damaged_checkpoint_s_advice_works_when_followed(wf):
    _cut("../wf/cut")
    (wf / "cut" / ".checkpoint" / "manifest.json").write_text("{")
    args = ["filter", "../wf/pairs.jsonl", *OPTS, "--out-dir", "../wf/cut"]
    r = run_in_process(*args, "--resume")
    assert r.returncode == 2 and r.stderr.endswith(
        "damaged checkpoint manifest; pass --overwrite instead of --resume to start over\n"
    )
    r = run_in_process(*args, "--overwrite")
    assert r.returncode == 0 and r.stdout.startswith("kept "), r.stderr
