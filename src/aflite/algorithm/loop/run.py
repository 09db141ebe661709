"""The filtering loop: phase after phase, ask a ranker for the current rows' scores, remove a
slice, record the phase, and stop at the target size, at the threshold or at chance.

This is the one place for the sizes, the stop rules, the :class:`PhaseRecord` of every phase
and the stop messages; how rows are scored and ordered is the ranker's business (see
:mod:`aflite.algorithm.loop.rankers`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from aflite._internal.text import plural
from aflite.algorithm.loop.progress import Reporter
from aflite.algorithm.loop.rankers import Ranker
from aflite.algorithm.loop.result import STOP_REASONS, FilterResult, PhaseRecord
from aflite.algorithm.loop.settle import contested
from aflite.algorithm.loop.state import FilterState

__all__ = ["run_phases"]

_HIST_BINS = 20


def run_phases(
    ranker: Ranker,
    codes: np.ndarray,
    classes: np.ndarray,
    *,
    n: int,
    k: int,
    t: int,
    min_bias: float | None = None,
    single_shot: bool = False,
    protected: np.ndarray | None = None,
    state: FilterState | None = None,
    progress: bool | Callable[[PhaseRecord], None] | None = None,
    checkpoint: Callable[[FilterState], None] | None = None,
    score_kept: bool = True,
    params: dict[str, Any] | None = None,
) -> FilterResult:
    """Filter the rows with class codes ``codes`` (0-based, into ``classes``) down to ``n``.

    Each phase removes at most ``k`` rows as ``ranker`` picks them, never going below ``n``;
    ``single_shot`` removes down to ``n`` in one phase. With ``min_bias`` the run stops once
    the representation bias is at most the chance level plus ``min_bias``. Rows where
    ``protected`` is True are never removed. ``t`` is the training-part size: the kept set is
    scored again (``score_kept``) only when it has more rows than that. ``state`` continues a
    run; ``checkpoint`` receives the state after every phase; ``params`` goes into the result.
    """
    n_input = len(codes)
    state = state if state is not None else FilterState(rows=np.arange(n_input, dtype=np.int64))
    params = dict(params or {})
    reporter = Reporter(
        progress, total=n_input - n, done=n_input - len(state.rows), noun=ranker.noun
    )
    try:
        while state.stop_reason is None:
            if _one_phase(
                state,
                ranker,
                codes,
                classes,
                n=n,
                k=k,
                min_bias=min_bias,
                single_shot=single_shot,
                protected=protected,
            ):
                reporter.update(state.history[-1], len(state.rows))
            ranker.save(state)
            if checkpoint is not None:
                checkpoint(state)
        kept = np.sort(state.rows)
        kept_scores = np.full(len(kept), np.nan)
        final_bias = float("nan")
        if score_kept and len(kept) > t:
            if state.last_scores is not None:
                # the last phase scored exactly the kept set: its figure, not a second estimate
                kept_scores = np.asarray(state.last_scores, np.float64)[np.argsort(state.rows)]
            else:
                kept_scores = np.asarray(ranker.score_kept(kept), dtype=np.float64)
            if (~np.isnan(kept_scores)).any():
                final_bias = float(np.nanmean(kept_scores))
        kept_counts = np.bincount(codes[kept], minlength=len(classes))
        kept_chance = _chance(ranker, codes, classes, kept)
        # the bar ends on the kept set's bias, the figure the summary prints
        reporter.finish(len(kept), final_bias, kept_chance)
    finally:
        reporter.close()
    params["unit"] = ranker.noun  # what the summary counts: rows, or multiple-choice items
    params["kept_class_counts"] = kept_counts.tolist()
    params["kept_chance"] = kept_chance
    order = np.argsort(state.rows)
    survived = state.survived_score is not None and len(state.survived_score) == len(state.rows)
    return FilterResult(
        kept=kept,
        removed=np.asarray(state.removed, dtype=np.int64),
        removed_phase=np.asarray(state.removed_phase, dtype=np.int64),
        removed_score=np.asarray(state.removed_score, dtype=np.float64),
        kept_scores=kept_scores,
        final_bias=final_bias,
        history=state.history,
        stop_reason=state.stop_reason or ranker.target_reason,
        stop_message=state.stop_message or STOP_REASONS[ranker.target_reason],
        classes=[c.item() if isinstance(c, np.generic) else c for c in classes],
        n_input=n_input,
        params=params,
        removed_se=_aligned(state.removed_se, len(state.removed)),
        kept_se=state.survived_se[order] if survived else None,
        kept_phase_score=state.survived_score[order] if survived else None,
    )


def _one_phase(
    state: FilterState,
    ranker: Ranker,
    codes: np.ndarray,
    classes: np.ndarray,
    *,
    n: int,
    k: int,
    min_bias: float | None,
    single_shot: bool,
    protected: np.ndarray | None,
) -> bool:
    """Run one phase, remove its slice from ``state`` and set the stop reason when it fires.

    Returns False when a stop rule fired before any work was done.
    """
    size = len(state.rows)
    if size <= n:
        state.stop_reason = ranker.target_reason
        state.stop_message = f"{STOP_REASONS[ranker.target_reason]} ({size} <= {n})"
        return False
    start = time.perf_counter()
    phase = len(state.history)
    ranked = ranker.phase(state)
    counts = np.bincount(codes[state.rows], minlength=len(classes))
    chance = _chance(ranker, codes, classes, state.rows)
    scores = ranked.scores
    valid = scores[~np.isnan(scores)]
    bias = float(valid.mean()) if len(valid) else float("nan")

    budget = size - n  # never go below target_size
    at_chance = min_bias is not None and not single_shot and bias <= chance + min_bias
    if at_chance:
        picked, picked_scores, n_eligible = np.zeros(0, np.int64), np.zeros(0), 0
        k_eff = 0
    else:
        k_eff = budget if single_shot else min(k, budget)
        picked, picked_scores, n_eligible = ranked.pick(
            k_eff, budget, None if protected is None else protected[state.rows]
        )
    removed_rows = state.rows[picked]
    se = np.full(size, np.nan) if ranked.se is None else np.asarray(ranked.se, np.float64)
    # Recorded in descending order, so 'removed' lists the most predictable first.
    state.removed.extend(removed_rows.tolist())
    state.removed_phase.extend([phase] * len(picked))
    state.removed_score.extend(np.asarray(picked_scores).tolist())
    state.removed_se.extend(se[picked].tolist())
    keep_mask = np.ones(size, dtype=bool)
    keep_mask[picked] = False
    state.survived_score = np.asarray(scores, np.float64)[keep_mask]
    state.survived_se = se[keep_mask]
    # the cut: the lowest score removed when a whole slice went, else the threshold
    cut, in_contest = None, None
    if len(picked):
        full = len(picked) == k_eff or ranker.threshold is None
        cut = float(np.min(picked_scores)) if full else float(ranker.threshold)
        if ranked.se is not None:
            in_contest = round(contested(np.asarray(scores, np.float64), se, cut), 2)
    state.history.append(
        PhaseRecord(
            phase=phase,
            size_before=size,
            n_removed=len(picked),
            n_eligible=n_eligible,
            representation_bias=bias,
            class_counts={str(c): int(v) for c, v in zip(classes, counts)},
            seconds=0.0,
            score_histogram=np.histogram(valid, bins=_HIST_BINS, range=(0.0, 1.0))[0].tolist(),
            chance=chance,
            solver=ranked.info,
            cut=cut,
            contested=in_contest,
        )
    )
    state.rows = state.rows[keep_mask]
    state.last_scores = None if len(picked) else scores.copy()
    _stop(
        state,
        ranker,
        n=n,
        k_eff=k_eff,
        n_picked=len(picked),
        at_chance=at_chance,
        single_shot=single_shot,
        bias=bias,
        chance=chance,
        min_bias=min_bias,
    )
    state.history[-1].seconds = time.perf_counter() - start
    return True


def _aligned(values: list[float], n: int) -> np.ndarray:
    """``values`` for the last of ``n`` rows, NaN before (a run resumed from a checkpoint
    written before they were recorded)."""
    out = np.asarray(values, dtype=np.float64)
    return np.r_[np.full(n - len(out), np.nan), out] if len(out) < n else out


def _chance(ranker: Ranker, codes: np.ndarray, classes: np.ndarray, rows: np.ndarray) -> float:
    """The chance level of ``rows``, for every phase and for the kept set alike: the ranker's
    (multiple choice: the best position-only guess), else the majority-class rate."""
    chance = ranker.chance(rows)
    if chance is not None:
        return float(chance)
    counts = np.bincount(codes[rows], minlength=len(classes))
    return float(counts.max() / max(1, counts.sum()))


def _stop(
    state: FilterState,
    ranker: Ranker,
    *,
    n: int,
    k_eff: int,
    n_picked: int,
    at_chance: bool,
    single_shot: bool,
    bias: float,
    chance: float,
    min_bias: float | None,
) -> None:
    """Set the stop reason and message after a phase, if a stop rule fired."""
    kept = plural(len(state.rows), ranker.noun)
    if at_chance:
        state.stop_reason = "chance"
        state.stop_message = (
            f"{STOP_REASONS['chance']} ({bias:.3f} <= {chance:.3f} + {min_bias:g}); {kept} kept"
        )
    elif single_shot:
        state.stop_reason = "single_shot"
        state.stop_message = STOP_REASONS["single_shot"]
    elif n_picked < k_eff:
        at = "" if ranker.threshold is None else f" at tau={ranker.threshold:g}"
        state.stop_reason = "threshold"
        state.stop_message = f"{STOP_REASONS['threshold']} ({n_picked} < {k_eff}{at}); {kept} kept"
    elif len(state.rows) <= n:
        state.stop_reason = ranker.target_reason
        state.stop_message = f"{STOP_REASONS[ranker.target_reason]} ({kept})"
