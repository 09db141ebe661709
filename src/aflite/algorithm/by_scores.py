"""Filtering by a given per-example score (``aflite.filter(..., ranker=ByScores(scores))``): the
loop of :func:`adversarial_filter` with a :class:`~aflite.algorithm.rankers.ScoreRanker` in
place of the ensemble."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite._internal.device import resolve_device
from aflite.algorithm._validation import (
    check_features,
    check_fraction,
    encode_labels,
    resolve_filter_sizes,
)
from aflite.algorithm.choices import check_choices
from aflite.algorithm.loop import run_phases
from aflite.algorithm.rankers import ScoreRanker
from aflite.algorithm.result import FilterResult
from aflite.algorithm.scoring import predictability_scores
from aflite.algorithm.selection import BALANCE
from aflite.types import ArrayLike, Balance, DeviceLike, Size

__all__ = ["ByScores", "run_by_scores"]


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


def run_by_scores(
    features: ArrayLike,
    labels: ArrayLike,
    by: ByScores,
    *,
    target_size: Size,
    slice_size: Size | None,
    balance: Balance,
    min_bias: float | None,
    n_partitions: int,
    train_size: Size,
    model: Any,
    groups: ArrayLike | None,
    seed: int,
    device: DeviceLike,
    progress: Any,
    partitions: str = "blocks",
    threads: int | None = None,
    score_kept: bool = True,
) -> FilterResult:
    """:func:`aflite.filter` with ``ranker=by``: the filter's loop with a
    :class:`~aflite.algorithm.rankers.ScoreRanker` in place of the ensemble."""
    scores, lower_is_easier = by.scores, by.lower_is_easier
    initial_predictability, info, params = by.initial_predictability, by.info, by.params
    # the measurements' checks (a sparse matrix taken as its dense rows), as an AFLITE run's
    if np.ndim(features) == 3:  # multiple-choice items: the answers are choice positions
        x, codes, classes = check_choices(features, labels)
    else:
        x = check_features(features)
        codes, classes = encode_labels(labels, x.shape[0])
    n_input = len(codes)
    n, t, k = resolve_filter_sizes(
        n_input, target_size=target_size, train_size=train_size,
        slice_size=1 if slice_size is None else slice_size,
        # as an AFLITE run: every class in a training part (an item holds every choice)
        n_classes=None if x.ndim == 3 else len(classes),
    )  # fmt: skip
    k = n_input - n if slice_size is None else k  # no slice size: one slice to the target
    if min_bias is not None:
        check_fraction(min_bias, "min_bias")
    if balance not in BALANCE:
        raise ValueError(f"balance must be None or 'classes', got {balance!r}")
    g = None if groups is None else np.asarray(groups)

    def measure(rows: np.ndarray) -> np.ndarray:
        if initial_predictability is not None and len(rows) == n_input:
            return np.asarray(initial_predictability, dtype=np.float64)
        whole = len(rows) == n_input  # the input as given: no copy
        return predictability_scores(
            x if whole else x[rows], codes if whole else codes[rows],
            n_partitions=n_partitions, train_size=t, seed=seed, device=device, model=model,
            partitions=partitions, threads=threads,
            groups=None if g is None else (g if whole else g[rows]),
        ).scores  # fmt: skip

    given = scores if callable(scores) else np.asarray(scores, dtype=np.float64)
    if not callable(given) and given.shape != (n_input,):
        raise ValueError(f"scores must hold one value per row ({n_input}), got {given.shape}")
    ranker = ScoreRanker(
        given, measure=measure, codes=codes, lower_is_easier=lower_is_easier, balance=balance,
        seed=seed, info=info,
    )  # fmt: skip
    defaults = {
        "target_size": n,
        "n_partitions": n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": None,
        "strategy": "by_score",
        "min_bias": min_bias,
        "balance": balance,
        "model": model if isinstance(model, str) else repr(model),
        "seed": seed,
        "device": str(resolve_device(device)),
        "grouped": groups is not None,
        "partitions": partitions,
        "backend": "local",
    }
    return run_phases(
        ranker, codes, classes, n=n, k=min(k, n_input - n), t=t, min_bias=min_bias,
        progress=progress, params=defaults | (params or {}), score_kept=score_kept,
    )  # fmt: skip
