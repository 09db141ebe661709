"""A model family's phases on a Ray cluster, under the family's own declaration.

The phase runner draws every design on the driver, as one process does (the family's block
size, its kept blocks), and hands it to :class:`RayModel`. Over several shards the family's
model for shards runs it (:attr:`~aflite.algorithm.models.ModelFamily.sharded`, else its own
model, which reads its rows through the store's shards): the logistic family's L-BFGS with
every sum over rows computed where the rows are, the exact family's conjugate gradients, and
the families of multiple-choice items (:mod:`aflite.algorithm.models.sharded_items`).
Rows in one shard are one worker's: the family's own model runs the whole phase there, as
one process would. A worker lost during a phase is given its shards back and the phase is
done again from the same design, so the counts are the uninterrupted run's.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from aflite._internal.transfer import counting, to_device, to_host
from aflite.algorithm.models.contract import ModelFamily, PhaseCounts
from aflite.algorithm.numerics.blocks import BlockDesign
from aflite.algorithm.numerics.shard_set import Shard, design_payload, shard_design
from aflite.distributed.ray_store import RayStore, again

__all__ = ["RayModel"]


class RayModel:
    """The :class:`~aflite.algorithm.models.Model` a :class:`~aflite.distributed.RayBackend`
    runs a family's phases with (see the module docstring). ``store`` is what the phase
    runner builds its rows with: a :class:`~aflite.distributed.ray_store.RayStore`."""

    def __init__(self, backend: Any, family: ModelFamily, settings: Any) -> None:
        self.backend, self.family, self.settings = backend, family, settings
        self.local = (family.sharded or family.target)(settings)
        self.store = functools.partial(RayStore, backend)

    def attach(self, store: RayStore, raw: Any, y: torch.Tensor, n_classes: int) -> None:
        self.rows_store, self.n_classes = store, n_classes
        labels = to_host(y)
        store.set_labels(labels)
        self.local.attach(store, raw, y, n_classes)

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        self.train_size, self.n_partitions = train_size, n_partitions
        return self.local.block_rows(train_size, n_partitions)

    def keeps_blocks(self) -> bool:
        return self.local.keeps_blocks()

    def score(self, train, heldout, current) -> PhaseCounts:
        raise ValueError("a distributed backend runs block partitions (partitions='blocks') only")

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        store = self.rows_store
        with counting() as moves:
            counts = again(lambda: self._score(design, positions, current), store)
        info = dict(counts.info)
        info.update(
            workers=len(set(store.owner)),
            shards=store.n_shards,
            sent_bytes=moves.sent_bytes,
            received_bytes=moves.received_bytes,
            messages=moves.messages,
        )
        return PhaseCounts(counts.correct, counts.heldout, info, counts.tol)

    def _score(self, design, positions, current) -> PhaseCounts:
        store = self.rows_store
        if store.n_shards > 1:
            return self.local.score_blocks(design, positions, current)
        payload = design_payload(design, positions, store)
        shards = store.shard_set()
        args = (self.family.name, self.settings, design.incidence.cpu(), self.n_classes,
                self.train_size, self.n_partitions)  # fmt: skip
        ((rows, correct, held, info, tol),) = shards.map(_whole, *args, each=payload)
        dev = positions.device
        pos = to_device(store.positions(rows), dev)
        out_c = torch.zeros(store.n_stored, dtype=torch.float64, device=dev)
        out_h = torch.zeros_like(out_c)
        out_c[pos] = to_device(correct, dev).double()
        out_h[pos] = to_device(held, dev).double()

        return PhaseCounts(out_c, out_h, info, tol)

    def describe(self) -> str:
        return f"{self.local.describe()} on Ray ({self.backend.n_workers} workers)"


def _whole(shard: Shard, family, settings, incidence, n_classes, t, m, rows, block, slot):
    """A whole phase on the one shard that holds every row: the family's own model, as one
    process runs it (kept between phases, for what it keeps per block)."""
    from aflite.algorithm.models import MODELS

    model = shard.state.get("model")
    if model is None:
        model = MODELS[family].target(settings)
        model.attach(shard.store, None, shard.y, n_classes)
        model.block_rows(t, m)  # the form, as the driver's model chose it
        shard.state["model"] = model
    design, positions = shard_design(shard, rows, block, slot, incidence, every_block=True)
    current = torch.zeros(shard.store.n_stored, dtype=torch.float32, device=positions.device)
    current[positions] = 1.0
    counts = model.score_blocks(design, positions, current)
    correct, held = to_host(counts.correct[positions]), to_host(counts.heldout[positions])
    return np.asarray(rows), correct, held, counts.info, counts.tol
