"""The logistic family's passes over a phase's block plan (:mod:`aflite.algorithm.numerics.blocks`).

The block pass reads every block once and multiplies it by the weights of just the
classifiers that train on it: ``(s*C x d+1) @ (d+1 x b)``, then ``R_b @ X_b`` for the gradient,
while the block is still in cache. That is the useful work of the fit and nothing more: the
dense pass multiplied every row by every classifier and masked the loss (n/t times the work),
the gathered pass copied each part's rows (memory-bound).

On mostly-zero features (:mod:`aflite.algorithm.numerics.sparse_rows`) the sparse pass gets
the same sums from the raw rows. The logits of standardised rows are ``x @ (s*W) + b - (mu*s)
@ W``: one ``embedding_bag`` per task gives every row's logits under every live classifier,
of which the block's own are kept; the gradient is ``s * (X^T R - mu * sum(R))`` with ``X^T
R`` one sparse product per task: every row times every classifier, but only over its nonzero
features.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.blocks import BlockDesign, BlockPlan, BlockTask, plan_blocks
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "SPARSE_ROW_COST",
    "SPARSE_SHARE",
    "block_heldout_counts",
    "block_objective",
    "block_sums",
    "gram_flops",
    "loss_residual",
    "pass_flops",
    "plan_logistic_blocks",
    "sample_gram",
    "sparse_gram",
    "sparse_pass",
    "use_sparse_pass",
]

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


def sparse_pass(
    plan: BlockPlan, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The unregularised sums of :func:`block_objective` for ``plan``, loss (p+1,) and
    gradient (p+1, width), from the raw sparse rows (row p, the dropped one, included)."""
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
    """:func:`sample_gram` from the tasks' raw sparse rows: with X~ = (X - mu) s,
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


def plan_logistic_blocks(
    store: FeatureStore,
    y: torch.Tensor,
    design: BlockDesign,
    positions: torch.Tensor,
    n_classes: int,
    *,
    task_rows: int | None = None,
) -> BlockPlan:
    """The block plan of the logistic family's passes: rows kept as ``[X~ 1]``, and each
    task's raw sparse rows where the sparse pass is the cheaper (:func:`use_sparse_pass`)."""
    members = float(design.incidence.sum(dim=1, dtype=torch.float32).mean())
    sparse = use_sparse_pass(store, design.n_partitions, members)
    return plan_blocks(
        store, y, design, positions, n_classes, task_rows=task_rows, ones=True, sparse=sparse
    )


def loss_residual(logits: torch.Tensor, task: BlockTask) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy (g, s) float64 and residual softmax - onehot (g, s, C, n), both
    weighted by the rows' 1/0, from the (g, s, C, n) logits of a task's blocks under their
    classifiers."""
    g, s, _, n = logits.shape
    logp = torch.log_softmax(logits, dim=2)
    lab = task.y[:, None, None, :].expand(g, s, 1, n)
    picked = torch.gather(logp, 2, lab).squeeze(2)
    loss = -(picked * task.w[:, None, :]).sum(dim=2, dtype=torch.float64)
    resid = logp.exp_()
    resid.scatter_add_(2, lab, resid.new_full((1, 1, 1, 1), -1.0).expand(g, s, 1, n))
    resid.mul_(task.w[:, None, None, :])
    return loss, resid


def pass_flops(plan: BlockPlan, live: int) -> float:
    """Floating-point operations of one objective pass over ``live`` classifiers: forward and
    gradient over each one's training rows (block pass), or over every row's nonzeros for
    every live classifier and the dropped one (sparse pass)."""
    if plan.sparse:
        return 4.0 * sum(t.sparse.nnz for t in plan.tasks) * (live + 1) * plan.n_classes
    return 4.0 * float(plan.part_sizes.mean()) * plan.store.dim * live * plan.n_classes


def block_objective(
    plan: BlockPlan, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor, reg_c: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss (p,) float64 and gradient (p, C*(d+1)) of the classifiers in ``theta`` (p,
    C*(d+1)), one row each, class-major (each class's d weights, then its intercept);
    ``slot`` (P+1,) maps a classifier id to its row of theta, or to p (a zero row whose
    results are dropped): :func:`block_sums` (or, on a plan over shards, its shards' sums
    added along their tree), with the penalty."""
    p, width = theta.shape
    c = plan.n_classes
    d1 = width // c
    sharded = getattr(plan, "shards", None) is not None
    loss, grad = plan.sums(theta, slot, neg) if sharded else block_sums(plan, theta, slot, neg)
    loss, grad = loss[:p], grad[:p]
    grad.mul_(reg_c)
    feat = theta.view(p, c, d1)[:, :, : d1 - 1]
    grad.view(p, c, d1)[:, :, : d1 - 1] += feat
    reg = (feat * feat).sum(dim=(1, 2), dtype=torch.float64)
    return reg_c * loss + 0.5 * reg, grad


