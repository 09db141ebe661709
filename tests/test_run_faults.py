"""A run's outputs appear whole or not at all: every check that can fail runs before the
output folder is written, faults of the file system name what happened and where, the outputs
are published as a set, and a second run into the same folder or an input that changes under
a run are refused in one line."""

from __future__ import annotations

import errno
import json
import os
import sys

import numpy as np
import pytest
from conftest import run_in_process

import aflite.jobs.filter_job
from aflite.data import bundled_snli
from aflite.errors import MissingExtraError
from aflite.jobs.guards import LOCK_NAME, out_dir_lock


@pytest.fixture(scope="module")
def snli_150(tmp_path_factory):
    d = tmp_path_factory.mktemp("snli")
    src = d / "snli.jsonl"
    src.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:150]))
    np.save(d / "bools.npy", np.zeros((150, 4), dtype=bool))
    np.save(d / "empty.npy", np.zeros((150, 0), dtype=np.float32))
    np.save(d / "ok.npy", np.random.default_rng(0).normal(size=(150, 4)).astype(np.float32))
    return src


def _args(src, out, *extra):
    return [
        "filter", str(src), "--text-fields", "hypothesis", "--target-size", "0.9",
        "--n-partitions", "8", "--out-dir", str(out), "--quiet", "--no-report", *extra,
    ]  # fmt: skip


def _one_line(r, code, *fragments):
    assert r.returncode == code, r.stdout + r.stderr
    assert r.stderr.startswith("aflite: error: ") and r.stderr.count("\n") == 1, r.stderr
    for f in fragments:
        assert f in r.stderr, r.stderr


LATE = [
    (
        ["--features", "precomputed:{d}/bools.npy"],
        "bools.npy: features must be numbers, got dtype bool",
    ),
    (
        ["--features", "precomputed:{d}/empty.npy"],
        "empty.npy: features must be non-empty, got shape (150, 0)",
    ),
    (["--seed", "18446744073709551616"], "--seed: must be a whole number in [0, 4294967295]"),
    (["--seed", "4294967296", "--audits", "pmi"], "--seed: must be a whole number"),
    (["--target-size", "150"], "--target-size: 150 is not smaller than the 150 rows"),
    (["--train-size", "140"], "--train-size: 140 must be smaller than --target-size"),
    (["--threshold", "1.5"], "--threshold: must be in [0, 1], got 1.5"),
    (["--min-bias", "-1"], "--min-bias"),
    (["--strategy", "slicin"], "--strategy: unknown value 'slicin'"),
    (["--warmup-fraction", "1"], "--warmup-fraction: must be in (0, 1)"),
    (["--warmup-finetune"], "--warmup-finetune: needs --features sentence-transformers"),
    (["--n-partitions", "0"], "--n-partitions: must be a positive whole number"),
    (["--balance", "labels"], "--balance"),
    (["--audits", "nope"], "--audits: unknown audit 'nope'"),
    (["--model", "nope"], "--model: unknown model family 'nope'"),
    (["--features", "ngrams:hash=65536"], "--features"),
    (["--features", "precomputed:{d}/missing.npy"], "missing.npy: no such feature file"),
    (["--label-field", "nope"], "nope"),
    (["--group-field", "nope"], "nope"),
    (["--by", "nope"], "--by"),
    (["--ray-address", "auto"], "--ray-address: needs --backend ray"),
]


@pytest.mark.parametrize("existing", [False, True], ids=["new-dir", "empty-dir"])
@pytest.mark.parametrize("extra, message", LATE)
def test_a_failing_check_leaves_the_out_dir_as_it_was(tmp_path, snli_150, extra, message, existing):
    out = tmp_path / "out"
    if existing:
        out.mkdir()
    r = run_in_process(*_args(snli_150, out, *[a.format(d=snli_150.parent) for a in extra]))
    _one_line(r, 2, message)
    if existing:
        assert list(out.iterdir()) == []
    else:
        assert not out.exists()


