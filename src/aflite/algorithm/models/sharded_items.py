"""The families of multiple-choice items over shards of the items (:mod:`aflite.algorithm.numerics.shard_set`):
the same phase as on one store, each sum over items computed shard by shard where the
shards are, the shards' sums added along their tree.

Each shard plans its own items of the phase's blocks into tasks, as a whole store does.
The choice-wise family's L-BFGS and preconditioner run where the driver is, on (m, d)
weights: per step the weights go to every shard and one partial loss and gradient per
worker come back (:class:`ShardedItems`, the passes :func:`~.choice.fit.fit_choices` reads).
The exact family's items variant gathers each block's float64 ``[Z 1 T]^T [Z 1 T]`` over its
choices, (B, d+2, d+2) numbers a worker whatever its rows (:func:`block_grams`), and solves
every part where the driver is, as one process does from the same block sums; where every
block's sums would be too many to hold, each part's own sums are gathered instead, a group
of parts at a time (:func:`part_grams`). Both count held-out items where they are held, with
the weights they are sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.models.choice.fit import (
    ChoiceFit,
    ItemPasses,
    choice_heldout_counts,
    scatter_of,
)
from aflite.algorithm.models.ridge.direct import gram64
from aflite.algorithm.numerics.blocks import BlockDesign, part_classes, plan_blocks
from aflite.algorithm.numerics.item_store import item_neg
from aflite.algorithm.numerics.shard_set import (
    Shard,
    ShardSet,
    design_payload,
    first_tasks,
    on,
    place_counts,
    shard_design,
)

__all__ = [
    "ShardedItems",
    "block_choices",
    "block_grams",
    "item_counts",
    "part_grams",
    "plan_shards",
]


class ShardedItems:
    """A phase's passes over the shards of stored items: what :func:`~.choice.fit.fit_choices`
    reads (``passes=``), each shard planning its own items where they are held."""

    def __init__(
        self,
        shards: ShardSet,
        store: Any,
        design: BlockDesign,
        positions: torch.Tensor,
        y: torch.Tensor,
        k: int,
        task_rows: int,
    ) -> None:
        self.shards, self.store, self.k = shards, store, k
        self.d = store.dim // k
        self.n_partitions = design.n_partitions
        # the items of every training part, from the answers here (integer counts)
        _, self.part_sizes = part_classes(design, y[positions[design.order]], k)
        payload = design_payload(design, positions, store)
        self.task_items: list[list[int]] = shards.map(
            _plan, design.incidence.cpu(), k, task_rows, each=payload
        )
        self.n_predicted = float(sum(sum(c) for c in self.task_items))

    def sums(self, theta: torch.Tensor, slot: torch.Tensor, train: None = None):
        """Loss (p+1,) and gradient (p+1, d) sums of every shard's tasks."""
        out = self.shards.reduce(_sums, theta, slot)
        if out is None:  # no shard holds a training item: nothing to add
            p, d = theta.shape
            return theta.new_zeros(p + 1, dtype=torch.float64), theta.new_zeros((p + 1, d))
        loss, grad = out
        return loss.to(theta.device), grad.to(theta.device)

    def scatter_gram(self, min_items: int) -> tuple[torch.Tensor, float]:
        """The within-item scatter over the first whole tasks, shard after shard, that hold
        at least ``min_items`` items, and how many items that is."""
        take, items = first_tasks(self.task_items, min_items)
        gram = self.shards.reduce(_scatter, self.d, each=take)
        return gram.to(self.store.device), float(items)

    def counts(self, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per stored item: right choices picked out by the models that held it out, and how
        many did, from each shard's own counts of its items."""
        return item_counts(self.shards, self.store, weights)


def item_counts(shards: ShardSet, store: Any, weights: torch.Tensor):
    """(N_store,) correct and held-out counts of the items planned on every shard
    (:func:`_plan`), by the (d, P) ``weights``."""
    return place_counts(store, shards.map(_counts, weights), weights.device)


def plan_shards(shards: ShardSet, store: Any, design: BlockDesign, positions, k: int, rows: int):
    """Every shard plans its items of ``design`` (for :func:`item_counts`, :func:`block_grams`)."""
    payload = design_payload(design, positions, store)
    shards.map(_plan, design.incidence.cpu(), k, rows, each=payload)


def block_grams(shards: ShardSet, n_blocks: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, d+2, d+2) float64 ``[Z 1 T]^T [Z 1 T]`` of every block's choices (rows ``Z``, a
    column of ones, targets ``T``: +1 for the answer, -1 for another real choice, 0 for a
    padded one) and (B,) its real choices, over every shard's planned items."""
    return shards.reduce(_grams, n_blocks)


def _plan(shard: Shard, incidence, k, task_rows, rows, block, slot) -> list[int]:
    """A shard's tasks of its items of the phase's blocks (kept for the phase's passes); the
    items of each task."""
    design, positions = shard_design(shard, rows, block, slot, incidence)
    store = shard.store
    plan = plan_blocks(store, shard.y, design, positions, k, task_rows=max(1, task_rows))
    shard.state["items"] = ItemPasses(store, shard.y, item_neg(store), k, plan)
    shard.state["positions"] = positions
    shard.state["rows"] = np.asarray(rows)
    shard.state["blocks"] = (np.asarray(block), np.asarray(slot))
    shard.state.pop("dealt", None)  # the last phase's
    return [int(t.w.sum()) for t in plan.tasks]