def block_sums(
    plan: BlockPlan, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The unpenalised loss (p+1,) and gradient (p+1, width) sums of :func:`block_objective`
    over ``plan``'s tasks, added in task order (row p: the dropped one).

    The products are laid out ``(s*C x d+1) @ (d+1 x b)`` and ``(s*C x b) @ (b x d+1)``:
    the block's d+1 features are the long, contiguous side of both, which on one core ran
    1.5x faster than multiplying the block by a (d x s*C) slice (N=20,000, d=1,024,
    s*C=21), and the class-major rows are gathered per block without a transpose. A plan
    on raw sparse rows (``sparse``) gets the same sums from :func:`sparse_pass`.
    """
    p, width = theta.shape
    c = plan.n_classes
    d1 = width // c
    if plan.sparse:
        return sparse_pass(plan, theta, slot, neg)
    ext = torch.cat([theta, theta.new_zeros(1, width)])
    neg_ext = torch.cat([neg, neg.new_zeros(1, c)])

    def run(task: BlockTask):
        idx = slot[task.members]
        g, s = idx.shape
        w = ext[idx].view(g, s * c, d1)
        x = plan.rows_ones(task)
        n = x.shape[1]
        logits = torch.baddbmm(neg_ext[idx].view(g, s * c, 1), w, x.transpose(1, 2))
        loss, resid = loss_residual(logits.view(g, s, c, n), task)
        grad = torch.bmm(resid.view(g, s * c, n), x)  # (g, s*C, d+1)
        return idx.reshape(-1), loss.reshape(-1), grad.view(g * s, width)

    loss = torch.zeros(p + 1, dtype=torch.float64, device=theta.device)
    grad = torch.zeros((p + 1, width), dtype=theta.dtype, device=theta.device)
    for idx, part_loss, part_grad in workers().map(run, plan.tasks):
        add_rows(loss, idx, part_loss)
        add_rows(grad, idx, part_grad)
    return loss, grad


def gram_flops(plan: BlockPlan, rows: float) -> float:
    """Floating-point operations of :func:`sample_gram` over ``rows`` rows."""
    d = plan.store.dim
    per_row = plan.store.sparse.nnz / max(1, plan.store.n_stored) if plan.sparse else d
    return 2.0 * rows * per_row * d


def sample_gram(plan: BlockPlan, min_rows: int) -> tuple[torch.Tensor, float]:
    """(d+1, d+1) float64 Gram matrix of ``[X~ 1]`` over the first whole tasks that hold
    at least ``min_rows`` rows (the blocks are random rows), and how many rows that is: on
    a plan over shards, the first tasks of the first shards, shard by shard."""
    if getattr(plan, "shards", None) is not None:
        return plan.gram(min_rows)
    d = plan.store.dim
    chosen, rows = [], 0
    for task in plan.tasks:
        if rows >= min_rows:
            break
        chosen.append(task)
        rows += int(task.w.sum())

    if plan.sparse:
        return sparse_gram(plan.store, chosen), float(rows)

    def run(task: BlockTask):
        x = (plan.rows_ones(task) * task.w[:, :, None]).reshape(-1, d + 1)
        return (x.T @ x).double()

    gram = torch.zeros((d + 1, d + 1), dtype=torch.float64, device=plan.store.device)
    for g in workers().map(run, chosen):
        gram += g
    return gram, float(rows)


def block_heldout_counts(
    plan: BlockPlan,
    theta: torch.Tensor,
    neg: torch.Tensor,
    keep: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per stored row: correct predictions by the classifiers that held its block out, and
    how many did. ``theta`` (d+1, P, C). Rows outside the phase get zeros. ``keep``: a
    function masking a (..., P) held-out mask (the classifiers whose predictions count).
    A plan over shards counts each shard's rows where they are."""
    if getattr(plan, "shards", None) is not None:
        return plan.counts(theta, neg, keep)
    d1, p, c = theta.shape
    w = theta.reshape(d1, p * c)

    def run(task: BlockTask):
        x = plan.rows_ones(task)
        g, n, _ = x.shape
        pred = (
            torch.addmm(neg.reshape(p * c), x.reshape(g * n, d1), w).view(g, n, p, c).argmax(dim=3)
        )
        held = task.held if keep is None else keep(task.held)
        hits = ((pred == task.y[:, :, None]).to(torch.float32) * held[:, None, :]).sum(dim=2)
        return task.pos, task.w > 0, hits, held.sum(dim=1)

    dev = theta.device
    correct = torch.zeros(plan.store.n_stored, dtype=torch.float32, device=dev)
    held = torch.zeros(plan.store.n_stored, dtype=torch.float32, device=dev)
    for pos, real, hits, n_held in workers().map(run, plan.tasks):
        correct[pos[real]] = hits[real]
        held[pos[real]] = n_held[:, None].expand_as(hits)[real]
    return correct, held
