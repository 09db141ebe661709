"""Multiple-choice items as the filter stores them: features of shape (N, K, d), one row per
choice; their checks, the item store and the chance level of a set of items.

Item i offers up to K choices; ``features[i, j]`` represents choice j (with its context, as
the representation decides) and ``labels[i]`` is the 0-based position of the right choice.
Items with fewer choices are padded: a padded choice is a row of NaN (:func:`pad_choices`
builds such an array), masked out of every softmax and never predicted.

Each item's choices are stored centred on their own mean (over its real choices): a softmax
over an item's choices ignores a shift they share, so no fit or prediction changes, and the
float32 rows keep only what tells the choices apart (with context-and-choice encodings, the
shared context is most of each vector). Each feature is then scaled by its spread among an
item's choices: the standard deviation of the centred choices of all items, so the L2 penalty
treats features alike, as the classifiers' standardisation does, and a feature that varies
only between items (which the model cannot use) does not set the scale. One scale for all
answer positions: a transform per position would hand the model an offset per position, the
answer-position artifact that a separate audit reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

    from aflite.algorithm.numerics.store import FeatureStore, StoredRows

__all__ = [
    "check_answers",
    "check_choices",
    "choice_chance",
    "choice_scale",
    "choice_store",
    "item_chance",
    "item_moments",
    "item_neg",
    "item_rows",
    "pad_choices",
    "scale_of",
    "valid_choices",
]


def pad_choices(items: Sequence[Any]) -> np.ndarray:
    """(N, K, d) float array from N arrays of shape (K_i, d), padded with NaN rows up to the
    largest K_i."""
    arrays = [np.asarray(a, dtype=np.float64) for a in items]
    if not arrays or any(a.ndim != 2 for a in arrays):
        raise ValueError("pad_choices needs a non-empty list of (n_choices, n_features) arrays")
    dims = {a.shape[1] for a in arrays}
    if len(dims) != 1:
        raise ValueError(
            f"every item's choices need the same number of features, got {sorted(dims)}"
        )
    k = max(a.shape[0] for a in arrays)
    out = np.full((len(arrays), k, dims.pop()), np.nan)
    for i, a in enumerate(arrays):
        out[i, : len(a)] = a
    return out


def valid_choices(x: np.ndarray) -> np.ndarray:
    """(N, K) bool: True for a real choice, False for a NaN-padded one (checked rows only)."""
    return (
        ~np.isnan(x[:, :, 0]) if np.issubdtype(x.dtype, np.floating) else np.ones(x.shape[:2], bool)
    )


def check_choices(
    features: Any, labels: Any, *, in_shards: bool = False
) -> tuple[Any, np.ndarray, np.ndarray]:
    """Check multiple-choice input; returns (features, answer positions int64, positions
    0..K-1 as the classes). Each failure is one ValueError naming the item. A
    :class:`~aflite.algorithm.numerics.shards.ShardedFeatures` is read whole, unless the
    caller reads it shard by shard (``in_shards``: the filter's store, where its items are
    checked as they are read, :func:`item_moments`, and each answer against its item's real
    choices when the store is attached, :func:`check_answers`)."""
    from aflite.algorithm.numerics.shards import ShardedFeatures

    sharded = in_shards and isinstance(features, ShardedFeatures)
    if isinstance(features, ShardedFeatures) and not sharded:
        features = features[:]
    x = features if sharded else np.asarray(features)
    if x.ndim != 3:
        raise ValueError(
            f"the choice-wise model needs features of shape (n_items, n_choices, n_features), "
            f"got shape {x.shape}"
        )
    n, k, d = x.shape
    if n == 0 or d == 0:
        raise ValueError(f"features must be non-empty, got shape {x.shape}")
    if k < 2:
        raise ValueError(f"multiple-choice items need at least 2 choices, got {k}")
    if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"features must be real numbers, got dtype {x.dtype}")
    if np.issubdtype(x.dtype, np.floating) and not sharded:
        step = max(1, 2**24 // max(1, k * d))
        for start in range(0, n, step):
            _check_values(x[start : start + step], start)
    y = np.asarray(labels)
    if y.ndim != 1 or len(y) != n:
        raise ValueError(f"labels must be 1-D with one answer per item ({n}), got shape {y.shape}")
    if y.dtype.kind not in "iu" and not (
        y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all()
    ):
        raise ValueError(
            "multiple-choice labels must be 0-based answer positions (integers), "
            f"got dtype {y.dtype}"
        )
    y = y.astype(np.int64)
    out = np.flatnonzero((y < 0) | (y >= k))
    if len(out):
        raise ValueError(f"item {out[0]}: answer {y[out[0]]} is not a choice position in [0, {k})")
    if not sharded:
        check_answers(valid_choices(x), y)
    return x, y, np.arange(k)


def _check_values(block: Any, start: int) -> None:
    """NaN only in every feature of a padded choice, no inf, at least 2 real choices an item
    (items counted from ``start``)."""
    block = np.asarray(block)
    if not np.issubdtype(block.dtype, np.floating):
        return
    nan = np.isnan(block)
    padded = nan.all(axis=2)
    bad = (nan.any(axis=2) & ~padded) | np.isinf(block).any(axis=2)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"features contain NaN or inf in item {start + i}, choice {j}, a real choice "
            "(a padded choice is NaN in every feature)"
        )
    short = (~padded).sum(axis=1) < 2
    if short.any():
        raise ValueError(f"item {start + int(np.argmax(short))} has fewer than 2 choices")


def check_answers(valid: np.ndarray, y: np.ndarray, rows: np.ndarray | None = None) -> None:
    """Every answer a real choice of its item: ``valid`` (n, K); ``rows``: the items' numbers
    (default 0..n-1)."""
    padded_answer = np.flatnonzero(~valid[np.arange(len(y)), y])
    if len(padded_answer):
        i = padded_answer[0]
        item = i if rows is None else rows[i]
        raise ValueError(f"item {item}: answer {y[i]} points at a padded (NaN) choice")


def _centred(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Items ``x`` centred on their real choices' mean (``valid``); padding 0."""
    real = valid[:, :, None]
    block = np.where(real, np.asarray(x, dtype=np.float64), 0.0)
    block -= block.sum(axis=1, keepdims=True) / real.sum(axis=1, keepdims=True)
    return np.where(real, block, 0.0)


