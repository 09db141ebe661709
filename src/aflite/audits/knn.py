"""Nearest-neighbour cosine distances by class (Le Bras et al., ICLR draft, Table 3)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite.audits.base import AuditResult

__all__ = ["knn_distances"]


def knn_distances(
    features: Any,
    labels: Any,
    *,
    ks: tuple[int, ...] = (1, 5, 10, 50),
    holdout: float = 0.2,
    max_rows: int = 20_000,
    seed: int = 0,
    name: str = "knn distances",
    rows: np.ndarray | None = None,
) -> AuditResult:
    """Mean cosine distance from held-out rows to their top-k nearest training rows, within
    their own class and against the other classes, per class.

    Higher within-class distances mean fewer near-duplicates that a model could match on.
    ``rows`` restricts both to those row indices (``labels`` is indexed by input row). Rows
    beyond ``max_rows`` are subsampled before any feature is read, so a memory-mapped matrix
    is never loaded whole.
    """
    y = np.asarray(labels)
    idx = np.arange(len(y)) if rows is None else np.asarray(rows, dtype=np.int64)
    rng = np.random.default_rng(seed)
    if len(idx) > max_rows:
        idx = np.sort(rng.choice(idx, max_rows, replace=False))
    if not hasattr(features, "shape"):
        features = np.asarray(features)
    x = np.asarray(features[idx], dtype=np.float32)
    y = y[idx]
    n = len(y)
    perm = rng.permutation(n)
    n_test = max(1, int(round(holdout * n)))
    test, train = perm[:n_test], perm[n_test:]
    xt = torch.nn.functional.normalize(torch.from_numpy(np.array(x)), dim=1)
    classes = np.unique(y)
    header = ["class", "neighbours"] + [f"top-{k}" for k in ks]
    rows: list[list[Any]] = []
    details: dict[str, Any] = {}
    for c in classes:
        q = xt[test[y[test] == c]]
        for relation, pool in (
            ("same class", train[y[train] == c]),
            ("other classes", train[y[train] != c]),
        ):
            if len(q) == 0 or len(pool) == 0:
                continue
            kmax = min(max(ks), len(pool))
            dist = 1.0 - (q @ xt[pool].T)
            nearest = torch.topk(dist, kmax, dim=1, largest=False).values
            means = [float(nearest[:, : min(k, kmax)].mean()) for k in ks]
            rows.append([str(c), relation] + means)
            details[f"{c}|{relation}"] = means
    within = [r[2] for r in rows if r[1] == "same class"]
    summary = f"mean top-{ks[0]} within-class cosine distance {np.mean(within):.3f} over {len(classes)} classes"
    return AuditResult(name, summary, header, rows, details)
