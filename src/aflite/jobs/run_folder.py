"""A run's output folder, from the first check to the last output: one object a job talks to.

Its life, in order: held by one run from before any work to the last output, and checked
(:meth:`RunFolder.open`: not another run's, an earlier run refused unless replaced with
``--overwrite`` or continued with ``--resume``, the input's stamp taken); once the run's key
is known, where it starts (:meth:`~RunFolder.start`: for ``--resume``, the finished run the
folder holds, else the run's checkpoint, either refused when it is another run's); the outputs written into a staging folder and moved in as a
set, ``summary.json`` last, once the input is checked unchanged, the earlier run's other
outputs going with them (:meth:`~RunFolder.publish`). The pieces live in :mod:`~aflite.jobs.out_dir`
(what counts as a run's outputs, publishing) and :mod:`~aflite.jobs.guards` (the lock, the
input stamp).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aflite._internal.atomic import clean_stale_parts
from aflite.config.files import RunKey
from aflite.io.checkpoint import Checkpoint
from aflite.jobs import guards, out_dir

__all__ = ["RunFolder", "Start"]

T = TypeVar("T")

CHECKPOINT = ".checkpoint"


@dataclass(frozen=True)
class Start:
    """Where a run starts in its folder: the ``summary.json`` of the finished run that
    ``--resume`` found there (``finished``: nothing is left to compute), or else the run's
    ``checkpoint``, to continue with ``--resume`` or to start afresh."""

    finished: dict | None = None
    checkpoint: Checkpoint | None = None


class RunFolder:
    """An output folder (``path``) and what a run found in it when it was checked."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # an earlier run's outputs that --overwrite replaces (when the new ones are published)
        self.earlier: list[Path] = []
        self._input: str | None = None
        self._stamp: list = []
        self._checkpointing = False

    @classmethod
    @contextlib.contextmanager
    def open(
        cls,
        path: str | Path,
        *,
        overwrite: bool,
        resume: bool,
        data: str | None = None,
        others: Sequence[str | Path] = (),
    ) -> Iterator[RunFolder]:
        """Hold the folder for the ``with`` block, checked before any work, and stamp the
        input file ``data``; ``others`` are further files the run reads (review files,
        scores), never removed with an earlier run. A folder another run holds, or holding a
        run and neither ``overwrite`` nor ``resume``, is a one-line DataError. The folder is
        made if missing, and removed again if it is empty at the end."""
        folder = cls(path)
        with guards.out_dir_lock(path):
            if data is not None:
                folder._input, folder._stamp = data, guards.input_stamp(data)
            given = tuple(p for p in (data, *others) if p)
            folder.earlier = out_dir.check_out_dir(
                path, overwrite=overwrite, resume=resume, inputs=given
            )
            yield folder

    @property
    def finished(self) -> dict | None:
        """The ``summary.json`` of a finished run here, or None."""
        return out_dir.finished_run(self.path)

    def checkpoint(
        self, key: dict[str, Any], upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> Checkpoint:
        """The run's checkpoint, resumable only by a run with the same ``key`` (a stored key
        read through ``upgrade``, which names an earlier version's options as this one does);
        it outlives the earlier run's outputs the new ones replace."""
        self._checkpointing = True
        return Checkpoint(self.path / CHECKPOINT, key, upgrade)

    def start(self, key: RunKey, *, resume: bool) -> Start:
        """Where the run of ``key`` starts: with ``resume``, the finished run here, else its
        checkpoint (resumable only by a run with the same key); a finished run or a checkpoint
        of another run is a one-line DataError, before the checkpoint is read."""
        finished = self.finished if resume else None
        ckpt = None if finished is not None else self.checkpoint(key.identity, key.upgrade)
        if resume:
            stored = None if ckpt is None else ckpt.stored_identity()
            key.refuse_other(finished, stored, None if ckpt is None else ckpt.identity)
        return Start(finished, ckpt)

    def check_input(self) -> None:
        """An :class:`~aflite.jobs.guards.InputChanged` error if the input changed since
        :meth:`open` stamped it."""
        if self._input is not None:
            guards.check_input_unchanged(self._input, self._stamp)

    def publish(self, write: Callable[[Path], T]) -> T:
        """Once the input is checked unchanged, ``write(stage)`` writes every output into a
        staging folder; they are then moved in as a set, ``summary.json`` last, and the
        earlier run's outputs they do not replace are removed before it. A failure on the way
        leaves none of them."""
        self.check_input()
        out = self.path
        out.mkdir(parents=True, exist_ok=True)
        clean_stale_parts(out, recursive=False)  # left by an earlier, killed run
        stage = out / out_dir.STAGING
        shutil.rmtree(stage, ignore_errors=True)  # an earlier, killed run's unfinished set
        stage.mkdir()
        # the run's own checkpoint goes after the outputs are in, not with the earlier run
        keep = {out_dir.STAGING} | ({CHECKPOINT} if self._checkpointing else set())
        try:
            written = write(stage)
            out_dir.publish(stage, out, replaces=[p for p in self.earlier if p.name not in keep])
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        self.earlier = []
        return written