def _step(k: int, d: int) -> int:
    return max(1, 2**22 // max(1, k * d))


def item_moments(
    x: Any, first: int = 0, *, check: bool = False
) -> tuple[np.ndarray, int, np.ndarray]:
    """One shard's part of the store's scale: the (d,) sum of squares of its item-centred real
    choices, how many real choices it has, and its (n, K) real choices. ``check``: a
    ValueError names the first bad item (counted from ``first``), for items no earlier check
    read (a sharded input's)."""
    n, k, d = x.shape
    sumsq, count = np.zeros(d), 0
    valid = np.empty((n, k), dtype=bool)
    step = _step(k, d)
    for s in range(0, n, step):
        block = np.asarray(x[s : s + step])
        if check:
            _check_values(block, first + s)
        real = valid_choices(block)
        valid[s : s + len(block)] = real
        sumsq += (_centred(block, real) ** 2).sum(axis=(0, 1))
        count += int(real.sum())
    return sumsq, count, valid


def scale_of(parts: Sequence[tuple[np.ndarray, int]]) -> np.ndarray:
    """(d,) the scale of each feature in the store (see the module docstring) from every
    shard's (sum of squares, real choices) of :func:`item_moments`, added in shard order (on
    a cluster the same): 1 / the spread of the item-centred choices, 0 for a feature that
    never varies within an item."""
    sumsq = np.zeros_like(parts[0][0])
    count = 0
    for part_sumsq, part_count in parts:
        sumsq = sumsq + part_sumsq
        count += part_count
    std = np.sqrt(sumsq / max(1, count))
    # centred features have mean 0: the classifiers' rule for a constant feature, at mean 0
    return np.where(std > 1e-12, 1.0 / np.where(std > 0, std, 1), 0.0)


def _shard_moments(x: Any) -> list[tuple[np.ndarray, int, np.ndarray]]:
    from aflite.algorithm.numerics.shards import ShardedFeatures, shard_bounds

    sharded = isinstance(x, ShardedFeatures)
    bounds = shard_bounds(x)
    return [
        item_moments(x.part(i) if sharded else x[a:b], int(a), check=sharded)
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    ]


def choice_scale(x: Any) -> np.ndarray:
    """(d,) the scale of each feature in the store of items ``x`` (:func:`scale_of`)."""
    return scale_of([(sumsq, count) for sumsq, count, _ in _shard_moments(x)])


def item_rows(
    x: Any, valid: np.ndarray, scale: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """(n, K*d) float32 (into ``out`` if given): items ``x`` centred on their real choices and
    scaled, padding 0."""
    n, k, d = x.shape
    out = np.empty((n, k * d), dtype=np.float32) if out is None else out
    step = _step(k, d)
    for s in range(0, n, step):
        block = _centred(np.asarray(x[s : s + step]), valid[s : s + step])
        out[s : s + step] = (block * scale).reshape(len(block), k * d)
    return out


def choice_store(
    x: Any,
    device: torch.device,
    *,
    chunk_rows: int | None = None,
    in_place: bool = False,
    sparse_rows: bool = False,
) -> FeatureStore:
    """A store of N rows of K*d scaled, item-centred features (see the module docstring);
    padded choices become zeros: the store of the families of items, which knows each item's
    real choices (:meth:`~aflite.algorithm.numerics.store.StoredRows.real_choices`).
    ``in_place`` and ``sparse_rows`` are the store's arguments, not read: the store is always
    a new float32 array (the padding must not reach the caller's array), and keeps no raw
    rows. An input in shards (a :class:`~.shards.ShardedFeatures`, or more than
    ``SHARD_ROWS`` items) is read and scaled shard by shard, as a cluster's workers do."""
    from aflite.algorithm.numerics.shards import ShardedFeatures, shard_bounds
    from aflite.algorithm.numerics.store import FeatureStore

    moments = _shard_moments(x)
    scale = scale_of([(sumsq, count) for sumsq, count, _ in moments])
    valid = np.concatenate([v for _, _, v in moments])
    bounds = shard_bounds(x)
    sharded = isinstance(x, ShardedFeatures)
    n, k, d = x.shape
    rows = np.empty((n, k * d), dtype=np.float32)  # each shard's items written in place
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        item_rows(x.part(i) if sharded else x[a:b], moments[i][2], scale, out=rows[a:b])
    store = FeatureStore.from_standardised(rows, device, chunk_rows=chunk_rows, bounds=bounds)
    store.hold_choices(valid)
    return store


def item_neg(store: StoredRows) -> torch.Tensor:
    """(N_store, K) on the store's device: 0 for each stored item's real choices, ``NEG`` for
    its padded ones (what every softmax and prediction over an item's choices masks with)."""
    import torch

    from aflite.algorithm.numerics.margins import NEG

    real = torch.as_tensor(store.real_choices(store.rows), device=store.device)
    return torch.where(real, 0.0, NEG)


def choice_chance(labels: np.ndarray, n_valid: np.ndarray) -> float:
    """The accuracy of the best guess that sees only positions: for each number of choices,
    the most frequent answer position among items with that many. With a fixed K it is the
    share of the most frequent answer position, never below 1/K."""
    total = 0
    for k in np.unique(n_valid):
        total += int(np.bincount(labels[n_valid == k]).max())
    return total / max(1, len(labels))


def item_chance(store: StoredRows, rows: np.ndarray, labels: np.ndarray) -> float:
    """The chance level of items ``rows`` (input positions) of ``store`` with answers
    ``labels`` (:func:`choice_chance`): the chance level of the families of items."""
    return choice_chance(labels, store.real_choices(rows).sum(axis=1))
