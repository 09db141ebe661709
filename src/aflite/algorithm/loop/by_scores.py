"""Filtering by a given per-example score (``aflite.filter(..., ranker=ByScores(scores))``): the
loop of :func:`adversarial_filter` with a :class:`~aflite.algorithm.loop.rankers.ScoreRanker` in
place of the ensemble."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from aflite._internal.device import resolve_device
from aflite.algorithm.loop.inputs import check_features, encode_labels
from aflite.algorithm.loop.options import FilterOptions
from aflite.algorithm.loop.predictability import phase_model_for, predictability_scores
from aflite.algorithm.loop.rankers import ScoreRanker
from aflite.algorithm.loop.result import FilterResult
from aflite.algorithm.loop.run import run_phases
from aflite.algorithm.numerics.item_store import check_choices
from aflite.types import ArrayLike, DeviceLike

__all__ = ["ByScores", "ScoreSource", "run_by_scores"]


@dataclass(frozen=True)
class ByScores:
    """The ranker of :func:`aflite.filter` (``ranker=``) that removes the easiest rows by a
    given per-example score instead of AFLITE's ensemble.

    ``scores``: one score per row (higher is easier; lower with ``lower_is_easier``), read down
    ``slice_size`` rows per phase (all at once with ``slice_size=None``); or a function of the
    current rows (sorted input positions) returning their scores, called again every phase.
    Each phase measures the representation bias of the current set as AFLITE does (the
    filter's ``n_partitions`` models of its ``model`` trained on ``train_size`` rows), so runs
    compare; with ``min_bias`` the run stops once that bias is within ``min_bias`` of the
    chance level. ``initial_predictability``: the input's predictability at the same t, when
    already measured. ``info`` goes into every phase's record, ``params`` into the result's.
    The filter's ``threshold`` and ``strategy`` do not apply: the result's stop reason is
    ``"by_score"`` when the target size is reached, and ``removed_score`` holds each removed
    row's score.

    Examples
    --------
    >>> import numpy as np, aflite
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 4)); y = rng.integers(0, 2, 200)
    >>> easy = -np.abs(x[:, 0])  # rows far from 0 on the first feature are the hard ones
    >>> res = aflite.filter(x, y, ranker=aflite.ByScores(easy), target_size=150, slice_size=None)
    >>> res.stop_reason
    'by_score'
    """

    scores: Any
    lower_is_easier: bool = False
    initial_predictability: np.ndarray | None = None
    info: dict[str, Any] | None = None
    params: dict[str, Any] | None = None


@runtime_checkable
class ScoreSource(Protocol):
    """A ranker that scores the rows itself before the loop (:class:`aflite.ByScorer`):
    ``by_scores`` gets the filter's features, labels and :class:`aflite.FilterOptions`, and
    the run's ``groups``, ``seed`` and ``device``, and returns the :class:`ByScores` to rank
    by."""

    def by_scores(self, features: Any, labels: Any, opts: Any, **run: Any) -> ByScores: ...


def run_by_scores(
    features: ArrayLike,
    labels: ArrayLike,
    by: ByScores,
    opts: FilterOptions,
    *,
    groups: ArrayLike | None,
    seed: int,
    device: DeviceLike,
    progress: Any,
    threads: int | None = None,
    score_kept: bool = True,
) -> FilterResult:
    """:func:`aflite.filter` with ``ranker=by``: the filter's loop with a
    :class:`~aflite.algorithm.loop.rankers.ScoreRanker` in place of the ensemble."""
    scores, lower_is_easier = by.scores, by.lower_is_easier
    initial_predictability, info, params = by.initial_predictability, by.info, by.params
    # the measurements' checks (a sparse matrix taken as its dense rows), as an AFLITE run's
    if np.ndim(features) == 3:  # multiple-choice items: the answers are choice positions
        x, codes, classes = check_choices(features, labels)
    else:
        x = check_features(features)
        codes, classes = encode_labels(labels, x.shape[0])
    n_input = len(codes)
    # as an AFLITE run: every class in a training part (an item holds every choice)
    n, t, k = opts.resolve(n_input, None if x.ndim == 3 else len(classes), strategy=False)
    _, _, m = phase_model_for(opts.model, opts.n_partitions, t, x.shape)
    g = None if groups is None else np.asarray(groups)

    def measure(rows: np.ndarray) -> np.ndarray:
        if initial_predictability is not None and len(rows) == n_input:
            return np.asarray(initial_predictability, dtype=np.float64)
        whole = len(rows) == n_input  # the input as given: no copy
        return predictability_scores(
            x if whole else x[rows],
            codes if whole else codes[rows],
            n_partitions=m,
            train_size=t,
            seed=seed,
            device=device,
            model=opts.model,
            partitions=opts.partitions,
            threads=threads,
            groups=None if g is None else (g if whole else g[rows]),
        ).scores

    given = scores if callable(scores) else np.asarray(scores, dtype=np.float64)
    if not callable(given) and given.shape != (n_input,):
        raise ValueError(f"scores must hold one value per row ({n_input}), got {given.shape}")
    if not callable(given) and not np.isfinite(given).all():
        raise ValueError(
            f"scores: row {int(np.flatnonzero(~np.isfinite(given))[0])} is not a number"
        )
    ranker = ScoreRanker(
        given,
        measure=measure,
        codes=codes,
        lower_is_easier=lower_is_easier,
        balance=opts.balance,
        seed=seed,
        info=info,
    )
    model = opts.model
    defaults = {
        "target_size": n,
        "n_partitions": m,
        "train_size": t,
        "slice_size": k,
        "threshold": None,
        "strategy": "by_score",
        "min_bias": opts.min_bias,
        "balance": opts.balance,
        "model": model if isinstance(model, str) else repr(model),
        "seed": seed,
        "device": str(resolve_device(device)),
        "grouped": groups is not None,
        "partitions": opts.partitions,
        "backend": "local",
    }
    return run_phases(
        ranker,
        codes,
        classes,
        n=n,
        k=min(k, n_input - n),
        t=t,
        min_bias=opts.min_bias,
        progress=progress,
        params=defaults | (params or {}),
        score_kept=score_kept,
    )