@pytest.mark.parametrize(
    "error",
    [
        ValueError("features contain NaN or inf (first at row 3)"),
        MissingExtraError("install aflite[ray] to use --backend ray"),
    ],
)
def test_a_user_mistake_found_during_the_run_leaves_no_checkpoint(
    tmp_path, snli_150, monkeypatch, error
):
    def refuse(*a, **k):
        raise error

    monkeypatch.setattr(aflite.jobs.filter_job, "filter_rows", refuse)
    out = tmp_path / "out"
    r = run_in_process(*_args(snli_150, out))
    _one_line(r, 2, str(error))
    assert not out.exists()


def test_an_error_after_a_phase_keeps_the_checkpoint_for_resume(tmp_path, snli_150, monkeypatch):
    real = aflite.jobs.filter_job.filter_rows

    def fail_after_a_phase(run, plan, phi, *, checkpoint, **kw):
        def save_then_fail(state):
            checkpoint(state)
            raise ValueError("a fault after the first phase")

        return real(run, plan, phi, checkpoint=save_then_fail, **kw)

    monkeypatch.setattr(aflite.jobs.filter_job, "filter_rows", fail_after_a_phase)
    out = tmp_path / "out"
    r = run_in_process(*_args(snli_150, out))
    _one_line(r, 2, "a fault after the first phase")
    assert (out / ".checkpoint" / "manifest.json").is_file()


# --- the file system -------------------------------------------------------------------------


def _fail_on(monkeypatch, name, exc):
    """Make the atomic write of the output called ``name`` fail with ``exc``."""
    from aflite._internal import atomic

    real = atomic._finish

    def finish(tmp, target):
        if target.name == name:
            raise exc
        real(tmp, target)

    monkeypatch.setattr(atomic, "_finish", finish)


@pytest.mark.parametrize(
    "name", ["removed.jsonl", "scores.parquet", "report_extra.json", "summary.json"]
)
def test_a_full_disk_while_writing_outputs_leaves_none_of_them(
    tmp_path, snli_150, monkeypatch, name
):
    out = tmp_path / "out"
    _fail_on(monkeypatch, name, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    r = run_in_process(*_args(snli_150, out))
    where = out / "result" / name if name == "report_extra.json" else out / name
    _one_line(r, 1, f"no space left on device writing {where}")
    left = sorted(p.name for p in out.iterdir())
    assert left == [".checkpoint"], left  # the checkpoint stays for --resume, nothing else


def test_a_library_wrapped_full_disk_is_said_plainly(tmp_path, snli_150, monkeypatch):
    # pyarrow's words for a full disk (seen on a 2,340 KiB tmpfs)
    out = tmp_path / "out"
    wrapped = OSError("error writing bytes to file. Detail: [errno 28] No space left on device")
    _fail_on(monkeypatch, "scores.parquet", wrapped)
    r = run_in_process(*_args(snli_150, out))
    _one_line(r, 1, f"aflite: error: no space left on device writing {out / 'scores.parquet'}\n")
    assert sorted(p.name for p in out.iterdir()) == [".checkpoint"]


def test_a_short_write_is_named_as_a_full_disk(tmp_path, snli_150, monkeypatch):
    # numpy reports a full disk as '162000 requested and 16352 written', without an errno
    out = tmp_path / "out"
    _fail_on(monkeypatch, "features.npy", OSError("162000 requested and 16352 written"))
    r = run_in_process(*_args(snli_150, out))
    _one_line(r, 1, f"no space left on device writing {out / '.checkpoint' / 'features.npy'}")
    assert not out.exists()  # nothing half-made is left to be taken for an earlier run


def test_a_kill_while_publishing_leaves_no_summary_and_resume_finishes(
    tmp_path, snli_150, monkeypatch
):
    from aflite.jobs import out_dir

    out = tmp_path / "out"
    real = out_dir._move
    moved = []

    def move(src, dst):
        if len(moved) == 2:
            raise KeyboardInterrupt  # a kill after two outputs were moved in
        moved.append(dst)
        real(src, dst)

    monkeypatch.setattr(out_dir, "_move", move)
    r = run_in_process(*_args(snli_150, out))
    assert r.returncode == 130, r.stderr
    names = {p.name for p in out.iterdir()}
    assert "summary.json" not in names and ".checkpoint" in names and len(moved) == 2

    # not mistaken for a finished run: refused without --resume or --overwrite
    monkeypatch.setattr(out_dir, "_move", real)
    r = run_in_process(*_args(snli_150, out))
    _one_line(r, 2, "holds a previous run", "--resume")
    r = run_in_process(*_args(snli_150, out, "--resume"))
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "card.md", "kept.jsonl", "removed.jsonl", "result", "scores.parquet", "summary.json"
    ]  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    kept = (out / "kept.jsonl").read_text().splitlines()
    removed = (out / "removed.jsonl").read_text().splitlines()
    assert summary["counts"]["kept"] == len(kept) and len(kept) + len(removed) == 150


