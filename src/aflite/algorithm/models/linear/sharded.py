"""The logistic family over shards of rows (:mod:`aflite.algorithm.numerics.shard_set`): the
same fit as on one store, each sum over rows computed shard by shard where the shards are.

Each shard plans its own rows of the phase's blocks into tasks, as a whole store does
(:func:`~aflite.algorithm.numerics.blocks.plan_blocks`); a pass adds a shard's tasks in
task order (:func:`~.block_pass.block_sums`), and the shards' sums are added along their
tree. The L-BFGS, the preconditioner and the stopping rule run where the driver is, on (m,
C, d+1) weights: per step the weights go to every shard and one partial loss and gradient
per worker comes back. The preconditioner's Gram matrix is the first tasks' of the first
shards, as on one store; the held-out counts are computed where the rows are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from aflite._internal.threads import workers
from aflite._internal.transfer import to_host
from aflite.algorithm.models.linear.block_pass import block_heldout_counts, block_sums
from aflite.algorithm.numerics.blocks import BlockDesign, part_classes, plan_blocks
from aflite.algorithm.numerics.shard_set import (
    Shard,
    ShardSet,
    design_payload,
    first_tasks,
    on,
    place_counts,
    shard_design,
)

__all__ = ["ShardedPlan"]


class ShardedPlan:
    """A phase's block plan over shards: what the logistic family's passes read
    (:func:`~.block_pass.block_objective`, :func:`~.block_pass.sample_gram`,
    :func:`~.block_pass.block_heldout_counts` take it for a plan), each shard planning its
    own rows where it is held."""

    sparse = False  # the dense pass: a shard's raw sparse rows are not kept
    tasks: list = []

    def __init__(
        self,
        shards: ShardSet,
        store: Any,
        design: BlockDesign,
        positions: torch.Tensor,
        y: torch.Tensor,
        n_classes: int,
    ) -> None:
        self.shards, self.store = shards, store
        self.n_shards = shards.n_shards
        self.n_partitions, self.n_classes = design.n_partitions, n_classes
        # the classes of every training part, from the labels here (integer counts)
        self.neg, self.part_sizes = part_classes(design, y[positions[design.order]], n_classes)
        self.n_rows = len(positions)
        incidence = design.incidence.cpu()
        payload = design_payload(design, positions, store)
        # each shard's tasks' rows, for the preconditioner's sample
        self.task_rows: list[list[int]] = shards.map(_plan, incidence, n_classes, each=payload)

    def sums(self, theta: torch.Tensor, slot: torch.Tensor, neg: torch.Tensor):
        """Loss (p+1,) and gradient (p+1, width) sums of every shard's tasks."""
        loss, grad = self.shards.reduce(_sums, theta, slot, neg)
        return loss.to(theta.device), grad.to(theta.device)

    def gram(self, min_rows: int) -> tuple[torch.Tensor, float]:
        """The Gram matrix of ``[X~ 1]`` over the first whole tasks, shard after shard, that
        hold at least ``min_rows`` rows, and how many rows that is."""
        take, rows = first_tasks(self.task_rows, min_rows)
        gram = self.shards.reduce(_gram, each=take)
        return gram.to(device=self.neg.device), float(rows)

    def counts(
        self,
        theta: torch.Tensor,
        neg: torch.Tensor,
        keep: Callable[[torch.Tensor], torch.Tensor] | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per stored row: correct held-out predictions and times held out, from the shards'
        own counts of their rows."""
        p = theta.shape[1]
        usable = None if keep is None else keep(torch.ones(p, device=theta.device)) > 0
        per_shard = self.shards.map(_counts, theta, neg, usable)
        return place_counts(self.store, per_shard, theta.device)


def _plan(shard: Shard, incidence, n_classes, rows, block, slot) -> list[int]:
    """A shard's tasks of its rows of the phase's blocks (kept for the phase's passes); the
    rows of each task."""
    design, positions = shard_design(shard, rows, block, slot, incidence)
    plan = plan_blocks(shard.store, shard.y, design, positions, n_classes, ones=True)
    shard.state["plan"] = plan
    shard.state["positions"] = positions
    shard.state["rows"] = np.asarray(rows)
    return [int(t.w.sum()) for t in plan.tasks]


def _sums(shard: Shard, theta, slot, neg):
    plan = shard.state["plan"]
    if not plan.tasks:
        return None
    return block_sums(plan, on(shard, theta), on(shard, slot), on(shard, neg))


def _gram(shard: Shard, n_tasks: int) -> torch.Tensor | None:
    """The sample Gram matrix's sum over this shard's first ``n_tasks`` tasks, in task
    order (:func:`~.block_pass.sample_gram`'s)."""
    if n_tasks == 0:
        return None
    plan = shard.state["plan"]
    d = shard.store.dim

    def run(task) -> torch.Tensor:
        x = (plan.rows_ones(task) * task.w[:, :, None]).reshape(-1, d + 1)
        return (x.T @ x).double()

    gram = torch.zeros((d + 1, d + 1), dtype=torch.float64, device=shard.store.device)
    for g in workers().map(run, plan.tasks[:n_tasks]):
        gram += g
    return gram


def _counts(shard: Shard, theta, neg, usable):
    plan = shard.state["plan"]
    keep = None
    if usable is not None:
        mask = on(shard, usable).to(torch.float32)

        def keep(held: torch.Tensor) -> torch.Tensor:
            return held * mask

    correct, held = block_heldout_counts(plan, on(shard, theta), on(shard, neg), keep=keep)
    pos = shard.state["positions"]
    return shard.state["rows"], to_host(correct[pos]), to_host(held[pos])
