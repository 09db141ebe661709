"""A phase's block design and its blocks batched into tasks: what every pass over block
partitions reads.

A phase's rows are dealt into blocks (:func:`aflite.algorithm.loop.partitions.block_design`
draws the :class:`BlockDesign`) and each classifier trains on a few whole blocks. A pass
reads every block once and multiplies it by the weights of just the classifiers that train
on it (about m*t/n of them, padded to the most in a task), while the block is still in cache:
the useful work of a fit and nothing more (the logistic family's passes,
:mod:`aflite.algorithm.models.linear.block_pass`; the choice-wise model's,
:mod:`aflite.algorithm.models.choice.fit`).

Blocks of similar size are batched into tasks of a few thousand rows; a task is the unit a
worker thread runs (``aflite._internal.threads``) and the per-classifier sums are added up in
task order, so the result does not depend on the thread count. On mostly-zero features a task
also keeps its raw sparse rows (:mod:`aflite.algorithm.numerics.sparse_rows`) for a pass that
reads only their nonzeros.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.sparse_rows import SparseRows
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "MIN_BLOCKS_PER_PART",
    "BlockDesign",
    "BlockPlan",
    "BlockTask",
    "default_block_rows",
    "part_classes",
    "plan_blocks",
]

TASK_ROWS = 4096  # rows per task of the sparse pass: enough work per product
# A task's [X~ 1] rows are read by the forward product and again by the gradient: within a
# core's L2 they come from memory once. At d=1,024 that is 512 rows, and the N=20,000 phase
# ran 11% faster than with tasks of 4,096 rows (16 MiB, read twice).
TASK_BYTES = 2 << 20
MATERIALISE_BYTES = 1 << 31  # gathered copy of the blocks kept for the phase up to this size


# A training part is at least this many blocks: with fewer, a few distinct training sets would
# repeat across the m classifiers and every row of a block would share one held-out set.
MIN_BLOCKS_PER_PART = 8


def default_block_rows(dim: int, device: torch.device | None = None) -> int:
    """Rows per block: a block of ``dim`` float32 features stays near 1 MiB, so it sits in a
    CPU core's L2 cache through the forward and the gradient product. The same on every
    device (``device`` is not read): the design decides which rows train which classifier,
    so it must not change with the hardware; a GPU batches many blocks into one product."""
    return int(min(2048, max(64, (1 << 18) // max(1, dim))))


@dataclass
class BlockDesign:
    """Blocks of the current rows and which classifiers train on each.

    ``order`` (n,) lists the current rows (positions 0..n-1 in the current set) block by
    block, block i being ``order[bounds[i]:bounds[i+1]]``; ``incidence`` (B, P) is True where
    block i trains classifier j.
    """

    order: torch.Tensor
    bounds: torch.Tensor
    incidence: torch.Tensor

    @property
    def n_blocks(self) -> int:
        return int(self.incidence.shape[0])

    @property
    def n_partitions(self) -> int:
        return int(self.incidence.shape[1])

    def block_of_rows(self) -> torch.Tensor:
        """(n,) the block of every current row."""
        sizes = self.bounds[1:] - self.bounds[:-1]
        blocks = torch.repeat_interleave(torch.arange(self.n_blocks, device=sizes.device), sizes)
        out = torch.empty_like(blocks)
        out[self.order] = blocks
        return out

    def to(self, device: torch.device) -> BlockDesign:
        """The design on ``device``."""
        return BlockDesign(
            to_device(self.order, device),
            to_device(self.bounds, device),
            to_device(self.incidence, device),
        )

    def part_sizes(self) -> torch.Tensor:
        """(P,) int64 rows of every training part."""
        sizes = self.bounds[1:] - self.bounds[:-1]
        return (self.incidence.to(torch.int64) * sizes[:, None]).sum(dim=0)

    def train_mask(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """(n, P) mask with 1 where the row trains that classifier."""
        return self.incidence[self.block_of_rows()].to(dtype)


@dataclass
class BlockTask:
    """Blocks batched together: their rows' store positions (G, b), weights (1 for a row, 0
    for padding), labels, the classifiers each block trains (G, s; padded with P) and which
    classifiers hold each block out (G, P)."""

    pos: torch.Tensor
    w: torch.Tensor
    y: torch.Tensor
    members: torch.Tensor
    held: torch.Tensor
    x: torch.Tensor | None = None
    sparse: SparseRows | None = None  # raw rows (G*b, d), for the sparse pass
    sparse_t: torch.Tensor | None = None  # their (d, G*b) transpose, torch CSR


@dataclass
class BlockPlan:
    """A phase's blocks, batched into tasks, with the (P, C) offsets of classes absent from
    each training part. With ``ones`` the rows kept for the phase carry a last column of
    ones (``[X~ 1]``), so one product gives logits with their intercept and another the
    gradient of weights and intercept together; with ``sparse`` every task keeps its raw sparse
    rows and their transpose."""

    store: FeatureStore
    tasks: list[BlockTask]
    n_partitions: int
    n_classes: int
    neg: torch.Tensor
    part_sizes: torch.Tensor
    ones: bool = False
    sparse: bool = False

    @property
    def n_rows(self) -> int:
        """The rows the plan's blocks hold."""
        return sum(int(t.w.sum()) for t in self.tasks)

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


def _with_ones(x: torch.Tensor) -> torch.Tensor:
    """``[x 1]`` along the last axis."""
    return torch.cat([x, x.new_ones((*x.shape[:-1], 1))], dim=-1)


def part_classes(
    design: BlockDesign, labels: torch.Tensor, n_classes: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(P, C) offsets ruling out the classes absent from each training part, and (P,) its
    rows, from the labels of the dealt rows in the dealing's order."""
    dev = labels.device
    sizes = design.bounds[1:] - design.bounds[:-1]
    # classes present in each training part: class counts per block, summed over its blocks
    block_of = torch.repeat_interleave(torch.arange(design.n_blocks, device=dev), sizes)
    # integer counts: exact in any order of the adds (a GPU's atomics too)
    counts = torch.zeros((design.n_blocks, n_classes), dtype=torch.int64, device=dev)
    counts.index_put_((block_of, labels), torch.ones_like(labels), accumulate=True)
    part_counts = design.incidence.to(torch.float32).T @ counts.to(torch.float32)
    return torch.where(part_counts > 0, 0.0, NEG), part_counts.sum(dim=1)


def plan_blocks(
    store: FeatureStore,
    y: torch.Tensor,
    design: BlockDesign,
    positions: torch.Tensor,
    n_classes: int,
    *,
    task_rows: int | None = None,
    ones: bool = False,
    sparse: bool = False,
    keep_rows: bool = True,
) -> BlockPlan:
    """Batch a design's blocks into tasks. ``positions`` (n,) are the store positions of the
    current rows the design dealt; ``y`` the labels of all stored rows; ``ones`` keeps the
    rows as ``[X~ 1]`` (the logistic family's passes); ``sparse`` keeps each task's raw sparse
    rows instead (its sparse pass: the store must keep them); ``keep_rows`` False gathers a
    task's rows when asked, never keeping a copy (a pass that keeps its own)."""
    dev = store.device
    p = design.n_partitions
    inc = design.incidence
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
    neg, part_sizes = part_classes(design, y[rows_pos], n_classes)

    keep = (
        keep_rows
        and not sparse
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
