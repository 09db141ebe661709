"""AFLITE: iterative adversarial filtering (Le Bras et al., ICML 2020, Algorithm 1).

Parameter names and the letters used in the papers:

=================  =========================  ==============================
aflite             Le Bras et al. 2020        WinoGrande (Sakaguchi et al.)
=================  =========================  ==============================
``target_size``    n (target size)            (target size)
``n_partitions``   m (random partitions)      n (ensemble size)
``train_size``     t (training-part size)     m (training-set size)
``slice_size``     k (slice size)             k
``threshold``      tau (early-stop cut-off)   tau
=================  =========================  ==============================
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from aflite.algorithm._validation import check_fraction, resolve_size
from aflite.algorithm.result import STOP_REASONS, FilterResult, PhaseRecord
from aflite.algorithm.scoring import _prepare

__all__ = ["adversarial_filter", "FilterState", "STRATEGIES"]

STRATEGIES = ("slicing", "greedy", "sampling", "single_shot")
_HIST_BINS = 20


@dataclass
class FilterState:
    """Everything needed to continue a run after a phase: a checkpoint.

    Positions are input row indices. ``generator_state`` is the torch generator's state, so a
    resumed run draws exactly the partitions an uninterrupted run would have drawn;
    ``preconditioner_phase`` and ``storage_phase`` say which phase's set the solver's curvature
    approximation and the compacted storage were last built from, so a resumed run rebuilds
    the same ones (and sums in the same order).
    """

    def rows_at_phase(self, phase: int) -> np.ndarray:
        """The (sorted) set as it was at the start of ``phase``."""
        removed = np.asarray(self.removed, dtype=np.int64)
        later = removed[np.asarray(self.removed_phase, dtype=np.int64) >= phase]
        return np.sort(np.concatenate([self.rows, later]))

    rows: np.ndarray
    removed: list[int] = field(default_factory=list)
    removed_phase: list[int] = field(default_factory=list)
    removed_score: list[float] = field(default_factory=list)
    history: list[PhaseRecord] = field(default_factory=list)
    generator_state: np.ndarray | None = None
    preconditioner_phase: int | None = None
    storage_phase: int | None = None
    stop_reason: str | None = None
    stop_message: str | None = None


def adversarial_filter(
    features: Any,
    labels: Any,
    *,
    target_size: int | float,
    n_partitions: int = 64,
    train_size: int | float = 0.1,
    slice_size: int = 500,
    threshold: float = 0.75,
    strategy: str = "slicing",
    model: Any = "linear",
    groups: Any = None,
    seed: Any = 0,
    device: str | torch.device = "auto",
    progress: bool | Callable[[PhaseRecord], None] | None = None,
    score_kept: bool = True,
    checkpoint: Callable[[FilterState], None] | None = None,
    resume: FilterState | None = None,
    backend: Any = None,
) -> FilterResult:
    """Remove the most predictable instances until the set is ``target_size`` or clean.

    Each phase draws ``n_partitions`` random training parts of ``train_size`` rows from the
    current set, trains one model per part, and scores each row by the fraction of its held-out
    predictions that are correct. Up to ``slice_size`` rows with score >= ``threshold`` are
    removed. The run stops when the set reaches ``target_size`` (the last slice is trimmed so
    exactly ``target_size`` rows remain), when fewer than ``slice_size`` rows reach the
    threshold, or when the set is too small to hold out any row.

    Parameters
    ----------
    features:
        (N, d) array of the representation Phi(X); a NumPy array or memory map.
    labels:
        (N,) class labels, strings or integers, at least two classes.
    target_size:
        n: rows to keep at least; an int, or a fraction of N.
    n_partitions:
        m: random partitions (models) per phase.
    train_size:
        t: rows in each training part; an int, or a fraction of N. Default 0.1.
    slice_size:
        k: rows removed per phase at most.
    threshold:
        tau in [0, 1]: only rows scoring at least this can be removed.
    strategy:
        ``"slicing"`` (AFLITE: greedy slicing of the k most predictable), ``"greedy"`` (one row
        per phase), ``"sampling"`` (slice sampling: k rows drawn with probability proportional
        to their score, via Gumbel top-k), ``"single_shot"`` (baseline: one phase, the most
        predictable removed down to the target regardless of the threshold).
    model:
        ``"linear"`` (batched logistic regression, see :class:`aflite.LinearEnsemble`), a
        ``LinearEnsemble`` with other settings, or any scikit-learn classifier instance (cloned
        per partition; slower).
    groups:
        Optional group id per row; a group never straddles a training/held-out split.
    seed:
        int, numpy Generator, or None for a random run. Same seed, same result.
    device:
        ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
    progress:
        True for a progress bar, False for none, None for a bar only on a terminal, or a
        callable that receives each :class:`PhaseRecord`.
    score_kept:
        Run one more scoring phase on the kept rows to estimate their representation bias.
    checkpoint, resume:
        A callable given a :class:`FilterState` after every phase, and a state to continue from.
    backend:
        None (this process), ``"ray"`` (a local Ray instance with 2 workers) or an
        :class:`aflite.distributed.RayBackend` to spread each phase's partitions over a cluster.

    Returns
    -------
    FilterResult

    Examples
    --------
    >>> import numpy as np, aflite
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> x = rng.normal(size=(400, 8)); x[:120, 0] = y[:120] * 4.0  # a planted artifact
    >>> res = aflite.filter(x, y, target_size=200, train_size=100, slice_size=20, seed=0)
    >>> len(res.kept) >= 200
    True
    """
    own_backend = False
    if isinstance(backend, str):
        if backend != "ray":
            raise ValueError(f"unknown backend {backend!r}: use None, 'ray' or a RayBackend")
        from aflite.distributed import RayBackend

        backend, own_backend = RayBackend(), True
    try:
        return _filter(
            features,
            labels,
            target_size=target_size,
            n_partitions=n_partitions,
            train_size=train_size,
            slice_size=slice_size,
            threshold=threshold,
            strategy=strategy,
            model=model,
            groups=groups,
            seed=seed,
            device=device,
            progress=progress,
            score_kept=score_kept,
            checkpoint=checkpoint,
            resume=resume,
            backend=backend,
        )
    finally:
        if own_backend:
            backend.close()


def _filter(
    features: Any,
    labels: Any,
    *,
    target_size: Any,
    n_partitions: int,
    train_size: Any,
    slice_size: int,
    threshold: float,
    strategy: str,
    model: Any,
    groups: Any,
    seed: Any,
    device: Any,
    progress: Any,
    score_kept: bool,
    checkpoint: Any,
    resume: FilterState | None,
    backend: Any,
) -> FilterResult:
    runner, classes, t = _prepare(
        features,
        labels,
        n_partitions=n_partitions,
        model=model,
        groups=groups,
        seed=seed,
        device=device,
        train_size=train_size,
        backend=backend,
    )
    n_input = runner.n_input
    n = resolve_size(target_size, n_input, "target_size")
    if n >= n_input:
        raise ValueError(f"target_size ({n}) must be smaller than the number of rows ({n_input})")
    if isinstance(slice_size, bool) or not isinstance(slice_size, (int, np.integer)):
        raise ValueError(f"slice_size must be a positive int, got {slice_size!r}")
    if slice_size < 1:
        raise ValueError(f"slice_size must be >= 1, got {slice_size}")
    tau = check_fraction(threshold, "threshold")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    k = 1 if strategy == "greedy" else int(slice_size)

    params = {
        "target_size": n,
        "n_partitions": n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": tau,
        "strategy": strategy,
        "model": _describe_model(runner.model),
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "device": str(runner.device),
        "grouped": groups is not None,
        "backend": "local" if backend is None else type(backend).__name__,
    }

    y_np = runner.y.cpu().numpy()
    if resume is not None:
        state = resume
        if state.generator_state is not None:
            runner.generator.set_state(torch.as_tensor(state.generator_state, dtype=torch.uint8))
        if state.preconditioner_phase is not None:
            runner.set_preconditioner(state.rows_at_phase(state.preconditioner_phase))
        if state.storage_phase is not None:
            runner.compact_to(state.rows_at_phase(state.storage_phase))
    else:
        state = FilterState(rows=np.arange(n_input, dtype=np.int64))

    reporter = _Reporter(progress, total=n_input - n, done=n_input - len(state.rows))
    try:
        while state.stop_reason is None:
            ran = _one_phase(
                state, runner, y_np, classes, n=n, k=k, tau=tau, t=t, strategy=strategy
            )
            if ran:
                reporter.update(state.history[-1], len(state.rows))
            state.generator_state = runner.generator.get_state().numpy().copy()
            if checkpoint is not None:
                checkpoint(state)
    finally:
        reporter.close()

    kept = np.sort(state.rows)
    kept_scores = np.full(len(kept), np.nan)
    final_bias = float("nan")
    if score_kept and len(kept) > t:
        if runner.needs_compaction(len(kept)):
            runner.compact_to(kept)
        correct, heldout, _ = runner.run(kept)
        c = correct.cpu().numpy()
        h = heldout.cpu().numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            kept_scores = np.where(h > 0, c / np.maximum(h, 1), np.nan)
        if (~np.isnan(kept_scores)).any():
            final_bias = float(np.nanmean(kept_scores))

    return FilterResult(
        kept=kept,
        removed=np.asarray(state.removed, dtype=np.int64),
        removed_phase=np.asarray(state.removed_phase, dtype=np.int64),
        removed_score=np.asarray(state.removed_score, dtype=np.float64),
        kept_scores=kept_scores,
        final_bias=final_bias,
        history=state.history,
        stop_reason=state.stop_reason or "target_size",
        stop_message=state.stop_message or STOP_REASONS["target_size"],
        classes=[c.item() if isinstance(c, np.generic) else c for c in classes],
        n_input=n_input,
        params=params,
    )


def _one_phase(
    state: FilterState,
    runner: Any,
    y_np: np.ndarray,
    classes: np.ndarray,
    *,
    n: int,
    k: int,
    tau: float,
    t: int,
    strategy: str,
) -> bool:
    """Run one phase, remove its slice from ``state`` and set the stop reason when it fires.

    Returns False when a stop rule fired before any work was done.
    """
    size = len(state.rows)
    if size <= n:
        state.stop_reason = "target_size"
        state.stop_message = f"{STOP_REASONS['target_size']} ({size} <= {n})"
        return False
    if t >= size:
        state.stop_reason = "too_small"
        state.stop_message = (
            f"{STOP_REASONS['too_small']}: {size} rows left, train_size is {t}; "
            "lower train_size or raise target_size"
        )
        return False

    start = time.perf_counter()
    dev = runner.device
    phase = len(state.history)
    if runner.needs_preconditioner(size):
        runner.set_preconditioner(state.rows)
        state.preconditioner_phase = phase
    if runner.needs_compaction(size):
        runner.compact_to(state.rows)
        state.storage_phase = phase
    correct, heldout, _ = runner.run(state.rows)
    scored = heldout > 0
    scores = torch.where(scored, correct / heldout.clamp_min(1), torch.nan).double()
    # Ties between equal scores are broken at random, not by row order.
    tiebreak = torch.rand(size, generator=runner.generator, device=dev, dtype=torch.float64)

    budget = size - n  # never go below target_size
    if strategy == "single_shot":
        eligible = scored
        k_eff = budget
    else:
        eligible = scored & (scores >= tau)
        k_eff = min(k, budget)
    n_eligible = int(eligible.sum().item())

    if strategy == "sampling":
        # Gumbel top-k over log-scores = sampling without replacement proportional to score
        gumbel = -torch.log(-torch.log(tiebreak.clamp(1e-300, 1 - 1e-16)))
        key = torch.log(scores.clamp_min(1e-300)) + gumbel
    else:
        key = scores + tiebreak * 1e-12
    key = torch.where(eligible, key, torch.full_like(key, -math.inf))
    n_take = min(k_eff, n_eligible)
    picked = torch.topk(key, n_take).indices if n_take > 0 else key.new_zeros(0, dtype=torch.long)

    picked_np = picked.cpu().numpy()
    scores_np = scores.cpu().numpy()
    removed_rows = state.rows[picked_np]
    # Record in descending key order so 'removed' lists the most predictable first.
    state.removed.extend(removed_rows.tolist())
    state.removed_phase.extend([phase] * len(picked_np))
    state.removed_score.extend(scores_np[picked_np].tolist())
    keep_mask = np.ones(size, dtype=bool)
    keep_mask[picked_np] = False

    valid = scores_np[~np.isnan(scores_np)]
    counts = np.bincount(y_np[state.rows], minlength=len(classes))
    state.history.append(
        PhaseRecord(
            phase=phase,
            size_before=size,
            n_removed=len(picked_np),
            n_eligible=n_eligible,
            representation_bias=float(valid.mean()) if len(valid) else float("nan"),
            class_counts={str(c): int(v) for c, v in zip(classes, counts)},
            seconds=0.0,
            score_histogram=np.histogram(valid, bins=_HIST_BINS, range=(0.0, 1.0))[0].tolist(),
        )
    )
    state.rows = state.rows[keep_mask]

    if strategy == "single_shot":
        state.stop_reason = "single_shot"
        state.stop_message = STOP_REASONS["single_shot"]
    elif n_take < k_eff:
        state.stop_reason = "threshold"
        state.stop_message = (
            f"{STOP_REASONS['threshold']} ({n_eligible} < {k_eff} at tau={tau:g}); "
            f"{len(state.rows)} rows kept"
        )
    elif len(state.rows) <= n:
        state.stop_reason = "target_size"
        state.stop_message = f"{STOP_REASONS['target_size']} ({len(state.rows)} rows)"
    state.history[-1].seconds = time.perf_counter() - start
    return True


def _describe_model(model: Any) -> str:
    return repr(model)


class _Reporter:
    """Progress bar over rows removed, or a user callback, or nothing."""

    def __init__(self, progress: Any, *, total: int, done: int) -> None:
        self.callback = progress if callable(progress) else None
        show = (
            progress if isinstance(progress, bool) else (progress is None and sys.stderr.isatty())
        )
        self.bar = None
        if show and self.callback is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("[bold]filtering"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("filter", total=total, completed=done, info="")

    def update(self, record: PhaseRecord, size_after: int) -> None:
        if self.callback is not None:
            self.callback(record)
        if self.bar is not None:
            self.bar.update(
                self.task,
                advance=record.n_removed,
                info=f"phase {record.phase}  size {size_after}  "
                f"bias {record.representation_bias:.3f}",
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
