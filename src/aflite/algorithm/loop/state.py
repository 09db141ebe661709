"""The state of a filtering run between phases: what a checkpoint holds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aflite.algorithm.loop.result import PhaseRecord

__all__ = ["FilterState"]


@dataclass
class FilterState:
    """Everything needed to continue a run after a phase: a checkpoint.

    Positions are input row indices. ``generator_state`` is the torch generator's state, so a
    resumed run draws exactly the partitions an uninterrupted run would have drawn;
    ``storage_phase`` says which phase's set the compacted storage was last built from, so a
    resumed run lays out (and sums) rows the same way; ``blocks_state`` and ``blocks_phase``
    are the generator's state before the dealing of the blocks a model keeps from phase to
    phase, and the phase that dealt them, so a resumed run keeps the same blocks. ``last_scores`` holds the last phase's
    scores of ``rows`` when that phase removed nothing: they measured the kept set as it is,
    so the run's final figure is that phase's (the stop line and the summary agree).
    """

    rows: np.ndarray
    removed: list[int] = field(default_factory=list)
    removed_phase: list[int] = field(default_factory=list)
    removed_score: list[float] = field(default_factory=list)
    # the standard error of each removed row's score, and of each current row's score in
    # the last phase it survived (aligned with ``rows``; NaN before its first phase)
    removed_se: list[float] = field(default_factory=list)
    survived_score: np.ndarray | None = field(default=None, repr=False, compare=False)
    survived_se: np.ndarray | None = field(default=None, repr=False, compare=False)
    history: list[PhaseRecord] = field(default_factory=list)
    generator_state: np.ndarray | None = None
    storage_phase: int | None = None
    blocks_state: np.ndarray | None = None
    blocks_phase: int | None = None
    stop_reason: str | None = None
    stop_message: str | None = None
    # the last phase's per-row scores, aligned with ``rows``, when that phase removed nothing
    # (kept in checkpoints, so a resumed run prints the same final figure)
    last_scores: np.ndarray | None = field(default=None, repr=False, compare=False)

    def rows_at_phase(self, phase: int) -> np.ndarray:
        """The (sorted) set as it was at the start of ``phase``."""
        removed = np.asarray(self.removed, dtype=np.int64)
        later = removed[np.asarray(self.removed_phase, dtype=np.int64) >= phase]
        return np.sort(np.concatenate([self.rows, later]))
