"""A run's output folder, from the first check to the last output: one object a job talks to.

Its life, in order: checked before any work (:meth:`RunFolder.open`: not another run's while
it writes, an earlier run refused unless replaced with ``--overwrite`` or continued with
``--resume``, the input's stamp taken); for ``--resume``, the finished run or the checkpoint
it holds; locked while the run works (:meth:`~RunFolder.lock`); the earlier run's outputs
removed once the new run is sure to write its own (:meth:`~RunFolder.replace_earlier`); the
input checked unchanged before anything is written (:meth:`~RunFolder.check_input`); the
outputs written into a staging folder and moved in as a set, ``summary.json`` last
(:meth:`~RunFolder.publish`). The pieces live in :mod:`~aflite.jobs.out_dir` (what counts
as a run's outputs, publishing) and :mod:`~aflite.jobs.guards` (the lock, the input stamp).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from aflite._internal.atomic import clean_stale_parts
from aflite.io.checkpoint import Checkpoint
from aflite.jobs import guards, out_dir

__all__ = ["RunFolder"]

T = TypeVar("T")


class RunFolder:
    """An output folder (``path``) and what a run found in it when it was checked."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # an earlier run's outputs that --overwrite replaces (once the run is sure to start)
        self.earlier: list[Path] = []
        self._input: str | None = None
        self._stamp: list = []

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        overwrite: bool,
        resume: bool,
        data: str | None = None,
        others: Sequence[str | Path] = (),
    ) -> RunFolder:
        """Check the folder before any work, and stamp the input file ``data``; ``others`` are
        further files
        the run reads (review files, scores), never removed with an earlier run. A folder
        another run is writing, or holding a run and neither ``overwrite`` nor ``resume``, is
        a one-line DataError."""
        folder = cls(path)
        given = tuple(p for p in (data, *others) if p)
        folder.earlier = out_dir.check_out_dir(
            path, overwrite=overwrite, resume=resume, inputs=given
        )
        if data is not None:
            folder._input, folder._stamp = data, guards.input_stamp(data)
        return folder

    def finished(self) -> dict | None:
        """The ``summary.json`` of a finished run here, or None."""
        return out_dir.finished_run(self.path)

    def checkpoint(
        self, key: dict[str, Any], upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> Checkpoint:
        """The run's checkpoint, resumable only by a run with the same ``key`` (a stored key
        read through ``upgrade``, which names an earlier version's options as this one does)."""
        return Checkpoint(self.path / ".checkpoint", key, upgrade)

    @contextlib.contextmanager
    def lock(self) -> Iterator[RunFolder]:
        """Hold the folder's lock for the ``with`` block (the folder is made if missing, and
        removed again if it is empty at the end)."""
        with guards.out_dir_lock(self.path):
            yield self

    def replace_earlier(self) -> None:
        """Remove the earlier run's outputs (``--overwrite``), once the new run will write."""
        out_dir.remove_previous_run(self.earlier)
        self.earlier = []

    def check_input(self) -> None:
        """A DataError if the input changed since :meth:`open` stamped it."""
        if self._input is not None:
            guards.check_input_unchanged(self._input, self._stamp)

    def publish(self, write: Callable[[Path], T]) -> T:
        """``write(stage)`` writes every output into a staging folder; they are then moved in
        as a set, ``summary.json`` last. A failure on the way leaves none of them."""
        out = self.path
        out.mkdir(parents=True, exist_ok=True)
        clean_stale_parts(out, recursive=False)  # left by an earlier, killed run
        stage = out / out_dir.STAGING
        shutil.rmtree(stage, ignore_errors=True)  # an earlier, killed run's unfinished set
        stage.mkdir()
        try:
            written = write(stage)
            out_dir.publish(stage, out)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        return written