def _sums(shard: Shard, theta, slot):
    passes = shard.state["items"]
    if not passes.tasks:
        return None
    return passes.sums(on(shard, theta), on(shard, slot), None)


def _scatter(shard: Shard, d: int, n_tasks: int) -> torch.Tensor | None:
    """The scatter's sum over this shard's first ``n_tasks`` tasks, in task order."""
    if n_tasks == 0:
        return None
    passes = shard.state["items"]
    chosen = [(passes.rows(t), neg, t.w) for t, neg in passes.tasks[:n_tasks]]
    return scatter_of(chosen, d, shard.store.device)


def _counts(shard: Shard, weights):
    passes = shard.state["items"]
    fit = ChoiceFit(on(shard, weights), None)
    correct, held = choice_heldout_counts(shard.store, shard.y, passes.neg, fit, plan=passes.plan)
    pos = shard.state["positions"]
    return shard.state["rows"], to_host(correct[pos]), to_host(held[pos])


def part_grams(shards: ShardSet, inc: torch.Tensor) -> torch.Tensor:
    """(g, d+2, d+2) float64 sums of :func:`block_grams`' kind for the parts whose blocks are
    the columns of ``inc`` (B, g), each from its own items on every shard: where every
    block's sums would be too many to hold."""
    return shards.reduce(_part_grams, to_host(inc).astype(bool))


def block_choices(shards: ShardSet, n_blocks: int) -> torch.Tensor:
    """(B,) float64 real choices of every block, over every shard's planned items."""
    return shards.reduce(_block_choices, n_blocks)


def _dealt(shard: Shard, n_blocks: int):
    """The shard's items of the phase in the dealing's order, block by block (as one process
    reads a block): their store positions, where each block starts, and each item's real
    choices and targets (+1 the answer, -1 another real choice, 0 padding); worked out once
    a phase, however many groups of parts ask."""
    if "dealt" in shard.state:
        return shard.state["dealt"]
    block, slot = shard.state["blocks"]
    store = shard.store
    order = np.lexsort((slot, block))
    at = store.positions(shard.state["rows"][order])
    cut = np.searchsorted(block[order], np.arange(n_blocks + 1))
    real = store.real_choices(store.rows[at])
    target = np.where(real, -1.0, 0.0)
    target[np.arange(len(at)), to_host(shard.y)[at]] = 1.0
    shard.state["dealt"] = (at, cut, real, target)
    return at, cut, real, target


def _gram(shard: Shard, at: np.ndarray, target: np.ndarray, out: torch.Tensor) -> None:
    """``out = [Z 1 T]^T [Z 1 T]`` (float64) of the stored items ``at``' choices."""
    store = shard.store
    d = store.dim // target.shape[1]
    rows = store.gather(to_device(at, store.device)).reshape(-1, d)
    z = torch.empty((len(rows), d + 2), dtype=torch.float64, device=store.device)
    z[:, :d] = rows
    z[:, d] = 1.0
    z[:, d + 1] = torch.as_tensor(target.reshape(-1), device=store.device)
    gram64(z, out)


def _grams(shard: Shard, n_blocks: int):
    """This shard's items' part of every block's sums (:func:`block_grams`)."""
    if len(shard.state["blocks"][0]) == 0:
        return None
    at, cut, real, target = _dealt(shard, n_blocks)
    w = shard.store.dim // real.shape[1] + 2
    full = torch.zeros((n_blocks, w, w), dtype=torch.float64, device=shard.store.device)
    n_real = torch.zeros(n_blocks, dtype=torch.float64)
    for b in range(n_blocks):
        a, e = int(cut[b]), int(cut[b + 1])
        if a < e:
            _gram(shard, at[a:e], target[a:e], full[b])
            n_real[b] = float(real[a:e].sum())
    return full, n_real


def _block_choices(shard: Shard, n_blocks: int):
    if len(shard.state["blocks"][0]) == 0:
        return None
    _, cut, real, _ = _dealt(shard, n_blocks)
    per_item = real.sum(axis=1)
    return torch.as_tensor(
        [float(per_item[cut[b] : cut[b + 1]].sum()) for b in range(n_blocks)], dtype=torch.float64
    )


def _part_grams(shard: Shard, inc: np.ndarray):
    if len(shard.state["blocks"][0]) == 0:
        return None
    at, cut, real, target = _dealt(shard, inc.shape[0])
    w = shard.store.dim // real.shape[1] + 2
    out = torch.zeros((inc.shape[1], w, w), dtype=torch.float64, device=shard.store.device)
    for j in range(inc.shape[1]):
        mine = np.concatenate([np.arange(cut[b], cut[b + 1]) for b in np.flatnonzero(inc[:, j])])
        if len(mine):
            _gram(shard, at[mine], target[mine], out[j])
    return out
