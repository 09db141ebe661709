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

    from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "check_choices",
    "choice_chance",
    "choice_scale",
    "choice_store",
    "item_chance",
    "pad_choices",
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


def check_choices(features: Any, labels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check multiple-choice input; returns (features, answer positions int64, positions
    0..K-1 as the classes). Each failure is one ValueError naming the item."""
    x = np.asarray(features)
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
    if np.issubdtype(x.dtype, np.floating):
        step = max(1, 2**24 // max(1, k * d))
        for start in range(0, n, step):
            block = np.asarray(x[start : start + step])
            nan = np.isnan(block)
            padded = nan.all(axis=2)
            bad = (nan.any(axis=2) & ~padded) | np.isinf(block).any(axis=2)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise ValueError(
                    f"features contain NaN or inf in item {start + i}, choice {j} (a padded "
                    "choice must be NaN in every feature)"
                )
            short = (~padded).sum(axis=1) < 2
            if short.any():
                raise ValueError(f"item {start + int(np.argmax(short))} has fewer than 2 choices")
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
    valid = valid_choices(x)
    padded_answer = np.flatnonzero(~valid[np.arange(n), y])
    if len(padded_answer):
        i = padded_answer[0]
        raise ValueError(f"item {i}: answer {y[i]} points at a padded (NaN) choice")
    return x, y, np.arange(k)


def _centred(x: np.ndarray, valid: np.ndarray, s: int, step: int) -> np.ndarray:
    """Items ``s`` to ``s + step`` centred on their real choices' mean; padding 0."""
    real = valid[s : s + step, :, None]
    block = np.where(real, np.asarray(x[s : s + step], dtype=np.float64), 0.0)
    block -= block.sum(axis=1, keepdims=True) / real.sum(axis=1, keepdims=True)
    return np.where(real, block, 0.0)


def _step(k: int, d: int) -> int:
    return max(1, 2**22 // max(1, k * d))


def choice_scale(x: np.ndarray) -> np.ndarray:
    """(d,) the scale of each feature in the store (see the module docstring): 1 / the spread
    of the item-centred choices, 0 for a feature that never varies within an item."""
    n, k, d = x.shape
    valid = valid_choices(x)
    sumsq = np.zeros(d)
    for s in range(0, n, _step(k, d)):
        sumsq += (_centred(x, valid, s, _step(k, d)) ** 2).sum(axis=(0, 1))
    std = np.sqrt(sumsq / max(1, int(valid.sum())))
    # centred features have mean 0: the classifiers' rule for a constant feature, at mean 0
    return np.where(std > 1e-12, 1.0 / np.where(std > 0, std, 1), 0.0)


def choice_store(
    x: np.ndarray,
    device: torch.device,
    *,
    chunk_rows: int | None = None,
    in_place: bool = False,
    sparse_rows: bool = False,
) -> FeatureStore:
    """A store of N rows of K*d scaled, item-centred features (see the module docstring);
    padded choices become zeros: the store of the families of items. ``in_place`` and
    ``sparse_rows`` are the store's arguments, not read: the store is always a new float32
    array (the padding must not reach the caller's array), and keeps no raw rows."""
    from aflite.algorithm.numerics.store import FeatureStore

    n, k, d = x.shape
    valid = valid_choices(x)
    scale = choice_scale(x)
    out = np.empty((n, k * d), dtype=np.float32)
    step = _step(k, d)
    for s in range(0, n, step):
        block = _centred(x, valid, s, step)
        out[s : s + step] = (block * scale).reshape(len(block), k * d)
    return FeatureStore.from_standardised(out, device, chunk_rows=chunk_rows)


def choice_chance(labels: np.ndarray, n_valid: np.ndarray) -> float:
    """The accuracy of the best guess that sees only positions: for each number of choices,
    the most frequent answer position among items with that many. With a fixed K it is the
    share of the most frequent answer position, never below 1/K."""
    total = 0
    for k in np.unique(n_valid):
        total += int(np.bincount(labels[n_valid == k]).max())
    return total / max(1, len(labels))


def item_chance(features: np.ndarray, rows: np.ndarray, labels: np.ndarray) -> float:
    """The chance level of items ``rows`` (input positions) of ``features`` with answers
    ``labels`` (:func:`choice_chance`): the chance level of the families of items."""
    if np.issubdtype(features.dtype, np.floating):
        n_valid = (~np.isnan(features[rows, :, 0])).sum(axis=1)
    else:
        n_valid = np.full(len(rows), features.shape[1])
    return choice_chance(labels, n_valid)
