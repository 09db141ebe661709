"""The sparse pass (raw n-gram rows times scaled weights) against the dense block pass, when
the store keeps raw rows, and the low-rank preconditioner against the exact inverse."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from test_solver import snli_ngrams

import aflite
from aflite._internal.threads import compute_threads
from aflite.algorithm.loop.partitions import block_design
from aflite.algorithm.models.linear import block_pass
from aflite.algorithm.models.linear.block_pass import (
    block_objective,
    plan_logistic_blocks,
    sample_gram,
)
from aflite.algorithm.numerics.preconditioner import boehning_preconditioner
from aflite.algorithm.numerics.sparse_rows import SparseRows
from aflite.algorithm.numerics.store import FeatureStore

CPU = torch.device("cpu")


def _sparse_features(n=800, d=60, density=0.02, seed=0):
    """Counts-like features, mostly zero, with labels that some of them predict."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = (rng.random((n, d)) < density) * rng.integers(1, 4, (n, d))
    x[np.arange(n), y] += 1  # columns 0-2 carry the label
    return x.astype(np.float32), y


def _plan(store, y, rows, *, sparse):
    gen = torch.Generator().manual_seed(0)
    design = block_design(len(rows), 12, len(rows) // 5, block_rows=16, generator=gen, device=CPU)
    plan = plan_logistic_blocks(store, torch.as_tensor(y), design, rows, 3, task_rows=128)
    assert plan.sparse == sparse
    return plan


def test_sparse_pass_equals_the_dense_block_pass(monkeypatch):
    x, y = _sparse_features()
    store = FeatureStore(x, CPU, sparse_rows=True)
    assert store.sparse is not None
    rows = torch.arange(100, 800)  # a current set that is not the whole store
    monkeypatch.setattr(block_pass, "SPARSE_SHARE", 1e9)  # narrow features: forced either way
    sparse = _plan(store, y, rows, sparse=True)
    monkeypatch.setattr(block_pass, "SPARSE_SHARE", 0.0)
    dense = _plan(store, y, rows, sparse=False)
    theta = torch.randn(12, 3 * 61, generator=torch.Generator().manual_seed(0)) * 0.3
    # every classifier live; then classifiers 4 and 9 stopped (they map to the dropped row,
    # as in the solver), which also reuses the sparse pass's buffer at a smaller width
    slots = [
        (torch.arange(13), list(range(12))),
        (
            torch.tensor([0, 1, 2, 3, 10, 4, 5, 6, 7, 10, 8, 9, 10]),
            [0, 1, 2, 3, 5, 6, 7, 8, 10, 11],
        ),
    ]
    for slot, live in slots:
        loss_s, grad_s = block_objective(sparse, theta[live], slot, sparse.neg[live], 0.7)
        loss_d, grad_d = block_objective(dense, theta[live], slot, sparse.neg[live], 0.7)
        torch.testing.assert_close(loss_s, loss_d, rtol=1e-6, atol=1e-5)
        torch.testing.assert_close(grad_s, grad_d, rtol=1e-4, atol=1e-4)
        with compute_threads(2):
            loss_2, grad_2 = block_objective(sparse, theta[live], slot, sparse.neg[live], 0.7)
        assert torch.equal(loss_2, loss_s) and torch.equal(grad_2, grad_s)
    # the preconditioner's Gram matrix, from the raw rows and from the standardised ones
    gram_s, rows_s = sample_gram(sparse, 300)
    gram_d, rows_d = sample_gram(dense, 300)
    assert rows_s == rows_d >= 300
    torch.testing.assert_close(gram_s, gram_d, rtol=1e-5, atol=1e-3)


def test_the_sparse_pass_is_taken_where_it_pays():
    gen = np.random.default_rng(3)
    y = gen.integers(0, 3, 2000)

    def plan(d, density):
        x = (gen.random((2000, d)) < density).astype(np.float32)
        gen_t = torch.Generator().manual_seed(0)
        design = block_design(2000, 64, 600, block_rows=64, generator=gen_t, device=CPU)
        return plan_logistic_blocks(
            FeatureStore(x, CPU, sparse_rows=True),
            torch.as_tensor(y),
            design,
            torch.arange(2000),
            3,
        )

    # narrow features: the per-row work over every classifier outweighs the saved products
    assert not plan(64, 0.02).sparse
    assert plan(1024, 0.01).sparse


def test_raw_rows_are_kept_only_for_sparse_features_with_small_offsets(tmp_path):
    x, _ = _sparse_features()
    assert FeatureStore(x, CPU, sparse_rows=True).sparse is not None
    dense = np.random.default_rng(0).normal(size=(300, 40)).astype(np.float32)
    assert FeatureStore(dense, CPU, sparse_rows=True).sparse is None
    # a feature present in 99% of rows sits 10 standard deviations from zero: folding its
    # mean into the weights would cancel, so the store keeps to centred rows
    common, _ = _sparse_features(density=0.005)
    assert FeatureStore(common, CPU, sparse_rows=True).sparse is not None
    common[: int(0.99 * len(common)), 5] = 1.0  # 3.8% nonzero in all: dense enough to keep
    assert FeatureStore(common, CPU, sparse_rows=True).sparse is None
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32, shape=x.shape)
    mm[:] = x
    assert FeatureStore(mm, CPU, sparse_rows=True).sparse is None


def test_raw_rows_follow_the_store_through_compaction():
    x, _ = _sparse_features(n=500)
    store = FeatureStore(
        x.copy(), CPU, in_place=True, sparse_rows=True
    )  # standardised in place: raw read first
    picked = SparseRows.from_dense(x, store.mean64, store.scale64, CPU).take(
        torch.tensor([7, 3, 3])
    )
    np.testing.assert_array_equal(_dense(picked), x[[7, 3, 3]])
    keep = np.sort(np.random.default_rng(1).choice(500, 180, replace=False))
    store.compact_to(keep)
    np.testing.assert_array_equal(_dense(store.sparse), x[keep])


