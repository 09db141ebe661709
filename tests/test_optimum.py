"""AFOPT by enumeration, as a reference for AFLITE on tiny sets."""

from __future__ import annotations

import numpy as np
import pytest

import aflite


def _tiny(seed=0):
    rng = np.random.default_rng(seed)
    n = 16
    y = np.array([0, 1] * 8)
    x = rng.normal(size=(n, 3))
    biased = np.arange(n) < 6  # six rows carry the label in feature 0
    x[biased, 0] = np.where(y[biased] == 1, 3.0, -3.0)
    return x, y, biased


@pytest.mark.slow
def test_optimum_is_no_worse_than_any_other_subset_and_avoids_biased_rows():
    x, y, biased = _tiny()
    opt = aflite.optimum(x, y, target_size=10, train_size=4, n_partitions=32, seed=0)
    assert len(opt.subset) >= 10
    assert opt.n_evaluated == sum(__import__("math").comb(16, s) for s in range(10, 17))
    # Re-estimated on fresh partitions (not the ones the enumeration minimised over), the
    # optimum's subset beats the full set clearly and each of 200 random admissible subsets.
    rng = np.random.default_rng(5)
    others = np.zeros((200, 16), bool)
    for row in others:
        row[rng.choice(16, rng.integers(10, 17), replace=False)] = True
    chosen = np.zeros((1, 16), bool)
    chosen[0, opt.subset] = True
    fresh = aflite.subset_bias(
        x,
        y,
        np.vstack([chosen, np.ones((1, 16), bool), others]),
        n_partitions=512,
        train_size=4,
        seed=1,
    )
    assert fresh[0] < fresh[1] - 0.1
    assert fresh[0] < fresh[2:].min()
    assert biased[opt.subset].sum() <= 3


@pytest.mark.slow
def test_aflite_is_close_to_the_optimum_on_a_tiny_set():
    x, y, _ = _tiny()
    opt = aflite.optimum(x, y, target_size=10, train_size=4, n_partitions=32, seed=0)
    res = aflite.filter(
        x, y, target_size=10, train_size=4, slice_size=1, threshold=0.0, n_partitions=64, seed=0
    )
    mask = np.zeros((1, 16), bool)
    mask[0, res.kept] = True
    ours = aflite.subset_bias(x, y, mask, n_partitions=256, train_size=4, seed=1)[0]
    best = np.zeros((1, 16), bool)
    best[0, opt.subset] = True
    best_bias = aflite.subset_bias(x, y, best, n_partitions=256, train_size=4, seed=1)[0]
    # Stated margin: within 0.12 of the optimum's bias, re-estimated with fresh partitions.
    assert ours <= best_bias + 0.12


def test_optimum_refuses_large_problems():
    x = np.zeros((30, 2))
    y = np.array([0, 1] * 15)
    with pytest.raises(ValueError, match="limited to 24 rows"):
        aflite.optimum(x, y, target_size=20, train_size=4)
    x, y, _ = _tiny()
    with pytest.raises(ValueError, match="max_subsets"):
        aflite.optimum(x, y, target_size=4, train_size=2, max_subsets=1000)


@pytest.mark.parametrize("model", ["ridge", "auto", aflite.RidgeEnsemble()])
def test_subset_bias_names_the_one_family_it_runs(model):
    x, y, _ = _tiny()
    every = np.ones((1, len(y)), dtype=bool)
    with pytest.raises(ValueError, match="support the model family linear only"):
        aflite.subset_bias(x, y, every, train_size=2, model=model)
    by_name = aflite.subset_bias(x, y, every, train_size=2, n_partitions=8, model="linear")
    given = aflite.subset_bias(
        x, y, every, train_size=2, n_partitions=8, model=aflite.LinearEnsemble()
    )
    assert np.array_equal(by_name, given)
