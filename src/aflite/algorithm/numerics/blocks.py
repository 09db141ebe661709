"""The primal solver's passes over block partitions.

A phase's rows are dealt into blocks (:func:`aflite.algorithm.loop.partitions.block_design`) and
each classifier trains on a few whole blocks. A pass reads every block once and multiplies it
by the weights of just the classifiers that train on it (about m*t/n of them, padded to the
most in a task): ``(s*C x d+1) @ (d+1 x b)``, then ``R_b @ X_b`` for the gradient, while the
block is still in cache. That is the useful work of the fit and nothing more: the dense pass
multiplied every row by every classifier and masked the loss (n/t times the work), the
gathered pass copied each part's rows (memory-bound).

On mostly-zero features the pass can instead read the raw sparse rows
(:mod:`aflite.algorithm.numerics.sparse_rows`, :func:`sparse_pass`): every row times every classifier,
but only over its nonzero features.

Blocks of similar size are batched into tasks of a few thousand rows; a task is the unit a
worker thread runs (``aflite._internal.threads``) and the per-classifier sums are added up in
task order, so the result does not depend on the thread count.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from aflite._internal.threads import workers
from aflite._internal.transfer import to_host
from aflite.algorithm.loop.partitions import BlockDesign
from aflite.algorithm.models.linear.sparse_pass import sparse_gram, sparse_pass, use_sparse_pass
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.store import FeatureStore
from aflite.algorithm.numerics.tasks import BlockTask, loss_residual

__all__ = ["BlockPlan", "BlockTask", "loss_residual", "plan_blocks"]

TASK_ROWS = 4096  # rows per task of the sparse pass: enough work per product
# A task's [X~ 1] rows are read by the forward product and again by the gradient: within a
# core's L2 they come from memory once. At d=1,024 that is 512 rows, and the N=20,000 phase
# ran 11% faster than with tasks of 4,096 rows (16 MiB, read twice).
TASK_BYTES = 2 << 20
MATERIALISE_BYTES = 1 << 31  # gathered copy of the blocks kept for the phase up to this size


@dataclass
class BlockPlan:
    """A phase's blocks, batched into tasks, with the (P, C) offsets of classes absent from
    each training part. With ``ones`` the rows kept for the phase carry a last column of
    ones (``[X~ 1]``), so one product gives logits with their intercept and another the
    gradient of weights and intercept together."""

    store: FeatureStore
    tasks: list[BlockTask]
    n_partitions: int
    n_classes: int
    neg: torch.Tensor
    part_sizes: torch.Tensor
    ones: bool = False
    sparse: bool = False

    def pass_flops(self, live: int) -> float:
        """Floating-point operations of one objective pass over ``live`` classifiers: forward
        and gradient over each one's training rows (block pass), or over every row's nonzeros
        for every live classifier and the dropped one (sparse pass)."""
        if self.sparse:
            return 4.0 * sum(t.sparse.nnz for t in self.tasks) * (live + 1) * self.n_classes
        return 4.0 * float(self.part_sizes.mean()) * self.store.dim * live * self.n_classes

    def rows(self, task: BlockTask) -> torch.Tensor:
        """(G, b, d) standardised rows of a task (gathered now if not kept)."""
        if task.x is None:
            return self.store.gather(task.pos)
        return task.x[..., : self.store.dim] if self.ones else task.x

    def rows_ones(self, task: BlockTask) -> torch.Tensor:
        """(G, b, d+1) ``[X~ 1]`` of a task."""
        if self.ones and task.x is not None:
            return task.x
        return _with_ones(self.store.gather(task.pos))

    # --- passes ---
    def objective(self, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor, reg_c: float):
        """Loss (p,) float64 and gradient (p, C*(d+1)) of the classifiers in ``theta`` (p,
        C*(d+1)), one row each, class-major (each class's d weights, then its intercept);
        ``slot`` (P+1,) maps a classifier id to its row of theta, or to p (a zero row whose
        results are dropped).

        The products are laid out ``(s*C x d+1) @ (d+1 x b)`` and ``(s*C x b) @ (b x d+1)``:
        the block's d+1 features are the long, contiguous side of both, which on one core ran
        1.5x faster than multiplying the block by a (d x s*C) slice (N=20,000, d=1,024,
        s*C=21), and the class-major rows are gathered per block without a transpose. A plan
        on raw sparse rows (``sparse``) gets the same sums from :func:`sparse_pass`.
        """
        p, width = theta.shape
        c = self.n_classes
        d1 = width // c
        if self.sparse:
            loss, grad = sparse_pass(self, theta, slot, neg)
        else:
            ext = torch.cat([theta, theta.new_zeros(1, width)])
            neg_ext = torch.cat([neg, neg.new_zeros(1, c)])

            def run(task: BlockTask):
                idx = slot[task.members]
                g, s = idx.shape
                w = ext[idx].view(g, s * c, d1)
                x = self.rows_ones(task)
                n = x.shape[1]
                logits = torch.baddbmm(neg_ext[idx].view(g, s * c, 1), w, x.transpose(1, 2))
                loss, resid = loss_residual(logits.view(g, s, c, n), task)
                grad = torch.bmm(resid.view(g, s * c, n), x)  # (g, s*C, d+1)
                return idx.reshape(-1), loss.reshape(-1), grad.view(g * s, width)

            loss = torch.zeros(p + 1, dtype=torch.float64, device=theta.device)
            grad = torch.zeros((p + 1, width), dtype=theta.dtype, device=theta.device)
            for idx, part_loss, part_grad in workers().map(run, self.tasks):
                add_rows(loss, idx, part_loss)
                add_rows(grad, idx, part_grad)
        loss, grad = loss[:p], grad[:p]
        grad.mul_(reg_c)
        feat = theta.view(p, c, d1)[:, :, : d1 - 1]
        grad.view(p, c, d1)[:, :, : d1 - 1] += feat
        reg = (feat * feat).sum(dim=(1, 2), dtype=torch.float64)
        return reg_c * loss + 0.5 * reg, grad

    def gram_flops(self, rows: float) -> float:
        """Floating-point operations of :meth:`sample_gram` over ``rows`` rows."""
        d = self.store.dim
        per_row = self.store.sparse.nnz / max(1, self.store.n_stored) if self.sparse else d
        return 2.0 * rows * per_row * d

    def sample_gram(self, min_rows: int) -> tuple[torch.Tensor, float]:
        """(d+1, d+1) float64 Gram matrix of ``[X~ 1]`` over the first whole tasks that hold
        at least ``min_rows`` rows (the blocks are random rows), and how many rows that is."""
        d = self.store.dim
        chosen, rows = [], 0
        for task in self.tasks:
            if rows >= min_rows:
                break
            chosen.append(task)
            rows += int(task.w.sum())

        if self.sparse:
            return sparse_gram(self.store, chosen), float(rows)

        def run(task: BlockTask):
            x = (self.rows_ones(task) * task.w[:, :, None]).reshape(-1, d + 1)
            return (x.T @ x).double()

        gram = torch.zeros((d + 1, d + 1), dtype=torch.float64, device=self.store.device)
        for g in workers().map(run, chosen):
            gram += g
        return gram, float(rows)

    def heldout_counts(
        self, theta: torch.Tensor, neg: torch.Tensor, keep=None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per stored row: correct predictions by the classifiers that held its block out, and
        how many did. ``theta`` (d+1, P, C). Rows outside the phase get zeros. ``keep``: a
        function masking a (..., P) held-out mask (the classifiers whose predictions count)."""
        d1, p, c = theta.shape
        w = theta.reshape(d1, p * c)

        def run(task: BlockTask):
            x = self.rows_ones(task)
            g, n, _ = x.shape
            pred = (
                torch.addmm(neg.reshape(p * c), x.reshape(g * n, d1), w)
                .view(g, n, p, c)
                .argmax(dim=3)
            )
            held = task.held if keep is None else keep(task.held)
            hits = ((pred == task.y[:, :, None]).to(torch.float32) * held[:, None, :]).sum(dim=2)
            return task.pos, task.w > 0, hits, held.sum(dim=1)

        dev = theta.device
        correct = torch.zeros(self.store.n_stored, dtype=torch.float32, device=dev)
        held = torch.zeros(self.store.n_stored, dtype=torch.float32, device=dev)
        for pos, real, hits, n_held in workers().map(run, self.tasks):
            correct[pos[real]] = hits[real]
            held[pos[real]] = n_held[:, None].expand_as(hits)[real]
        return correct, held


def _with_ones(x: torch.Tensor) -> torch.Tensor:
    """``[x 1]`` along the last axis."""
    return torch.cat([x, x.new_ones((*x.shape[:-1], 1))], dim=-1)


def plan_blocks(
    store: FeatureStore,
    y: torch.Tensor,
    design: BlockDesign,
    positions: torch.Tensor,
    n_classes: int,
    *,
    task_rows: int | None = None,
    ones: bool = False,
) -> BlockPlan:
    """Batch a design's blocks into tasks. ``positions`` (n,) are the store positions of the
    current rows the design dealt; ``y`` the labels of all stored rows; ``ones`` keeps the
    rows as ``[X~ 1]`` (the classifiers' passes, :meth:`BlockPlan.objective`)."""
    dev = store.device
    p = design.n_partitions
    inc = design.incidence
    sparse = ones and use_sparse_pass(store, p, float(inc.sum(dim=1, dtype=torch.float32).mean()))
    if task_rows is None:
        # a GPU wants few, large batched products; a CPU core wants its task in cache
        task_rows = (
            1 << 18
            if dev.type == "cuda"
            else TASK_ROWS
            if sparse
            else max(1, TASK_BYTES // (4 * (store.dim + 1)))
        )
    sizes = design.bounds[1:] - design.bounds[:-1]
    rows_pos = positions[design.order]
    labels = y[rows_pos]
    # classes present in each training part: class counts per block, summed over its blocks
    block_of = torch.repeat_interleave(torch.arange(design.n_blocks, device=dev), sizes)
    # integer counts: exact in any order of the adds (a GPU's atomics too)
    counts = torch.zeros((design.n_blocks, n_classes), dtype=torch.int64, device=dev)
    counts.index_put_((block_of, labels), torch.ones_like(labels), accumulate=True)
    part_counts = inc.to(torch.float32).T @ counts.to(torch.float32)
    neg = torch.where(part_counts > 0, 0.0, NEG)
    part_sizes = part_counts.sum(dim=1)

    keep = (
        not sparse
        and store.data is not None
        and store.n_stored * store.dim * 4 <= MATERIALISE_BYTES
    )
    sizes_l = to_host(sizes).tolist()
    starts = to_host(design.bounds).tolist()
    n_members = to_host(inc.sum(dim=1)).tolist()
    # blocks with as many classifiers together, then by size: a task is padded to its most
    # classifiers and its widest block, so mixing 6- and 7-classifier blocks wasted a 7th
    order = sorted(range(len(sizes_l)), key=lambda k: (n_members[k], sizes_l[k]))
    tasks: list[BlockTask] = []
    i = 0
    while i < len(order):
        j = i + 1
        # the last block of a task is its widest (blocks of one member count sorted by size)
        while (
            j < len(order)
            and n_members[order[j]] == n_members[order[i]]
            and (j - i + 1) * sizes_l[order[j]] <= task_rows
        ):
            j += 1
        blocks = order[i:j]
        b = max(sizes_l[k] for k in blocks)
        s = max(n_members[k] for k in blocks)
        g = len(blocks)
        pos = torch.empty((g, b), dtype=torch.int64, device=dev)
        w = torch.zeros((g, b), dtype=torch.float32, device=dev)
        members = torch.full((g, s), p, dtype=torch.int64, device=dev)
        for r, k in enumerate(blocks):
            rows = rows_pos[starts[k] : starts[k + 1]]
            pos[r, : len(rows)] = rows
            pos[r, len(rows) :] = rows[0]
            w[r, : len(rows)] = 1.0
            mem = inc[k].nonzero().squeeze(1)
            members[r, : len(mem)] = mem
        held = (~inc[blocks]).to(torch.float32)
        task = BlockTask(pos=pos, w=w, y=y[pos], members=members, held=held)
        if keep:
            task.x = _with_ones(store.gather(pos)) if ones else store.gather(pos)
        if sparse:
            task.sparse = store.sparse.take(pos)
            task.sparse_t = task.sparse.transposed()
        tasks.append(task)
        i = j
    return BlockPlan(store, tasks, p, n_classes, neg, part_sizes, ones, sparse)
