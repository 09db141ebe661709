"""Checks of the arrays the algorithm is given: the features, the labels, the groups and the
row ids. Each failure is one ValueError naming what is wrong."""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.algorithm.numerics.shards import ShardedFeatures

__all__ = ["canonical_ranks", "check_features", "encode_groups", "encode_labels"]


def check_features(features: Any) -> Any:
    """``features`` as a non-empty 2-D array of finite real numbers (else a ValueError). A
    scipy.sparse matrix (scikit-learn's TF-IDF output) is taken as its dense rows when they
    fit in a quarter of memory, else refused by name. A
    :class:`~aflite.algorithm.numerics.shards.ShardedFeatures` is taken as it is: its rows
    are checked where they are read (a shard's worker)."""
    if isinstance(features, ShardedFeatures):
        if 0 in features.shape:
            raise ValueError(f"features must be non-empty, got shape {features.shape}")
        return features
    x = _dense_if_sparse(features)
    x = np.asarray(x)
    if x.ndim == 1:
        raise ValueError(
            f"features must be 2-D (n_samples, n_features), got shape {x.shape}; "
            "use features.reshape(-1, 1) for a single feature"
        )
    if x.ndim != 2:
        raise ValueError(f"features must be 2-D (n_samples, n_features), got shape {x.shape}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"features must be non-empty, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"features must be real numbers, got dtype {x.dtype}")
    if np.issubdtype(x.dtype, np.floating):
        # chunked so a memory-mapped matrix is not materialised as one boolean copy
        step = max(1, 2**24 // max(1, x.shape[1]))
        for start in range(0, x.shape[0], step):
            block = x[start : start + step]
            if not np.isfinite(block).all():
                bad = start + int(np.argwhere(~np.isfinite(block))[0][0])
                raise ValueError(f"features contain NaN or inf (first at row {bad})")
    return x


def _dense_if_sparse(features: Any) -> Any:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return features
    if not sp.issparse(features):
        return features
    n, d = features.shape
    from aflite.algorithm.numerics.store import memory_quarter_bytes

    if n * d * 4 > memory_quarter_bytes():
        raise ValueError(
            f"features: a scipy.sparse matrix of {n} x {d} does not fit densely in a quarter "
            "of memory; fewer features (max_features), hashed or SVD-reduced ones do"
        )
    return features.astype(np.float32).toarray()


def encode_labels(labels: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (class codes, classes). Labels may be strings or integers."""
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {y.shape}")
    if len(y) != n_rows:
        raise ValueError(f"features have {n_rows} rows but labels have {len(y)}")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("labels contain NaN")
    if y.dtype == object:
        bad = next(
            (i for i, v in enumerate(y) if v is None or (isinstance(v, float) and v != v)), None
        )
        if bad is not None:
            raise ValueError(f"labels: row {bad} is {'None' if y[bad] is None else 'NaN'}")
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in y})
        raise ValueError(f"labels mix types that cannot be ordered: {', '.join(kinds)}") from None
    if len(classes) < 2:
        raise ValueError(f"labels must have at least two classes, got {len(classes)}")
    return codes.astype(np.int64), classes


def encode_groups(groups: Any, n_rows: int) -> np.ndarray | None:
    """Group codes 0..k-1, one per row (None for no groups)."""
    if groups is None:
        return None
    # a list of texts as objects: fixed-width text would make every row as wide as the longest
    g = groups if isinstance(groups, np.ndarray) else np.asarray(groups, dtype=object)
    if g.ndim != 1 or len(g) != n_rows:
        raise ValueError(f"groups must be 1-D with one id per row ({n_rows}), got shape {g.shape}")
    _, codes = np.unique(g, return_inverse=True)
    return codes.astype(np.int64)


def canonical_ranks(ids: Any, n_rows: int) -> np.ndarray | None:
    """Each row's rank when the rows are sorted by id (as text), or None without ids. The
    filter draws its partitions in this order, so the same rows in another order give the
    same result."""
    if ids is None:
        return None
    keys = np.asarray([str(i) for i in ids], dtype=object)
    if keys.ndim != 1 or len(keys) != n_rows:
        raise ValueError(f"ids must be 1-D with one id per row ({n_rows}), got {len(keys)}")
    order = np.argsort(keys, kind="stable")
    if len(keys) > 1 and bool((keys[order][1:] == keys[order][:-1]).any()):
        raise ValueError("ids must be unique (as text)")
    ranks = np.empty(n_rows, dtype=np.int64)
    ranks[order] = np.arange(n_rows)
    return ranks
