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

from collections.abc import Callable
from typing import Any

import numpy as np

from aflite._internal.backends import make_backend
from aflite.algorithm._validation import (
    check_fraction,
    resolve_filter_sizes,
)
from aflite.algorithm.by_scores import ByScores, run_by_scores
from aflite.algorithm.choices import is_choice_input
from aflite.algorithm.loop import run_phases
from aflite.algorithm.models.base import family_name
from aflite.algorithm.progress import ConvergenceWarning
from aflite.algorithm.rankers import EnsembleRanker
from aflite.algorithm.result import FilterResult, PhaseRecord
from aflite.algorithm.scoring import prepare_runner
from aflite.algorithm.selection import BALANCE, STRATEGIES
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


def adversarial_filter(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    target_size: Size = 0.5,
    n_partitions: int | str = 64,
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
    ids: ArrayLike | None = None,
    ranker: ByScores | None = None,
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
        n: rows to keep at least; an int, or a fraction of N (default 0.5). Must exceed
        ``train_size``.
    n_partitions:
        m: random partitions (models) per phase; ``"auto"``: 512 with the exact family
        (``model="ridge"``, whose partitions cost a few milliseconds), else 64.
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
        The name of a model family in :data:`aflite.MODELS` (``"linear"``: batched logistic
        regression, see :class:`aflite.LinearEnsemble`; ``"ridge"``: the exact least-squares
        family, see :class:`aflite.RidgeEnsemble`; ``"auto"``: ridge where t <= d, else
        linear; or one added with :func:`aflite.register_model`), a ``LinearEnsemble`` or
        ``RidgeEnsemble`` with other settings, or any scikit-learn classifier instance (cloned
        per partition, fed the features as given; slower). ``"choice"`` or a
        ``ChoiceEnsemble``: the choice-wise model, which (N, K, d) features get by default;
        ``"ridge"`` on (N, K, d) features: the choice-wise least-squares model.
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
    ids:
        Optional (N,) unique row ids. Partitions are drawn, and equal scores ordered, by id,
        so the same rows in any order give the same result (without ids: by position).
    ranker:
        None (AFLITE: each phase's rows ranked by the ensemble's predictability), or an
        :class:`aflite.ByScores` to remove rows by a given per-example score instead, in the
        same loop and with the same measurements (``slice_size=None``: one slice down to the
        target; ``threshold``, ``strategy`` and ``copy`` do not apply; ``backend``,
        ``checkpoint``, ``resume``, ``protected`` and ``ids`` are refused).

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
    if ranker is not None:
        return _by_scores(
            features, labels, ranker, target_size=target_size, slice_size=slice_size,
            balance=balance, min_bias=min_bias, n_partitions=n_partitions, train_size=train_size,
            model=model, groups=groups, seed=seed, device=device, progress=progress,
            partitions=partitions, threads=threads, score_kept=score_kept,
            unused={"backend": backend, "resume": resume, "checkpoint": checkpoint,
                    "protected": protected, "ids": ids},
        )  # fmt: skip
    own_backend = isinstance(backend, str)
    if own_backend:
        backend = make_backend(backend)
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
            min_bias=min_bias,
            balance=balance,
            model=model,
            groups=groups,
            seed=seed,
            device=device,
            progress=progress,
            score_kept=score_kept,
            checkpoint=checkpoint,
            resume=resume,
            backend=backend,
            copy=copy,
            partitions=partitions,
            threads=threads,
            protected=protected,
            ids=ids,
        )
    finally:
        if own_backend:
            backend.close()


def _by_scores(features, labels, ranker, *, unused, **options) -> FilterResult:
    if not isinstance(ranker, ByScores):
        raise ValueError(f"ranker must be None (AFLITE) or an aflite.ByScores, got {ranker!r}")
    given = [name for name, value in unused.items() if value is not None]
    if given:
        raise ValueError(f"ranker=ByScores(...): {given[0]} applies to AFLITE's phases only")
    return run_by_scores(features, labels, ranker, **options)


