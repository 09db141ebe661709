"""A run killed at any write -- just before or just after each rename, and between removals --
and then resumed ends in the same outputs as a run that was never interrupted.

The kill is simulated in-process: an exception that no code catches is raised at the injection
point, so nothing after it runs, as with SIGKILL (every write is a write-then-rename, so what
is on disk at that moment is what a kill would leave). The real-signal versions are in
tests/test_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aflite._internal import atomic
from aflite.data import bundled_snli
from aflite.io import checkpoint
from aflite.jobs import FilterJob, run_filter_job

OUTPUTS = ("kept.jsonl", "removed.jsonl", "scores.parquet")


class Killed(BaseException):
    """Not an Exception: nothing in aflite may catch it, as nothing can catch SIGKILL."""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rows = [json.loads(line) for line in Path(bundled_snli()).read_text().splitlines()[:240]]
    path = tmp_path_factory.mktemp("in") / "snli.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _job(data: Path, out: Path, cache: Path, resume: bool = False) -> FilterJob:
    return FilterJob(
        input=str(data),
        text=["hypothesis"],
        target_size=180,
        train_size=80,
        slice_size=20,
        threshold=0.5,
        min_bias=None,
        n_partitions=8,
        seed=3,
        out_dir=str(out),
        cache_dir=str(cache),
        report=False,
        resume=resume,
    )


def _inject(monkeypatch, *, at: int | None, when: str) -> list[str]:
    """Count writes and removals; raise Killed at the ``at``-th one (1-based)."""
    seen: list[str] = []
    finish, remove = atomic._finish, checkpoint._remove

    def step(name: str, action, before: bool) -> None:
        seen.append(name)
        hit = at is not None and len(seen) == at
        if hit and before:
            raise Killed(name)
        action()
        if hit:
            raise Killed(name)

    monkeypatch.setattr(
        atomic,
        "_finish",
        lambda tmp, target: step(target.name, lambda: finish(tmp, target), when == "before"),
    )
    monkeypatch.setattr(
        checkpoint,
        "_remove",
        lambda path: step("rm " + path.name, lambda: remove(path), when == "before"),
    )
    return seen


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory):
    base = tmp_path_factory.mktemp("ref")
    mp = pytest.MonkeyPatch()
    seen = _inject(mp, at=None, when="after")
    try:
        run_filter_job(_job(data, base / "out", base / "cache"), progress=False, log=lambda _: None)
    finally:
        mp.undo()
    return base / "out", list(seen)


def test_the_reference_run_writes_and_removes_checkpoint_files(reference):
    _, seen = reference
    assert "features.npy" in seen and "manifest.json" in seen and "summary.json" in seen
    assert sum(n.startswith("state-") and n.endswith(".npz") for n in seen) >= 2  # several phases
    assert any(n.startswith("rm ") for n in seen)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before", "after"])
def test_killed_at_every_write_then_resumed_gives_the_same_outputs(
    data, reference, tmp_path, monkeypatch, when
):
    ref_out, seen = reference
    for at in range(1, len(seen) + 1):
        run = tmp_path / f"{when}-{at}"
        _inject(monkeypatch, at=at, when=when)
        with pytest.raises(Killed):
            run_filter_job(
                _job(data, run / "out", run / "cache"), progress=False, log=lambda _: None
            )
        monkeypatch.undo()
        run_filter_job(
            _job(data, run / "out", run / "cache", resume=True), progress=False, log=lambda _: None
        )
        for name in OUTPUTS:
            same = (ref_out / name).read_bytes() == (run / "out" / name).read_bytes()
            assert same, f"{name} differs after a kill {when} write {at} ({seen[at - 1]})"
        assert not (run / "out" / ".checkpoint").exists()
        assert not list((run / "out").glob(".*.part")), (
            f"leftover part after kill at {seen[at - 1]}"
        )
