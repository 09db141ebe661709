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
from aflite._internal.calls import misspelt, named_arguments
from aflite.algorithm.loop.by_scores import ByScores, ScoreSource, run_by_scores
from aflite.algorithm.loop.options import FilterOptions
from aflite.algorithm.loop.predictability import prepare_runner, takes_items
from aflite.algorithm.loop.progress import LABEL, ConvergenceWarning
from aflite.algorithm.loop.rankers import EnsembleRanker
from aflite.algorithm.loop.result import FilterResult, PhaseRecord
from aflite.algorithm.loop.run import run_phases
from aflite.algorithm.loop.selection import STRATEGIES
from aflite.algorithm.loop.settle import seed_check
from aflite.algorithm.loop.state import FilterState
from aflite.types import ArrayLike, Backend, DeviceLike, SeedLike

__all__ = ["adversarial_filter", "filter", "FilterState", "STRATEGIES", "ConvergenceWarning"]


def adversarial_filter(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    options: FilterOptions | None = None,
    ranker: ByScores | ScoreSource | None = None,
    groups: ArrayLike | None = None,
    seed: SeedLike = 0,
    device: DeviceLike = "auto",
    progress: bool | Callable[[PhaseRecord], None] | None = None,
    score_kept: bool = True,
    checkpoint: Callable[[FilterState], None] | None = None,
    resume: FilterState | None = None,
    backend: Backend | None = None,
    copy: bool = True,
    threads: int | None = None,
    protected: ArrayLike | None = None,
    ids: ArrayLike | None = None,
    check_seed: int | None = None,
    **kwargs: Any,
) -> FilterResult:
    """Remove the most predictable instances until the set is ``target_size`` or clean.

    Each phase draws ``n_partitions`` random training parts of ``train_size`` rows from the
    current set, trains one model per part, and scores each row by the fraction of its held-out
    predictions that are correct. Up to ``slice_size`` rows with score >= ``threshold`` are
    removed. The run stops when the set reaches ``target_size`` (the last slice is trimmed so
    exactly ``target_size`` rows remain), when fewer than ``slice_size`` rows reach the
    threshold, or (with ``min_bias``) when the representation bias is at most the chance level
    plus ``min_bias``.

    What the run does is one :class:`aflite.FilterOptions` (``target_size`` to ``partitions``
    below), given as ``options``, as keywords of the same names, or both (the keywords win);
    its defaults are Algorithm 1 as published, on block partitions. Each option is checked
    once, when the options are made; the rest of the arguments say what to filter and how to
    run.

    Parameters
    ----------
    features:
        (N, d) array of the representation Phi(X); a NumPy array or memory map. (N, K, d) for
        multiple-choice items (padded choices NaN): see :class:`aflite.ChoiceEnsemble`.
    labels:
        (N,) class labels, strings or integers, at least two classes (0-based answer positions
        for multiple choice).
    options:
        An :class:`aflite.FilterOptions` (e.g. ``aflite.PRESETS["practical"]``), or a
        command's config that extends it (:class:`aflite.config.FilterConfig`; only its
        filtering options are read: ``seed``, ``device`` and ``threads`` are this call's).
    target_size:
        n: rows to keep at least; an int, or a fraction of N. Must exceed
        ``train_size``.
    n_partitions:
        m: random partitions (models) per phase; ``"auto"``: 512 with the exact family
        (``model="ridge"``, whose partitions cost a few milliseconds) up to 50,000 rows, then
        fewer as N grows (512 x 50,000 / N to a power of two, at least 64), and where t > d
        past d = 512 (at most 512 x (512 / d)^3); else 64.
    train_size:
        t: rows in each training part; an int, or a fraction of N. With block
        partitions a part is q whole blocks of about t/q rows, so its size is
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
        the current set) plus this margin; None runs Algorithm 1 as published.
    balance:
        ``"classes"``: each slice removes from every class in proportion to its size.
    model:
        The name of a model family in :data:`aflite.MODELS` (``"linear"``: batched logistic
        regression, see :class:`aflite.LinearEnsemble`; ``"ridge"``: the exact least-squares
        family, see :class:`aflite.RidgeEnsemble`, the command line's default, also named
        ``"auto"``; or one added with :func:`aflite.register_model`), a ``LinearEnsemble``
        or ``RidgeEnsemble`` with other settings, or any scikit-learn classifier instance
        (cloned per partition, fed the features as given; slower). On (N, K, d) features a
        family runs its multiple-choice variant: ``"choice-ridge"`` for ``"ridge"``,
        ``"choice"`` (or a ``ChoiceEnsemble``) for ``"linear"``.
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
        ``"blocks"``: each phase deals the current rows at random into blocks and
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
    check_seed:
        Run the filter again with this seed (another than ``seed``) and record in the
        result's ``params["seed_check"]`` how many of the removed rows it removed too, and
        the Jaccard index of the two removed sets: how settled the set is, measured (it
        costs one more run).
    ranker:
        None (AFLITE: each phase's rows ranked by the ensemble's predictability), an
        :class:`aflite.ByScores` to remove rows by a given per-example score instead, in the
        same loop and with the same measurements, or an :class:`aflite.ByScorer` that
        computes that score once with a registered scorer (``slice_size=None``: one slice
        down to the target; ``threshold``, ``strategy`` and ``copy`` do not apply;
        ``backend``, ``checkpoint``, ``resume``, ``protected`` and ``ids`` are refused).

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
    unknown = sorted(set(kwargs) - set(FilterOptions.names()))
    if unknown:  # a misspelt option or argument (sed=0), named with the closest of either
        known = [*FilterOptions.names(), *named_arguments(adversarial_filter)]
        raise misspelt("filter", unknown, known)
    try:
        opts = FilterOptions.of(options, **kwargs)
    except TypeError as e:
        raise TypeError(f"filter(): {e}") from None
    if ranker is not None:
        unused = {
            "backend": backend,
            "resume": resume,
            "checkpoint": checkpoint,
            "protected": protected,
            "ids": ids,
        }
        unused["check_seed"] = check_seed
        given = [name for name, value in unused.items() if value is not None]
        if given:
            kind = type(ranker).__name__
            raise ValueError(f"ranker={kind}(...): {given[0]} applies to AFLITE's phases only")
        run = {"groups": groups, "seed": seed, "device": device}
        if not isinstance(ranker, ByScores):  # a ranker that scores the rows itself first
            if not isinstance(ranker, ScoreSource):
                raise ValueError(
                    "ranker must be None (AFLITE), an aflite.ByScores or an aflite.ByScorer, "
                    f"got {type(ranker).__name__}"
                )
            ranker = ranker.by_scores(features, labels, opts, **run)
        result = run_by_scores(
            features,
            labels,
            ranker,
            opts,
            progress=progress,
            threads=threads,
            score_kept=score_kept,
            **run,
        )
        result.params["options"] = opts.described()
        return result
    if opts.slice_size is None:
        raise ValueError("slice_size=None (one slice to the target) applies to ranker= only")
    if check_seed is not None and (
        isinstance(check_seed, bool) or not isinstance(check_seed, int) or check_seed == seed
    ):
        raise ValueError(f"check_seed must be a whole number other than seed, got {check_seed!r}")
    own_backend = isinstance(backend, str)
    if own_backend:
        backend = make_backend(backend)
    run = dict(groups=groups, device=device, progress=progress, backend=backend,
               threads=threads, protected=protected, ids=ids)  # fmt: skip
    try:
        result = _filter(
            features,
            labels,
            opts,
            seed=seed,
            score_kept=score_kept,
            checkpoint=checkpoint,
            resume=resume,
            # the check runs on the features as given: they must not be standardised in place
            copy=copy or check_seed is not None,
            **run,
        )
        if check_seed is not None:
            token = LABEL.set(f"seed check (seed {check_seed})")
            try:
                other = _filter(features, labels, opts, seed=check_seed, score_kept=False,
                                checkpoint=None, resume=None, copy=True, **run)  # fmt: skip
            finally:
                LABEL.reset(token)
            result.params["seed_check"] = seed_check(result, other, check_seed, ids)
        return result
    finally:
        if own_backend:
            backend.close()


_FILTER_DEFAULTS = """AFLITE on arrays, with the defaults of Algorithm 1 as published: tau 0.75, k 500
    rows, m 64, model ``linear``, no chance stop (``aflite.PRESETS["paper"]``, on block
    partitions). They are NOT the command line's: ``aflite filter`` and
    :func:`aflite.filter_dataset` start from ``aflite.PRESETS["practical"]`` (tau 0.6, k 5% of
    the rows, a stop within 0.02 of chance, model ``ridge``); ``options=aflite.PRESETS[
    "practical"]`` runs those here. The printed result names the options it ran with.

    """


def _named(fn: Callable[..., Any], name: str, head: str) -> Callable[..., Any]:
    """``fn`` under another name, its docstring after ``head``: the same code, so its
    warnings and errors point where ``fn``'s do, but ``help()`` says ``name``."""
    import types

    named = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    named.__kwdefaults__ = fn.__kwdefaults__
    named.__annotations__ = fn.__annotations__
    named.__module__, named.__qualname__ = fn.__module__, name
    named.__doc__ = head + (fn.__doc__ or "")
    return named