# --- other processes -------------------------------------------------------------------------


def test_a_second_run_into_a_locked_out_dir_is_refused(tmp_path, snli_150):
    out = tmp_path / "out"
    with out_dir_lock(out) as lock:
        assert lock.read_text().strip() == str(os.getpid())
        r = run_in_process(*_args(snli_150, out))
        _one_line(r, 2, f"{out}: another aflite run (pid {os.getpid()}) is writing here")
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]
    assert not out.exists()  # created by the lock, empty, removed with it


def test_a_run_in_progress_is_not_taken_for_an_earlier_one(tmp_path, snli_150):
    out = tmp_path / "out"
    with out_dir_lock(out):
        (out / ".checkpoint").mkdir()  # what a run in progress has written so far
        for extra in ([], ["--overwrite"], ["--resume"]):
            r = run_in_process(*_args(snli_150, out, *extra))
            _one_line(r, 2, f"{out}: another aflite run (pid {os.getpid()}) is writing here")
        assert sorted(p.name for p in out.iterdir()) == sorted([".checkpoint", LOCK_NAME])


def test_a_lock_left_by_a_dead_run_is_taken_over(tmp_path, snli_150):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("999999999\n")  # no such process holds it
    r = run_in_process(*_args(snli_150, out))
    assert r.returncode == 0, r.stderr
    assert not (out / LOCK_NAME).exists() and (out / "summary.json").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_the_lock_is_held_by_another_process(tmp_path):
    out = tmp_path / "out"
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child holds the lock until told to let go
        try:
            with out_dir_lock(out):
                os.write(ready_w, b"x")
                os.read(done_r, 1)
        finally:
            os._exit(0)
    os.read(ready_r, 1)
    try:
        from aflite.errors import DataError

        with pytest.raises(DataError, match=f"another aflite run \\(pid {pid}\\)"):
            with out_dir_lock(out):
                pass
    finally:
        os.write(done_w, b"x")
        os.waitpid(pid, 0)
    with out_dir_lock(out):  # released with the child
        pass


def test_an_input_that_changes_during_the_run_is_noticed(tmp_path, snli_150, monkeypatch):
    src = tmp_path / "in.jsonl"
    src.write_text(snli_150.read_text())
    real = aflite.jobs.filter_job.filter_rows

    def filter_then_edit(*a, **k):
        result = real(*a, **k)
        with src.open("a") as fh:  # another process appends while the run filters
            fh.write(src.read_text().splitlines(keepends=True)[0])
        return result

    monkeypatch.setattr(aflite.jobs.filter_job, "filter_rows", filter_then_edit)
    out = tmp_path / "out"
    r = run_in_process(*_args(src, out))
    _one_line(r, 2, f"{src}: the input changed while the run was using it")
    assert not out.exists()