def _dense(rows: SparseRows) -> np.ndarray:
    out = np.zeros((rows.n_rows, rows.dim), dtype=np.float32)
    for i in range(rows.n_rows):
        s, e = int(rows.crow[i]), int(rows.crow[i + 1])
        out[i, rows.col[s:e].numpy()] = rows.val[s:e].numpy()
    return out


def test_scores_from_the_sparse_pass_match_the_dense_pass(monkeypatch):
    x, y = snli_ngrams()
    kw = dict(n_partitions=32, train_size=0.3, seed=5, device="cpu", threads=1)
    sparse = aflite.predictability_scores(x, y, **kw)
    assert sparse.info["products"] == "sparse"
    monkeypatch.setattr(block_pass, "SPARSE_SHARE", 0.0)
    dense = aflite.predictability_scores(x, y, **kw)
    assert dense.info["products"] == "blocks"
    # the same fits to the solver's tolerance: a handful of held-out predictions may flip
    assert np.corrcoef(sparse.scores, dense.scores)[0, 1] > 0.995
    assert np.abs(sparse.n_correct - dense.n_correct).max() <= 3


def _exact_inverse(gram, scale):
    b = gram * scale
    b.diagonal().add_(1.0)
    return torch.linalg.inv(b)


def _gram(n, d, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((n, d), generator=gen, dtype=torch.float64) * torch.linspace(
        3, 0.1, d, dtype=torch.float64
    )
    x = torch.cat([x, torch.ones((n, 1), dtype=torch.float64)], dim=1)
    return x.T @ x


@pytest.mark.parametrize("d,t", [(40, 100), (200, 500)], ids=["d-under-rank", "large-parts"])
def test_preconditioner_is_the_exact_inverse_for_narrow_features_or_large_parts(d, t):
    gram = _gram(600, d)
    pre = boehning_preconditioner(gram, 0.3, t)
    assert pre.inverse is not None
    eye = torch.eye(d + 1)
    torch.testing.assert_close(pre(eye).double(), _exact_inverse(gram, 0.3), rtol=1e-4, atol=1e-6)


def test_low_rank_preconditioner_keeps_the_leading_directions_and_is_positive_definite(monkeypatch):
    import aflite.algorithm.numerics.preconditioner as pc

    rank = 16
    monkeypatch.setattr(pc, "RANK", rank)
    gram = _gram(400, 90)
    state = torch.random.get_rng_state()
    pre = boehning_preconditioner(gram, 0.05, 100)  # parts of 100 rows <= 2 (d+1)
    again = boehning_preconditioner(gram, 0.05, 100)
    assert pre.inverse is None and pre.rank == rank
    assert torch.equal(torch.random.get_rng_state(), state)  # its own generator
    m = pre(torch.eye(91)).double()
    assert torch.equal(m, again(torch.eye(91)).double())
    torch.testing.assert_close(m, m.T, rtol=0, atol=1e-6)
    b = gram * 0.05
    b.diagonal().add_(1.0)
    lam, vec = torch.linalg.eigh(b)
    assert float(torch.linalg.eigvalsh(m).min()) > 0
    # along the leading eigenvectors it is about B^-1; along the rest about one value, at
    # most B^-1's there (the rest is flattened, not inverted)
    top = (vec[:, -4:].T @ m @ vec[:, -4:]).diagonal() * lam[-4:]
    assert float((top - 1).abs().max()) < 0.05
    rest = vec[:, : 91 - rank - 4]
    ratios = (rest.T @ m @ rest).diagonal() * lam[: 91 - rank - 4]
    assert float(ratios.max()) <= 1.05
    assert float(ratios.min()) < 0.5


@pytest.mark.parametrize("rank", [16, 128])
def test_the_solver_reaches_the_same_optimum_at_any_rank(rank, monkeypatch):
    import aflite.algorithm.numerics.preconditioner as pc

    x, y = snli_ngrams(n=400, max_features=96)  # d = 192
    kw = dict(
        n_partitions=8,
        train_size=0.5,
        seed=2,
        device="cpu",
        threads=1,
        model=aflite.LinearEnsemble(tol=1e-6),
    )
    monkeypatch.setattr(pc, "RANK", 4096)
    exact = aflite.predictability_scores(x, y, **kw)
    monkeypatch.setattr(pc, "RANK", rank)
    approx = aflite.predictability_scores(x, y, **kw)
    # the same optimum: at this tolerance only a near-tie may flip
    assert int((approx.n_correct != exact.n_correct).sum()) <= 2
    assert exact.info["mean_iterations"] != approx.info["mean_iterations"]


@pytest.mark.slow
def test_a_resumed_run_on_sparse_features_matches_an_uninterrupted_one():
    x, y = snli_ngrams()
    kwargs = dict(
        target_size=300, train_size=0.3, slice_size=100, threshold=0.0, seed=4, n_partitions=16
    )
    states = []
    full = aflite.filter(x, y, checkpoint=lambda s: states.append(copy.deepcopy(s)), **kwargs)
    assert all(h.solver["products"] == "sparse" for h in full.history)
    # resumed after the store was compacted below half its rows, raw sparse rows included
    later = [s for s in states if len(s.rows) < len(y) / 2]
    assert later
    resumed = aflite.filter(x, y, resume=later[0], **kwargs)
    np.testing.assert_array_equal(resumed.kept, full.kept)
    np.testing.assert_array_equal(resumed.removed_score, full.removed_score)
