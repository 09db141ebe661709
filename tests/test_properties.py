"""Properties that must hold for any input (Hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import aflite
from aflite.algorithm.loop.partitions import train_masks

_cfg = settings(max_examples=15, deadline=None)


@st.composite
def problems(draw):
    n = draw(st.integers(40, 160))
    d = draw(st.integers(1, 6))
    c = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    y[:c] = np.arange(c)  # every class present
    x = rng.normal(size=(n, d)) + draw(st.floats(0, 2)) * y[:, None]
    train = draw(st.integers(c, max(c, n // 4)))  # a part as large as the classes, at least
    target = draw(st.integers(train + 1, n - 2))
    k = draw(st.integers(1, 20))
    tau = draw(st.sampled_from([0.0, 0.5, 0.75, 1.0]))
    strategy = draw(st.sampled_from(["slicing", "sampling", "greedy"]))
    return (
        x,
        y,
        dict(
            target_size=target,
            train_size=train,
            slice_size=k,
            threshold=tau,
            strategy=strategy,
            n_partitions=draw(st.integers(1, 8)),
            seed=seed,
        ),
    )


@pytest.mark.slow
@_cfg
@given(problems())
def test_filter_invariants(problem):
    x, y, kw = problem
    res = aflite.filter(x, y, **kw)
    n = len(y)
    kept, removed = res.kept, res.removed
    # every input row ends up in exactly one of kept / removed
    assert len(np.intersect1d(kept, removed)) == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([kept, removed])), np.arange(n))
    assert len(kept) >= kw["target_size"]
    # scores are fractions
    assert np.all((res.removed_score >= 0) & (res.removed_score <= 1))
    finite = res.kept_scores[~np.isnan(res.kept_scores)]
    assert np.all((finite >= 0) & (finite <= 1))
    # sizes never increase and each phase removes at most k rows, all at or above tau
    sizes = [h.size_before for h in res.history]
    assert all(a > b for a, b in zip(sizes, sizes[1:]))
    k = 1 if kw["strategy"] == "greedy" else kw["slice_size"]
    assert all(h.n_removed <= k for h in res.history)
    assert np.all(res.removed_score >= kw["threshold"])
    # the stop rule
    if res.stop_reason == "target_size":
        assert len(kept) == kw["target_size"]
    elif res.stop_reason == "threshold":
        last = res.history[-1]
        assert last.n_removed < min(k, last.size_before - kw["target_size"])
    else:
        pytest.fail(f"unexpected stop reason {res.stop_reason}")


@pytest.mark.slow
@_cfg
@given(problems())
def test_same_seed_same_result(problem):
    x, y, kw = problem
    a = aflite.filter(x, y, **kw)
    b = aflite.filter(x, y, **kw)
    np.testing.assert_array_equal(a.kept, b.kept)
    np.testing.assert_array_equal(a.removed, b.removed)
    np.testing.assert_array_equal(a.removed_score, b.removed_score)


@_cfg
@given(st.integers(20, 300), st.integers(1, 40), st.integers(1, 10), st.integers(0, 2**16))
def test_groups_never_straddle_a_split(n, n_groups, m, seed):
    rng = np.random.default_rng(seed)
    groups = torch.as_tensor(rng.integers(0, n_groups, n))
    groups = torch.unique(groups, return_inverse=True)[1]
    t = int(rng.integers(1, n))
    gen = torch.Generator().manual_seed(seed)
    mask = train_masks(n, m, t, generator=gen, device=torch.device("cpu"), groups=groups)
    for g in torch.unique(groups):
        rows = mask[groups == g]
        assert bool((rows == rows[0]).all())
    sizes = torch.bincount(groups)
    # within one group of t, and exactly t when singletons can absorb the rounding
    assert bool(((mask.sum(0) - t).abs() < sizes.max()).all())
    n_single = int((sizes == 1).sum())
    if min(t / n, 1 - t / n) * n_single >= int(sizes.max()):
        assert bool((mask.sum(0) == t).all())


@_cfg
@given(st.integers(30, 200), st.integers(1, 8), st.integers(0, 2**16))
def test_partitions_hold_exactly_t_rows_and_differ(n, m, seed):
    t = max(1, n // 3)
    gen = torch.Generator().manual_seed(seed)
    mask = train_masks(n, m, t, generator=gen, device=torch.device("cpu"))
    assert bool((mask.sum(0) == t).all())
    if m > 1:
        # partitions are drawn independently, not re-seeded copies of each other
        assert not all(bool((mask[:, 0] == mask[:, j]).all()) for j in range(1, m))


def test_grouped_filter_keeps_groups_together_in_every_phase():
    rng = np.random.default_rng(0)
    n = 300
    groups = np.repeat(np.arange(100), 3)  # e.g. three hypotheses per premise
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, 4)) + y[:, None]
    ps = aflite.predictability_scores(x, y, groups=groups, n_partitions=8, train_size=90)
    for j in range(8):
        col = ps.train_mask[:, j].reshape(100, 3)
        assert np.all(col.all(axis=1) | (~col).all(axis=1))
    res = aflite.filter(x, y, groups=groups, target_size=150, train_size=60, slice_size=30)
    assert len(res.kept) >= 150


def test_grouped_partitions_train_every_row_equally_often():
    # mixed group sizes: rows of big groups must not train less often than singletons
    sizes = [1] * 200 + [3] * 100 + [10] * 30 + [40] * 5
    groups = torch.as_tensor(np.repeat(np.arange(len(sizes)), sizes))
    n, t = len(groups), 250
    mask = train_masks(
        n,
        1500,
        t,
        generator=torch.Generator().manual_seed(0),
        device=torch.device("cpu"),
        groups=groups,
    )
    assert bool((mask.sum(0) == t).all())  # exact t: enough singletons to absorb rounding
    share = mask.mean(dim=1).numpy()
    g = groups.numpy()
    for size in (1, 3, 10, 40):
        rows = np.isin(g, np.flatnonzero(np.asarray(sizes) == size))
        # 1,500 draws: the binomial standard error of a group's share is about 0.011
        assert abs(share[rows].mean() - t / n) < 0.01, size
