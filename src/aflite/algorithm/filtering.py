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

Beyond the paper, two options keep the filter from overshooting: ``min_bias`` stops once the
representation bias is within that margin of the chance level (the majority-class rate of
the current set), and ``balance="classes"`` removes from every class in proportion to its size,
so the label distribution cannot drift. Both are off here (Algorithm 1 as published); the
command line and :func:`aflite.filter_dataset` turn the chance stop on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from aflite._internal.text import plural
from aflite.algorithm._validation import check_fraction, resolve_size, resolve_slice_size
from aflite.algorithm.progress import ConvergenceWarning, Reporter, warn_if_unconverged
from aflite.algorithm.result import STOP_REASONS, FilterResult, PhaseRecord
from aflite.algorithm.scoring import prepare_runner
from aflite.algorithm.selection import BALANCE, STRATEGIES, select_slice
from aflite.algorithm.state import FilterState
from aflite.types import (
    ArrayLike,
    Backend,
    Balance,
    DeviceLike,
    ModelLike,
    SeedLike,
    Size,
    Strategy,
)

__all__ = ["adversarial_filter", "FilterState", "STRATEGIES", "ConvergenceWarning"]

_HIST_BINS = 20




def adversarial_filter(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    target_size: Size,
    n_partitions: int = 64,
    train_size: Size = 0.1,
    slice_size: Size = 500,
    threshold: float = 0.75,
    strategy: Strategy = "slicing",
    min_bias: float | None = None,
    balance: Balance = None,
    model: ModelLike = "linear",
    groups: ArrayLike | None = None,
    seed: SeedLike = 0,
    device: DeviceLike = "auto",
    progress: bool | Callable[[PhaseRecord], None] | None = None,
    score_kept: bool = True,
    checkpoint: Callable[[FilterState], None] | None = None,
    resume: FilterState | None = None,
    backend: Backend | None = None,
    copy: bool = True,
    partitions: str = "blocks",
    threads: int | None = None,
    protected: ArrayLike | None = None,
) -> FilterResult:
    """Remove the most predictable instances until the set is ``target_size`` or clean.

    Each phase draws ``n_partitions`` random training parts of ``train_size`` rows from the
    current set, trains one model per part, and scores each row by the fraction of its held-out
    predictions that are correct. Up to ``slice_size`` rows with score >= ``threshold`` are
    removed. The run stops when the set reaches ``target_size`` (the last slice is trimmed so
    exactly ``target_size`` rows remain), when fewer than ``slice_size`` rows reach the
    threshold, or (with ``min_bias``) when the representation bias is at most the chance level
    plus ``min_bias``.

    Parameters
    ----------
    features:
        (N, d) array of the representation Phi(X); a NumPy array or memory map. (N, K, d) for
        multiple-choice items (padded choices NaN): see :class:`aflite.ChoiceEnsemble`.
    labels:
        (N,) class labels, strings or integers, at least two classes (0-based answer positions
        for multiple choice).
    target_size:
        n: rows to keep at least; an int, or a fraction of N. Must exceed ``train_size``.
    n_partitions:
        m: random partitions (models) per phase.
    train_size:
        t: rows in each training part; an int, or a fraction of N. Default 0.1. With block
        partitions (the default) a part is q whole blocks of about t/q rows, so its size is
        t give or take a block's rounding.
    slice_size:
        k: rows removed per phase at most; an int, or a fraction of N.
    threshold:
        tau in [0, 1]: only rows scoring at least this can be removed.
    strategy:
        ``"slicing"`` (AFLITE: greedy slicing of the k most predictable), ``"greedy"`` (one row
        per phase), ``"sampling"`` (slice sampling: k rows drawn with probability proportional
        to their score, via Gumbel top-k), ``"single_shot"`` (baseline: one phase, the most
        predictable removed down to the target regardless of the threshold).
    min_bias:
        Stop once the representation bias is at most the chance level (majority-class rate of
        the current set) plus this margin; None (default) runs Algorithm 1 as published.
    balance:
        ``"classes"``: each slice removes from every class in proportion to its size.
    model:
        ``"linear"`` (batched logistic regression, see :class:`aflite.LinearEnsemble`), a
        ``LinearEnsemble`` with other settings, or any scikit-learn classifier instance (cloned
        per partition, fed the features as given; slower). ``"choice"`` or a
        ``ChoiceEnsemble``: the choice-wise model, which (N, K, d) features get by default.
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
        Run one more scoring phase on the kept rows, at the same t, to estimate their
        representation bias.
    checkpoint, resume:
        A callable given a :class:`FilterState` after every phase, and a state to continue from.
    backend:
        None (this process), ``"ray"`` (a local Ray instance with 2 workers) or an
        :class:`aflite.distributed.RayBackend` to spread each phase's partitions over a cluster.
    partitions:
        ``"blocks"`` (default): each phase deals the current rows at random into blocks and
        every classifier trains on a random set of whole blocks, each block in the same number
        of parts (+-1); a row still trains each classifier with probability t/n, and the
        solver only multiplies each block by the classifiers that train on it. ``"uniform"``:
        independent uniform training parts of exactly t rows (Algorithm 1's wording), slower.
    threads:
        Worker threads for the products (default: ``AFLITE_THREADS``, else the cores this
        process may run on). The result is the same for any value.
    copy:
        False lets the linear family standardise a float32 C-contiguous ``features`` array in
        place instead of copying it (halves peak memory); its values are changed.
    protected:
        Optional (N,) boolean mask: rows where it is True are never removed (a reviewer's
        decision to keep them); they are still scored and count towards the bias.

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
            features, labels, target_size=target_size, n_partitions=n_partitions,
            train_size=train_size, slice_size=slice_size, threshold=threshold,
            strategy=strategy, min_bias=min_bias, balance=balance, model=model, groups=groups,
            seed=seed, device=device, progress=progress, score_kept=score_kept,
            checkpoint=checkpoint, resume=resume, backend=backend, copy=copy,
            partitions=partitions, threads=threads, protected=protected,
        )
    finally:
        if own_backend:
            backend.close()


def check_filter_options(
    n_input: int, *, target_size: Any, train_size: Any, slice_size: Any, threshold: Any,
    strategy: Any, min_bias: Any, balance: Any,
) -> tuple[int, int, int, float]:
    """Validate the options of :func:`adversarial_filter` for ``n_input`` rows before any
    work; returns (target size n, train size t, slice size k, tau)."""
    n = resolve_size(target_size, n_input, "target_size")
    if n >= n_input:
        raise ValueError(f"target_size ({n}) must be smaller than the number of rows ({n_input})")
    t = resolve_size(train_size, n_input, "train_size")
    if t >= n:
        raise ValueError(
            f"train_size ({t}) must be smaller than target_size ({n}): Algorithm 1 needs t < n "
            "so the kept set can still be scored out of sample"
        )
    slice_size = resolve_slice_size(slice_size, n_input)
    tau = check_fraction(threshold, "threshold")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    if min_bias is not None:
        check_fraction(min_bias, "min_bias")
    if balance not in BALANCE:
        raise ValueError(f"balance must be None or 'classes', got {balance!r}")
    k = 1 if strategy == "greedy" else int(slice_size)
    return n, t, k, tau


def _filter(features, labels, *, target_size, n_partitions, train_size, slice_size, threshold,
            strategy, min_bias, balance, model, groups, seed, device, progress, score_kept,
            checkpoint, resume, backend, copy, partitions, threads,
            protected=None) -> FilterResult:
    n_rows = np.asarray(labels).shape[0] if np.ndim(labels) else 0
    if protected is not None:
        protected = np.asarray(protected, dtype=bool)
        if protected.shape != (n_rows,):
            raise ValueError(f"protected must be a boolean mask of {n_rows} rows")
    n, _, k, tau = check_filter_options(
        n_rows, target_size=target_size, train_size=train_size, slice_size=slice_size,
        threshold=threshold, strategy=strategy, min_bias=min_bias, balance=balance,
    )
    runner, classes, t = prepare_runner(
        features, labels, n_partitions=n_partitions, model=model, groups=groups, seed=seed,
        device=device, train_size=train_size, backend=backend, copy=copy,
        partitions=partitions, threads=threads,
    )
    n_input = runner.n_input
    params = {
        "target_size": n,
        "n_partitions": n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": tau,
        "strategy": strategy,
        "min_bias": min_bias,
        "balance": balance,
        "model": runner.scorer.describe(),
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "device": str(runner.device),
        "grouped": groups is not None,
        "backend": "local" if backend is None else type(backend).__name__,
        "partitions": partitions,
    }

    if resume is not None:
        state = resume
        if state.generator_state is not None:
            runner.generator.set_state(torch.as_tensor(state.generator_state, dtype=torch.uint8))
        if state.storage_phase is not None:
            runner.compact_to(state.rows_at_phase(state.storage_phase))

    else:
        state = FilterState(rows=np.arange(n_input, dtype=np.int64))

    reporter = Reporter(progress, total=n_input - n, done=n_input - len(state.rows))
    opts = dict(n=n, k=k, tau=tau, t=t, strategy=strategy, min_bias=min_bias, balance=balance,
                protected=protected)
    try:
        while state.stop_reason is None:
            if _one_phase(state, runner, classes, **opts):
                reporter.update(state.history[-1], len(state.rows))
            state.generator_state = runner.generator.get_state().numpy().copy()
            if checkpoint is not None:
                checkpoint(state)
        kept = np.sort(state.rows)
        kept_scores = np.full(len(kept), np.nan)
        final_bias = float("nan")
        if score_kept and len(kept) > t and state.last_scores is not None:
            # the last phase scored exactly the kept set: its figure, not a second estimate
            kept_scores = np.asarray(state.last_scores, dtype=np.float64)[np.argsort(state.rows)]
            if (~np.isnan(kept_scores)).any():
                final_bias = float(np.nanmean(kept_scores))
        elif score_kept and len(kept) > t:
            if runner.needs_compaction(len(kept)):
                runner.compact_to(kept)
            kept_scores = runner.run(kept).scores()
            if (~np.isnan(kept_scores)).any():
                final_bias = float(np.nanmean(kept_scores))
        kept_counts = np.bincount(runner.labels_of(kept), minlength=len(classes))
        # the bar ends on the kept set's bias, the figure the summary prints
        reporter.finish(len(kept), final_bias, kept_counts.max() / max(1, kept_counts.sum()))
    finally:
        reporter.close()
    params["kept_class_counts"] = kept_counts.tolist()
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


def _one_phase(state: FilterState, runner: Any, classes: np.ndarray, *,
               n: int, k: int, tau: float, t: int, strategy: str, min_bias: float | None,
               balance: str | None, protected: np.ndarray | None = None) -> bool:
    """Run one phase, remove its slice from ``state`` and set the stop reason when it fires.

    Returns False when a stop rule fired before any work was done.
    """
    size = len(state.rows)
    if size <= n:
        state.stop_reason = "target_size"
        state.stop_message = f"{STOP_REASONS['target_size']} ({size} <= {n})"
        return False
    start = time.perf_counter()
    phase = len(state.history)
    if runner.needs_compaction(size):
        runner.compact_to(state.rows)
        state.storage_phase = phase
    out = runner.run(state.rows)
    labels = runner.labels_of(state.rows)
    counts = np.bincount(labels, minlength=len(classes))
    chance = float(counts.max() / counts.sum())
    if hasattr(runner.scorer, "chance"):  # multiple choice: position-only guess, >= 1/K
        chance = runner.scorer.chance(state.rows, labels)
    scores = out.scores()
    valid = scores[~np.isnan(scores)]
    bias = float(valid.mean()) if len(valid) else float("nan")
    tol = getattr(getattr(runner.scorer, "model", None), "tol", None)
    warn_if_unconverged(out.info, phase, tol)

    budget = size - n  # never go below target_size
    at_chance = min_bias is not None and strategy != "single_shot" and bias <= chance + min_bias
    if at_chance:
        picked, picked_scores, n_eligible = np.zeros(0, np.int64), np.zeros(0), 0
        k_eff = 0
    else:
        k_eff = budget if strategy == "single_shot" else min(k, budget)
        picked, picked_scores, n_eligible = select_slice(
            out.correct, out.heldout, labels, k=k_eff, tau=tau, strategy=strategy,
            balance=balance, generator=runner.generator, device=runner.device,
            protected=None if protected is None else protected[state.rows],
        )
    removed_rows = state.rows[picked]
    # Recorded in descending order, so 'removed' lists the most predictable first.
    state.removed.extend(removed_rows.tolist())
    state.removed_phase.extend([phase] * len(picked))
    state.removed_score.extend(picked_scores.tolist())
    keep_mask = np.ones(size, dtype=bool)
    keep_mask[picked] = False
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
            solver=out.info,
        )
    )
    state.rows = state.rows[keep_mask]
    state.last_scores = None if len(picked) else scores.copy()

    if at_chance:
        state.stop_reason = "chance"
        state.stop_message = (
            f"{STOP_REASONS['chance']} ({bias:.3f} <= {chance:.3f} + {min_bias:g}); "
            f"{plural(len(state.rows), 'row')} kept"
        )
    elif strategy == "single_shot":
        state.stop_reason = "single_shot"
        state.stop_message = STOP_REASONS["single_shot"]
    elif len(picked) < k_eff:
        state.stop_reason = "threshold"
        state.stop_message = (
            f"{STOP_REASONS['threshold']} ({len(picked)} < {k_eff} at tau={tau:g}); "
            f"{plural(len(state.rows), 'row')} kept"
        )
    elif len(state.rows) <= n:
        state.stop_reason = "target_size"
        state.stop_message = f"{STOP_REASONS['target_size']} ({plural(len(state.rows), 'row')})"
    state.history[-1].seconds = time.perf_counter() - start
    return True
