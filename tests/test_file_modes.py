"""Outputs get the mode a plain ``open`` gives (0o666 less the umask), not mkstemp's 0o600."""

from __future__ import annotations

import builtins
import contextlib
import os
import stat

import pytest

from aflite._internal import atomic
from aflite._internal.atomic import atomic_path, current_umask
from aflite.data import bundled_snli
from aflite.jobs import FilterJob, run_filter_job


@contextlib.contextmanager
def umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_file_follows_umask(tmp_path, mask, expected):
    with umask(mask):
        assert current_umask() == mask
        with atomic_path(tmp_path / "a.txt") as tmp:
            tmp.write_text("x")
        # a plain open under the same umask, for comparison
        (tmp_path / "b.txt").write_text("x")
    assert _mode(tmp_path / "a.txt") == expected == _mode(tmp_path / "b.txt")


def test_umask_without_proc(tmp_path, monkeypatch):
    real_open = builtins.open

    def no_proc(path, *a, **k):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return real_open(path, *a, **k)

    monkeypatch.setattr(atomic, "open", no_proc, raising=False)
    with umask(0o027):
        assert current_umask() == 0o027
        with atomic_path(tmp_path / "a.txt") as tmp:
            tmp.write_text("x")
        assert current_umask() == 0o027  # read back, not changed
    assert _mode(tmp_path / "a.txt") == 0o640


def test_run_outputs_are_readable_by_others_under_umask_022(tmp_path):
    src = tmp_path / "snli.jsonl"
    src.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:300]))
    out = tmp_path / "out"
    job = FilterJob(
        input=str(src), text=["hypothesis"], target_size=250, n_partitions=8,
        out_dir=str(out), cache_dir=None, report=False,
    )  # fmt: skip
    with umask(0o022):
        run_filter_job(job, progress=False)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {
        "kept.jsonl",
        "removed.jsonl",
        "scores.parquet",
        "summary.json",
        "result.json",
        "result.npz",
    }
    assert {p.name: _mode(p) for p in files} == {p.name: 0o644 for p in files}
