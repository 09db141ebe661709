"""The block pass on raw sparse rows (:mod:`aflite.algorithm.numerics.sparse_rows`).

The logits of standardised rows are ``x @ (s*W) + b - (mu*s) @ W``: one ``embedding_bag`` per
task gives every row's logits under every live classifier, of which the block's own are kept;
the gradient is ``s * (X^T R - mu * sum(R))`` with ``X^T R`` one sparse product per task. The
same sums as the dense block pass, over each row's nonzero features only.
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.store import FeatureStore
from aflite.algorithm.numerics.tasks import BlockTask, loss_residual

__all__ = ["SPARSE_ROW_COST", "SPARSE_SHARE", "sparse_gram", "sparse_pass", "use_sparse_pass"]

# The sparse pass costs about (nonzeros per row + SPARSE_ROW_COST) * (P+1) per row and class,
# the block pass s * (d+1) (s ~ m*t/n classifiers per block); the first term is its products,
# the second its per-row work over all P+1 classifiers (gather, scatter, zeroing, sums). Fitted
# to one core, 20,000 rows, m=64, t=30%: sparse 14.2 vs dense 9.3 ms at d=64 and 2% nonzero,
# 25.8 vs 111.9 ms at d=1,024 and 1%. It is taken when it costs at most SPARSE_SHARE of the
# block pass by this count.
SPARSE_ROW_COST = 10.0
SPARSE_SHARE = 0.25
_scratch = threading.local()


def use_sparse_pass(store: FeatureStore, n_partitions: int, members: float) -> bool:
    """Whether a phase's block pass should read the store's raw sparse rows: ``members`` is
    the mean number of classifiers a block trains."""
    if store.sparse is None:
        return False
    per_row = store.sparse.nnz / max(1, store.n_stored)
    return (per_row + SPARSE_ROW_COST) * (n_partitions + 1) <= SPARSE_SHARE * members * (
        store.dim + 1
    )


def sparse_pass(plan: Any, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor):
    """The unregularised sums of :meth:`aflite.algorithm.numerics.blocks.BlockPlan.objective`
    for ``plan`` (a ``BlockPlan``), loss (p+1,) and gradient (p+1, width), from the raw
    sparse rows (row p, the dropped one, included)."""
    store = plan.store
    p, width = theta.shape
    c = plan.n_classes
    d = store.dim
    d1 = d + 1
    t3 = theta.view(p, c, d1)
    scale = store.scale32
    # (d, (p+1)*C) table of scaled weights, the last classifier a zero row (slot p); written
    # through a transposed view (a transposed copy of the product took 2.7x as long)
    table = torch.zeros((d, (p + 1) * c), dtype=theta.dtype, device=theta.device)
    torch.mul(theta.view(p * c, d1)[:, :d].T, scale[:, None], out=table[:, : p * c])
    # offsets in float64: (mu*s) @ W summed over d features
    mu_s = torch.as_tensor(store.mean64 * store.scale64, device=theta.device)
    off = torch.zeros((p + 1, c), dtype=theta.dtype, device=theta.device)
    off[:p] = (t3[:, :, d].double() - t3[:, :, :d].double() @ mu_s).to(theta.dtype) + neg

    classes = torch.arange(c, device=theta.device)

    def run(task: BlockTask):
        idx = slot[task.members]
        g, s = idx.shape
        n = task.pos.shape[1]
        sp = task.sparse
        every = torch.nn.functional.embedding_bag(
            sp.col, table, sp.crow[:-1], mode="sum", per_sample_weights=sp.val
        )  # (g*n, (p+1)*C)
        # each row's columns: its block's classifiers, every class
        cols = (idx[:, None, :, None] * c + classes).expand(g, n, s, c).reshape(g * n, s * c)
        logits = torch.gather(every, 1, cols).view(g, n, s, c).permute(0, 2, 3, 1)
        loss, resid = loss_residual(logits + off[idx][:, :, :, None], task)
        # a zeroed buffer of this worker thread's. Slot p (padding, stopped classifiers) may
        # be written twice: it is dropped.
        full = _zeros(g * n * (p + 1) * c, theta.device).view(g * n, (p + 1) * c)
        full.scatter_(1, cols, resid.permute(0, 3, 1, 2).reshape(g * n, s * c))
        out = task.sparse_t @ full, full.sum(dim=0)
        full.zero_()  # faster than scattering zeros back
        return idx.reshape(-1), loss.reshape(-1), *out

    loss = torch.zeros(p + 1, dtype=torch.float64, device=theta.device)
    xr = torch.zeros((d, (p + 1) * c), dtype=theta.dtype, device=theta.device)
    rsum = torch.zeros((p + 1) * c, dtype=theta.dtype, device=theta.device)
    for idx, part_loss, part_xr, part_rsum in workers().map(run, plan.tasks):
        add_rows(loss, idx, part_loss)
        xr += part_xr
        rsum += part_rsum
    grad = torch.empty((p + 1, c, d1), dtype=theta.dtype, device=theta.device)
    grad[:, :, :d].copy_(((xr - store.mean32[:, None] * rsum) * scale[:, None]).T.view(p + 1, c, d))
    grad[:, :, d] = rsum.view(p + 1, c)
    return loss, grad.view(p + 1, width)


def _zeros(numel: int, device: torch.device) -> torch.Tensor:
    """``numel`` zeros from a buffer kept per worker thread (it must be zeroed again after
    use): a fresh buffer per pass cost more than the sparse products, and one per task would
    hold 4*n*(P+1)*C bytes for the phase."""
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.numel() < numel or buf.device != device:
        buf = _scratch.buf = torch.zeros(numel, dtype=torch.float32, device=device)
    return buf[:numel]


def sparse_gram(store: FeatureStore, tasks: list[BlockTask]) -> torch.Tensor:
    """:meth:`BlockPlan.sample_gram` from the tasks' raw sparse rows: with X~ = (X - mu) s,
    X~^T X~ = s (X^T X - mu u^T - u mu^T + n mu mu^T) s where u = X^T 1, in float64; X^T X is
    one sparse-by-dense product per task: the dense product's work times the features'
    density (1/116 on the demo's n-grams)."""
    d = store.dim

    def run(task: BlockTask):
        sp, w = task.sparse, task.w.reshape(-1)
        row = torch.repeat_interleave(
            torch.arange(sp.n_rows, device=w.device), sp.crow[1:] - sp.crow[:-1]
        )
        xw = torch.zeros((sp.n_rows, d), dtype=torch.float32, device=w.device)
        xw[row, sp.col] = sp.val * w[row]  # padding rows (weight 0) drop out
        return (task.sparse_t @ xw).double(), xw.sum(dim=0).double(), float(w.sum())

    xtx = torch.zeros((d, d), dtype=torch.float64, device=store.device)
    u = torch.zeros(d, dtype=torch.float64, device=store.device)
    n = 0.0
    for part_xtx, part_u, part_n in workers().map(run, tasks):
        xtx += part_xtx
        u += part_u
        n += part_n
    mu = torch.as_tensor(store.mean64, device=store.device)
    s = torch.as_tensor(store.scale64, device=store.device)
    gram = torch.empty((d + 1, d + 1), dtype=torch.float64, device=store.device)
    centred = xtx - torch.outer(mu, u) - torch.outer(u, mu) + n * torch.outer(mu, mu)
    gram[:d, :d] = s[:, None] * centred * s[None, :]
    gram[:d, d] = gram[d, :d] = s * (u - n * mu)
    gram[d, d] = n
    return gram
