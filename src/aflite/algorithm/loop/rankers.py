"""Rankers: what the filtering loop asks, each phase, for the scores of the current rows and
the rows to remove.

The loop (:func:`aflite.algorithm.loop.run.run_phases`) owns sizes, stops, records and messages;
a ranker owns only how rows are scored and ordered:

- :class:`EnsembleRanker`: AFLITE. Every phase trains a fresh ensemble on random partitions of
  the current rows and removes the most predictable (the strategies of Le Bras et al.).
- :class:`ScoreRanker`: any per-example score (higher is easier, or lower with
  ``lower_is_easier``), computed once and read down slice by slice, or re-computed every phase
  on the rows that are left when the score is given as a function of the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from aflite.algorithm.loop.phases import PhaseRunner
from aflite.algorithm.loop.progress import warn_if_unconverged
from aflite.algorithm.loop.selection import class_quotas, select_slice
from aflite.algorithm.loop.settle import standard_errors
from aflite.algorithm.loop.state import FilterState

__all__ = ["Ranker", "RankedPhase", "EnsembleRanker", "ScoreRanker"]


@dataclass
class RankedPhase:
    """One phase's view of the current rows (``state.rows``, in that order).

    ``scores`` is each row's predictability (NaN where unmeasured): the loop's representation
    bias, histogram and, when nothing is removed, the kept set's final figure. ``pick(k,
    budget, protected)`` returns the positions to remove (at most ``k``, easiest first), their
    removal scores, and how many rows were eligible; ``budget`` is how many rows may still go
    before the target size.
    """

    scores: np.ndarray
    pick: Callable[[int, int, np.ndarray | None], tuple[np.ndarray, np.ndarray, int]]
    info: dict[str, Any] = field(default_factory=dict)
    se: np.ndarray | None = None  # each score's standard error, where the ranker has one


class Ranker(Protocol):
    """What :func:`~aflite.algorithm.loop.run.run_phases` needs from a way of ranking rows.

    ``target_reason`` is the stop reason (a key of ``STOP_REASONS``) when the target size is
    reached; ``threshold`` the cut-off a row's score must reach to be removed (None: none).
    """

    target_reason: str
    threshold: float | None
    noun: str  # what a stop message counts: "row", or "item" for multiple-choice items

    def phase(self, state: FilterState) -> RankedPhase:
        """Score ``state.rows`` for phase ``len(state.history)``."""
        ...

    def score_kept(self, kept: np.ndarray) -> np.ndarray:
        """Predictability of the kept rows (sorted input positions), aligned with them."""
        ...

    def chance(self, rows: np.ndarray) -> float | None:
        """The score of a model that learned nothing, on ``rows`` (sorted input positions),
        when it is not their majority-class rate (the loop's default): None."""
        ...

    def save(self, state: FilterState) -> None:
        """Record in ``state`` what a resumed run needs (called after every phase)."""
        ...


class EnsembleRanker:
    """AFLITE's ranking: each phase a fresh ensemble on random partitions of the current rows
    (a :class:`~aflite.algorithm.loop.phases.PhaseRunner`); rows whose held-out predictability
    is at least ``threshold`` are eligible, and ``strategy``/``balance`` choose among them."""

    target_reason = "target_size"

    def __init__(
        self,
        runner: PhaseRunner,
        *,
        threshold: float,
        strategy: str,
        balance: str | None,
        noun: str = "row",
    ) -> None:
        self.runner = runner
        self.noun = noun
        self.threshold = threshold
        self.strategy = strategy
        self.balance = balance
        self.blocks_phase: int | None = None  # the phase that dealt the blocks a model keeps

    def resume(self, state: FilterState) -> None:
        """Continue from a checkpoint: the generator, the storage and the kept blocks as
        they were."""
        runner = self.runner
        if state.generator_state is not None:
            runner.generator.set_state(torch.as_tensor(state.generator_state, dtype=torch.uint8))
        if state.storage_phase is not None:
            runner.compact_to(state.rows_at_phase(state.storage_phase))
        if state.blocks_state is not None and state.blocks_phase is not None:
            runner.restore_blocks(state.rows_at_phase(state.blocks_phase), state.blocks_state)
            self.blocks_phase = state.blocks_phase

    def phase(self, state: FilterState) -> RankedPhase:
        runner, phase = self.runner, len(state.history)
        if runner.needs_compaction(len(state.rows)):
            runner.compact_to(state.rows)
            state.storage_phase = phase
        dealt = runner.blocks_state
        out = runner.run(state.rows)
        if runner.blocks_state is not dealt:  # this phase dealt the blocks a model keeps
            self.blocks_phase = phase
        # stacklevel: the warning names adversarial_filter's line, as it always has
        warn_if_unconverged(out.info, phase, out.tol, stacklevel=6)
        labels = runner.labels_of(state.rows)

        def pick(
            k: int, budget: int, protected: np.ndarray | None
        ) -> tuple[np.ndarray, np.ndarray, int]:
            return select_slice(
                out.correct,
                out.heldout,
                labels,
                k=k,
                threshold=self.threshold,
                strategy=self.strategy,
                balance=self.balance,
                generator=runner.generator,
                device=runner.generator.device,
                protected=protected,
                rank=runner.keys[state.rows],
            )

        return RankedPhase(
            scores=out.scores(),
            pick=pick,
            info=out.info,
            se=standard_errors(out.correct, out.heldout),
        )

    def chance(self, rows: np.ndarray) -> float | None:
        return self.runner.chance(rows)

    def score_kept(self, kept: np.ndarray) -> np.ndarray:
        if self.runner.needs_compaction(len(kept)):
            self.runner.compact_to(kept)
        return self.runner.run(kept).scores()

    def save(self, state: FilterState) -> None:
        state.generator_state = self.runner.generator.get_state().numpy().copy()
        state.blocks_state, state.blocks_phase = self.runner.blocks_state, self.blocks_phase


class ScoreRanker:
    """Rank by a given per-example score.

    Parameters
    ----------
    score:
        (N,) one score per input row (computed once: the rows go in that order, a slice per
        phase), or a function of the current rows (sorted input positions) returning their
        scores, called again every phase so the order follows what is left.
    measure:
        A function of the current rows returning their predictability, for the loop's
        representation bias (the same figure AFLITE reports, so runs compare).
    codes:
        (N,) class codes, for ``balance="classes"``.
    lower_is_easier:
        Remove the lowest scores first instead of the highest.
    balance:
        ``"classes"``: the rows to remove are shared over the classes in proportion to their
        sizes (largest remainders), so the label mix stays.
    seed:
        Equal scores are ordered at random by this seed, never by row order.
    info:
        Put in every phase's record (``PhaseRecord.solver``).

    NaN scores count as the hardest: they go last, and are not counted as eligible.
    """

    target_reason = "by_score"
    noun = "row"
    threshold = None

    def __init__(
        self,
        score: np.ndarray | Callable[[np.ndarray], np.ndarray],
        *,
        measure: Callable[[np.ndarray], np.ndarray],
        codes: np.ndarray,
        lower_is_easier: bool = False,
        balance: str | None = None,
        seed: int | None = 0,
        info: dict[str, Any] | None = None,
    ) -> None:
        self.rescore = callable(score)
        self._score = score
        self.measure = measure
        self.codes = np.asarray(codes)
        self.sign = -1.0 if lower_is_easier else 1.0
        self.balance = balance
        self.rng = np.random.default_rng(seed)
        self.info = dict(info or {})
        self._order: np.ndarray | None = None  # input rows, easiest first
        self._taken = 0

    def _values(self, rows: np.ndarray) -> np.ndarray:
        if self.rescore:
            return np.asarray(self._score(rows), dtype=np.float64)
        return np.asarray(self._score, dtype=np.float64)[rows]

    def _rank(
        self, rows: np.ndarray, values: np.ndarray, budget: int, protected: np.ndarray | None
    ) -> np.ndarray:
        """The ``budget`` easiest of ``rows`` (input positions, scored ``values``), easiest
        first."""
        ease = self.sign * values
        order = np.lexsort((self.rng.permutation(len(rows)), -np.nan_to_num(ease, nan=-np.inf)))
        if protected is not None:
            order = order[~protected[order]]
        if self.balance is None:
            return rows[order[:budget]]
        codes = self.codes[rows]
        quota = class_quotas(np.bincount(codes), budget)
        taken = np.zeros(len(quota), dtype=np.int64)
        out = []
        for i in order:
            if taken[codes[i]] < quota[codes[i]]:
                taken[codes[i]] += 1
                out.append(i)
        return rows[np.asarray(out, dtype=np.int64)]

    def phase(self, state: FilterState) -> RankedPhase:
        rows = state.rows
        values = self._values(rows)

        def pick(
            k: int, budget: int, protected: np.ndarray | None
        ) -> tuple[np.ndarray, np.ndarray, int]:
            if self._order is None or self.rescore:
                self._order, self._taken = self._rank(rows, values, budget, protected), 0
            ids = self._order[self._taken : self._taken + k]
            self._taken += len(ids)
            pos = np.searchsorted(rows, ids)
            return pos.astype(np.int64), values[pos], int(np.isfinite(values).sum())

        return RankedPhase(scores=self.measure(rows), pick=pick, info=dict(self.info))

    def score_kept(self, kept: np.ndarray) -> np.ndarray:
        return self.measure(kept)

    def chance(self, rows: np.ndarray) -> float | None:
        return None

    def save(self, state: FilterState) -> None:
        pass  # the order is drawn again from the seed
