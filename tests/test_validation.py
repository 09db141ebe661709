"""Bad input raises one clear ValueError."""

from __future__ import annotations

import numpy as np
import pytest

import aflite

X = np.random.default_rng(0).normal(size=(100, 4))
Y = np.array([0, 1] * 50)
OK = dict(target_size=50, train_size=20)


@pytest.mark.parametrize(
    "features, labels, kwargs, message",
    [
        (X, Y[:90], OK, "100 rows but labels have 90"),
        (np.where(np.arange(400).reshape(100, 4) == 17, np.nan, X), Y, OK, "NaN or inf"),
        (np.where(np.arange(400).reshape(100, 4) == 17, np.inf, X), Y, OK, "NaN or inf"),
        (X, np.zeros(100), OK, "at least two classes"),
        (X, Y, dict(target_size=100, train_size=20), "target_size .100. must be smaller"),
        (X, Y, dict(target_size=150, train_size=20), "target_size"),
        (X, Y, dict(target_size=50, train_size=100), "train_size .100. must be smaller"),
        (X, Y, dict(target_size=50, train_size=1.5), "fraction must be in"),
        (X, Y, dict(OK, threshold=1.5), "threshold: must be in"),
        (X, Y, dict(OK, threshold=-0.1), "threshold: must be in"),
        (X, Y, dict(OK, slice_size=0), "slice_size: must be at least 1 row"),
        (X, Y, dict(OK, strategy="best"), "strategy: unknown value .best.: choose one of slicing"),
        (X, Y, dict(OK, model="forest"), "unknown model"),
        (X, Y, dict(OK, n_partitions=0), "n_partitions"),
        (X, Y, dict(OK, seed=-1), "seed"),
        (X, Y, dict(OK, device="tpu"), "device"),
        (X[:, 0], Y, OK, "must be 2-D"),
        (np.array([["a"] * 4] * 100), Y, OK, "real numbers"),
        (X, Y, dict(OK, groups=np.arange(5)), "groups"),
    ],
)
def test_bad_input_raises_one_clear_error(features, labels, kwargs, message):
    with pytest.raises(ValueError, match=message):
        aflite.filter(features, labels, **kwargs)


def test_fractions_resolve_against_input_size():
    res = aflite.filter(X, Y, target_size=0.5, train_size=0.2, slice_size=5, threshold=0.0)
    assert res.params["target_size"] == 50 and res.params["train_size"] == 20
    assert len(res.kept) == 50
