"""Block partitions: the design's guarantees, the block passes against the dense pass, and
the same result at any thread count."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import planted_data
from test_solver import snli_minilm, snli_ngrams

import aflite
from aflite.algorithm.loop.partitions import block_design
from aflite.algorithm.models.linear.block_pass import block_objective
from aflite.algorithm.models.linear.primal import _objective, _to_rows, _to_stacked
from aflite.algorithm.numerics.blocks import plan_blocks
from aflite.algorithm.numerics.store import FeatureStore

CPU = torch.device("cpu")


def _design(n, p, t, b, seed=0, groups=None):
    gen = torch.Generator().manual_seed(seed)
    return block_design(n, p, t, block_rows=b, generator=gen, device=CPU, groups=groups)


@pytest.mark.parametrize("n,p,t,b", [(6000, 64, 600, 256), (1000, 16, 150, 2048), (97, 5, 30, 7)])
def test_every_row_in_one_block_and_every_block_in_as_many_parts(n, p, t, b):
    d = _design(n, p, t, b)
    assert torch.equal(torch.sort(d.order).values, torch.arange(n))
    per_block = d.incidence.sum(dim=1)
    assert int(per_block.max() - per_block.min()) <= 1
    per_part = d.incidence.sum(dim=0)
    assert bool((per_part == per_part[0]).all())  # q blocks each
    sizes = d.train_mask().sum(dim=0)
    block = int((d.bounds[1:] - d.bounds[:-1]).max())
    assert float((sizes - t).abs().max()) <= int(per_part[0]) * 1 + block / 2


def test_grouped_blocks_keep_groups_whole_and_inclusion_equal():
    rng = np.random.default_rng(0)
    # groups of 1 to 12 rows: a large group must not train more often than a singleton
    sizes = rng.integers(1, 13, 600)
    groups = torch.as_tensor(np.repeat(np.arange(600), sizes))
    n, t, p = len(groups), 300, 32
    inside = np.zeros(n)
    for seed in range(40):
        mask = _design(n, p, t, 64, seed=seed, groups=groups).train_mask().numpy() > 0
        for j in range(p):
            tr = set(groups[mask[:, j]].tolist())
            assert not tr & set(groups[~mask[:, j]].tolist())
        inside += mask.mean(axis=1)
    share = inside / 40
    big, small = sizes[groups.numpy()] >= 10, sizes[groups.numpy()] <= 2
    assert abs(share.mean() - t / n) < 0.01
    assert abs(share[big].mean() - share[small].mean()) < 0.01


@pytest.mark.parametrize(
    "stopped", [[], [4, 9], list(range(11))], ids=["all-live", "two-stopped", "one-live"]
)
@pytest.mark.parametrize("ones", [False, True], ids=["rows-gathered", "rows-kept-with-ones"])
def test_block_pass_equals_the_dense_pass_on_the_same_parts(ones, stopped):
    x, y, _ = planted_data(n=700, d=24, seed=1)
    store = FeatureStore(x, CPU)
    yt = torch.as_tensor(y)
    rows = torch.arange(300, 700)  # a current set that is not the whole store
    design = _design(len(rows), 12, 60, 16)
    plan = plan_blocks(store, yt, design, rows, 3, task_rows=100, ones=ones)
    assert all((t.x.shape[-1] == 25) == ones for t in plan.tasks)  # [X~ 1] kept, or X~
    mask = torch.zeros((700, 12))
    mask[rows] = design.train_mask()
    theta = torch.randn(12, 25 * 3, generator=torch.Generator().manual_seed(0)) * 0.1
    # stopped classifiers map to the dropped slot (the live count), as in the solver: their
    # blocks' products narrow, and a task whose blocks have no live classifier is skipped
    live = [j for j in range(12) if j not in stopped]
    slot = torch.full((13,), len(live))
    slot[live] = torch.arange(len(live))
    loss_b, grad_b = block_objective(plan, theta[live], slot, plan.neg[live], 0.7)
    onehot = torch.nn.functional.one_hot(yt, 3).float()
    loss_d, grad_d = _objective(store, yt, onehot, mask, plan.neg.T, 0.7, _to_stacked(theta, 25, 3))
    torch.testing.assert_close(loss_b, loss_d[live], rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(grad_b, _to_rows(grad_d)[live], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make", [snli_ngrams, snli_minilm], ids=["snli-ngrams", "snli-minilm"])
def test_same_scores_at_one_and_two_threads(make):
    x, y = make()
    kw = dict(n_partitions=16, train_size=0.3, seed=3, device="cpu")
    one = aflite.predictability_scores(x, y, threads=1, **kw)
    two = aflite.predictability_scores(x, y, threads=2, **kw)
    np.testing.assert_array_equal(one.n_correct, two.n_correct)
    assert one.info == two.info


def test_same_kept_set_at_one_and_two_threads():
    x, y = snli_ngrams(max_features=64)
    kw = dict(
        target_size=0.7, train_size=0.3, slice_size=90, threshold=0.5, seed=0, n_partitions=16
    )
    one = aflite.filter(x, y, threads=1, **kw)
    two = aflite.filter(x, y, threads=2, **kw)
    assert len(one.history) >= 2 and len(one.removed) > 0
    np.testing.assert_array_equal(one.kept, two.kept)
    np.testing.assert_array_equal(one.removed_score, two.removed_score)


def test_block_scores_agree_with_uniform_as_seeds_of_uniform_do():
    x, y, _ = planted_data(n=3000, d=16, seed=2)
    kw = dict(n_partitions=64, train_size=0.2, device="cpu")
    u0 = aflite.predictability_scores(x, y, partitions="uniform", seed=0, **kw).scores
    u1 = aflite.predictability_scores(x, y, partitions="uniform", seed=1, **kw).scores
    b0 = aflite.predictability_scores(x, y, partitions="blocks", seed=0, **kw).scores
    between_seeds = np.corrcoef(u0, u1)[0, 1]
    across_designs = np.corrcoef(b0, u1)[0, 1]
    assert between_seeds > 0.9
    # the same statistic: the block design is no further from uniform than a reseed is
    assert across_designs > between_seeds - 0.02


def test_bad_design_and_thread_options_are_refused():
    x, y, _ = planted_data(n=200)
    with pytest.raises(
        ValueError, match="^partitions: unknown value 'random': choose one of blocks, uniform$"
    ):
        aflite.predictability_scores(x, y, partitions="random")
    with pytest.raises(ValueError, match="threads must be a positive whole number"):
        aflite.filter(x, y, target_size=150, train_size=50, threads=0)