def check_filter_options(
    n_input: int,
    *,
    target_size: Any,
    train_size: Any,
    slice_size: Any,
    threshold: Any,
    strategy: Any,
    min_bias: Any,
    balance: Any,
    n_classes: int | None = None,
) -> tuple[int, int, int, float]:
    """Validate the options of :func:`adversarial_filter` for the ``n_input`` rows to filter
    (of ``n_classes`` classes, see :func:`resolve_filter_sizes`) before any work; returns
    (target size n, train size t, slice size k, tau)."""
    # the options' own values first, then the sizes they give on these rows
    tau = check_fraction(threshold, "threshold")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    if min_bias is not None:
        check_fraction(min_bias, "min_bias")
    if balance not in BALANCE:
        raise ValueError(f"balance must be None or 'classes', got {balance!r}")
    n, t, slice_size = resolve_filter_sizes(
        n_input,
        target_size=target_size,
        train_size=train_size,
        slice_size=slice_size,
        n_classes=n_classes,
    )
    k = 1 if strategy == "greedy" else int(slice_size)
    return n, t, k, tau


def _n_classes(labels: Any) -> int | None:
    """The classes among ``labels``; None where they cannot be counted (prepare_runner then
    names what is wrong with them)."""
    try:
        y = np.asarray(labels)
        return len(np.unique(y)) if y.ndim == 1 else None
    except (TypeError, ValueError):  # unorderable labels (a None among strings)
        return None


def _filter(
    features,
    labels,
    *,
    target_size,
    n_partitions,
    train_size,
    slice_size,
    threshold,
    strategy,
    min_bias,
    balance,
    model,
    groups,
    seed,
    device,
    progress,
    score_kept,
    checkpoint,
    resume,
    backend,
    copy,
    partitions,
    threads,
    protected=None,
    ids=None,
) -> FilterResult:
    n_rows = np.asarray(labels).shape[0] if np.ndim(labels) else 0
    if protected is not None:
        protected = np.asarray(protected, dtype=bool)
        if protected.shape != (n_rows,):
            raise ValueError(f"protected must be a boolean mask of {n_rows} rows")
    # an item holds every choice, so any one item covers the answers' positions
    n_classes = None if is_choice_input(features, model) else _n_classes(labels)
    n, _, k, tau = check_filter_options(
        n_rows,
        target_size=target_size,
        train_size=train_size,
        slice_size=slice_size,
        threshold=threshold,
        strategy=strategy,
        min_bias=min_bias,
        balance=balance,
        n_classes=n_classes,
    )
    runner, classes, t = prepare_runner(
        features,
        labels,
        n_partitions=n_partitions,
        model=model,
        groups=groups,
        seed=seed,
        device=device,
        train_size=train_size,
        backend=backend,
        copy=copy,
        partitions=partitions,
        threads=threads,
        ids=ids,
    )
    params = {
        "target_size": n,
        "n_partitions": runner.n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": tau,
        "strategy": strategy,
        "min_bias": min_bias,
        "balance": balance,
        "model": runner.model.describe(),
        "model_family": family_name(runner.model),
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "device": str(runner.device),
        "grouped": groups is not None,
        "backend": "local" if backend is None else type(backend).__name__,
        "partitions": partitions,
    }

    ranker = EnsembleRanker(runner, tau=tau, strategy=strategy, balance=balance,
                            noun="row" if n_classes is not None else "item")  # fmt: skip
    if resume is not None:
        ranker.resume(resume)
    return run_phases(
        ranker,
        runner.labels,
        classes,
        n=n,
        k=k,
        t=t,
        min_bias=min_bias,
        single_shot=strategy == "single_shot",
        protected=protected,
        state=resume,
        progress=progress,
        checkpoint=checkpoint,
        score_kept=score_kept,
        params=params,
    )