# the name the paper's users expect (aflite.filter), with its defaults said first
filter = _named(adversarial_filter, "filter", _FILTER_DEFAULTS)  # noqa: A001


def _n_classes(labels: Any) -> int | None:
    """The classes among ``labels``; None where they cannot be counted (prepare_runner then
    names what is wrong with them)."""
    try:
        y = np.asarray(labels)
        return len(np.unique(y)) if y.ndim == 1 else None
    except (TypeError, ValueError):  # unorderable labels (a None among strings)
        return None


def _filter(
    features: ArrayLike,
    labels: ArrayLike,
    opts: FilterOptions,
    *,
    groups: ArrayLike | None,
    seed: SeedLike,
    device: DeviceLike,
    progress: bool | Callable[[PhaseRecord], None] | None,
    score_kept: bool,
    checkpoint: Callable[[FilterState], None] | None,
    resume: FilterState | None,
    backend: Backend | None,
    copy: bool,
    threads: int | None,
    protected: ArrayLike | None = None,
    ids: ArrayLike | None = None,
) -> FilterResult:
    n_rows = np.asarray(labels).shape[0] if np.ndim(labels) else 0
    n_features = getattr(features, "shape", (None,))[0]
    if n_features is not None and n_features != n_rows:  # before any size is read on them
        raise ValueError(f"features have {n_features} rows but labels have {n_rows}")
    if protected is not None:
        protected = np.asarray(protected, dtype=bool)
        if protected.shape != (n_rows,):
            raise ValueError(f"protected must be a boolean mask of {n_rows} rows")
    # an item holds every choice, so any one item covers the answers' positions
    n_classes = None if takes_items(features, opts.model) else _n_classes(labels)
    n, _, k = opts.resolve(n_rows, n_classes)
    threshold, strategy, balance = float(opts.threshold), opts.strategy, opts.balance
    runner, classes, t = prepare_runner(
        features,
        labels,
        n_partitions=opts.n_partitions,
        model=opts.model,
        groups=groups,
        seed=seed,
        device=device,
        train_size=opts.train_size,
        backend=backend,
        copy=copy,
        partitions=opts.partitions,
        threads=threads,
        ids=ids,
    )
    params = {
        "target_size": n,
        "n_partitions": runner.n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": threshold,
        "strategy": strategy,
        "min_bias": opts.min_bias,
        "balance": balance,
        "model": runner.model.describe(),
        "model_family": runner.family.name or None,
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "device": str(runner.device),
        "grouped": groups is not None,
        "backend": "local" if backend is None else type(backend).__name__,
        "partitions": opts.partitions,
        "options": opts.described(),  # which defaults: the printed result says
    }

    ranker = EnsembleRanker(
        runner,
        threshold=threshold,
        strategy=strategy,
        balance=balance,
        noun="row" if n_classes is not None else "item",
    )
    if resume is not None:
        ranker.resume(resume)
    return run_phases(
        ranker,
        runner.labels,
        classes,
        n=n,
        k=k,
        t=t,
        min_bias=opts.min_bias,
        single_shot=strategy == "single_shot",
        protected=protected,
        state=resume,
        progress=progress,
        checkpoint=checkpoint,
        score_kept=score_kept,
        params=params,
    )
