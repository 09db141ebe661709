from __future__ import annotations

import numpy as np
import pytest


def planted_data(n=1200, d=12, n_classes=3, share=0.3, seed=0):
    """Noise features plus one indicator column per class that reveals the label for a known
    ``share`` of rows: the kind of artifact a give-away token creates."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.normal(size=(n, d)).astype(np.float32)
    planted = rng.random(n) < share
    x[:, :n_classes] = 0.0
    x[planted, y[planted]] = 1.0
    return x, y, planted


@pytest.fixture
def planted():
    return planted_data()
