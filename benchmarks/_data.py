"""Synthetic features shaped like sentence embeddings: correlated, with a decaying spectrum.

Isotropic Gaussian features flatter an iterative solver (they converge in a few steps); real
embeddings are strongly anisotropic, which is what makes per-fit solvers slow.
"""

from __future__ import annotations

import numpy as np


def embedding_like(n: int, d: int = 1024, n_classes: int = 3, *, rank: int = 256, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    spectrum = 1.0 / np.arange(1, rank + 1) ** 0.7
    mix = (rng.normal(size=(rank, d)) * spectrum[:, None]).astype(np.float32)
    means = (rng.normal(size=(n_classes, rank)) * 0.15).astype(np.float32)
    x = np.empty((n, d), dtype=np.float32)
    step = 65_536
    for s in range(0, n, step):
        z = rng.standard_normal((min(step, n - s), rank), dtype=np.float32) + means[y[s : s + step]]
        x[s : s + step] = z @ mix + 0.05 * rng.standard_normal((len(z), d), dtype=np.float32)
    return x, y
