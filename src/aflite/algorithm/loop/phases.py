"""One phase of AFLITE on a subset of rows: draw the partitions, let the model fit and
predict, and return the per-row counts aligned with the subset.

What the phase does for a model family it reads from the family's declaration
(:class:`~aflite.algorithm.models.contract.ModelFamily`): which store its model reads, whether
it takes the block design as is, and what a model that learned nothing scores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from aflite._internal.numerics import own_numerics
from aflite._internal.threads import compute_threads
from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.loop.partitions import (
    block_design,
    deal_blocks,
    kept_block_design,
    train_masks,
)
from aflite.algorithm.models.contract import Model, ModelFamily
from aflite.algorithm.numerics.blocks import BlockDesign, default_block_rows
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["PhaseRunner", "PhaseOutput"]


@dataclass
class PhaseOutput:
    """Counts for the rows a phase ran on (aligned with them), its training mask (rows x P)
    and the model's details (solver, iterations, residual)."""

    correct: np.ndarray
    heldout: np.ndarray
    # the training mask on the compute device, made when asked: a block design's is rows x P
    # (at a billion rows, terabytes), and the filter never reads it
    train_on_device: Callable[[], torch.Tensor]
    info: dict[str, Any] = field(default_factory=dict)
    tol: float | None = None  # the tolerance the fits were run to (None: fitted exactly)

    @property
    def train(self) -> np.ndarray:
        """The training mask (rows x P) on the host. The filter never reads it: a phase
        brings back O(rows) values, not the rows x P mask (150 MB at SNLI scale)."""
        return to_host(self.train_on_device()).astype(bool)

    def scores(self) -> np.ndarray:
        """Fraction of held-out predictions that were correct; NaN where never held out."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.heldout > 0, self.correct / np.maximum(self.heldout, 1), np.nan)


class PhaseRunner:
    """Holds the standardised features on the compute device and runs phases on subsets of
    the input rows (sorted input positions). Partitions are drawn over the active rows only,
    so the random stream does not depend on how the storage is laid out. ``model`` is a model
    of ``family``, which says how to run it."""

    def __init__(
        self,
        x: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        *,
        model: Model,
        family: ModelFamily,
        n_partitions: int,
        train_size: int,
        groups: np.ndarray | None,
        device: torch.device,
        generator: torch.Generator,
        chunk_rows: int | None = None,
        in_place: bool = False,
        partitions: str = "blocks",
        threads: int | None = None,
        block_rows: int | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        self.raw = x
        # each input row's rank in the canonical order (by row id; default: as given):
        # partitions are drawn in that order, so a reordered input gives the same ones
        self.keys = np.arange(x.shape[0], dtype=np.int64) if keys is None else np.asarray(keys)
        self.partitions = partitions
        self.threads = threads
        self.model = model
        self.family = family
        self.n_classes = n_classes
        self.n_partitions = n_partitions
        self.train_size = train_size
        self.device = device
        self.generator = generator
        # a model that reads the raw features (scikit-learn) must not see them standardised
        in_place = in_place and not family.raw_features
        # raw sparse rows serve the block pass of a model that has one, and the exact
        # family's sparse form on any partitions
        sparse = family.blocks and (partitions == "blocks" or family.exact)
        # a family with its own layout of the rows (an item's K choices) builds its store
        make_store = family.store or FeatureStore
        self.store = make_store(
            x, device, chunk_rows=chunk_rows, in_place=in_place, sparse_rows=sparse
        )
        self.y = to_device(np.asarray(y), device)
        # groups only shape the partitions, which are drawn on the CPU: they stay on the host
        self.groups = None if groups is None else np.asarray(groups)
        self.n_input = x.shape[0]
        self.labels = np.asarray(y, dtype=np.int64)
        model.attach(self.store, x, self.y, n_classes)
        # a model that takes blocks sizes them (once attached, it knows the stored rows)
        self.block_rows = block_rows or (
            model.block_rows(train_size, n_partitions)
            if family.blocks
            else default_block_rows(self.store.dim)
        )
        # a model that keeps sums per block from phase to phase (the exact family's primal
        # form) gets the blocks of the phase that dealt them, and only the parts drawn anew
        self.keeps_blocks = partitions == "blocks" and family.blocks and model.keeps_blocks()
        self.blocks: np.ndarray | None = None  # the block of every input row (-1: none)
        self.blocks_state: np.ndarray | None = None  # the generator before that dealing

    def _design(self, rows: np.ndarray, canon: torch.Tensor, groups) -> BlockDesign:
        """The phase's block design on the CPU: the rows dealt afresh, or, for a model that
        keeps blocks, in the blocks they were dealt to (dealt afresh the first time, and
        when fewer than two blocks still have rows)."""
        if self.keeps_blocks and self.blocks is not None:
            kept = torch.from_numpy(self.blocks[rows])
            if len(torch.unique(kept)) >= 2:
                n_blocks = int(self.blocks.max()) + 1
                return kept_block_design(kept, n_blocks, self.n_partitions, self.train_size,
                                         generator=self.generator, canon=canon)  # fmt: skip
        if self.keeps_blocks:
            self.blocks_state = self.generator.get_state().numpy().copy()
        design = block_design(
            len(rows),
            self.n_partitions,
            self.train_size,
            block_rows=self.block_rows,
            generator=self.generator,
            device=torch.device("cpu"),
            groups=groups,
            canon=canon,
        )
        if self.keeps_blocks:
            self._keep(rows, design.order, design.bounds)
        return design

    def _keep(self, rows: np.ndarray, order: torch.Tensor, bounds: torch.Tensor) -> None:
        sizes = (bounds[1:] - bounds[:-1]).numpy()
        self.blocks = np.full(self.n_input, -1, dtype=np.int64)
        self.blocks[rows[order.numpy()]] = np.repeat(np.arange(len(sizes)), sizes)

    def restore_blocks(self, rows: np.ndarray, state: np.ndarray) -> None:
        """The blocks a dealing of ``rows`` made from the generator state ``state``: a
        resumed run keeps the blocks of the uninterrupted one (the run's own generator is
        not touched)."""
        rows = np.asarray(rows, dtype=np.int64)
        gen = torch.Generator()
        gen.set_state(torch.as_tensor(state, dtype=torch.uint8))
        canon, groups = self._canon(rows)
        order, sizes, _ = deal_blocks(len(rows), self.train_size, block_rows=self.block_rows,
                                      generator=gen, device=torch.device("cpu"),
                                      groups=groups, canon=canon)  # fmt: skip
        bounds = torch.zeros(len(sizes) + 1, dtype=torch.int64)
        bounds[1:] = torch.cumsum(sizes, 0)
        self._keep(rows, order, bounds)
        self.blocks_state = np.asarray(state).copy()

    def _canon(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The rows' canonical order (by id) and their group codes."""
        canon = torch.as_tensor(np.argsort(self.keys[rows], kind="stable"))
        groups = None
        if self.groups is not None:
            groups = torch.from_numpy(np.unique(self.groups[rows], return_inverse=True)[1])
        return canon, groups

    def labels_of(self, rows: np.ndarray) -> np.ndarray:
        """Class codes of input rows."""
        return self.labels[rows]

    def chance(self, rows: np.ndarray) -> float | None:
        """The score of a model that learned nothing on ``rows`` (sorted input positions), as
        the family declares it; None: their majority-class rate (the loop's default)."""
        if self.family.chance is None:
            return None
        return self.family.chance(self.store, rows, self.labels_of(rows))

    def needs_compaction(self, n_rows: int) -> bool:
        return self.store.needs_compaction(n_rows)

    def compact_to(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (sorted input positions) in storage."""
        pos = to_device(self.store.compact_to(rows), self.device)
        self.y = self.y[pos]
        self.model.attach(self.store, self.raw, self.y, self.n_classes)

    def run(self, rows: np.ndarray) -> PhaseOutput:
        """One phase on ``rows`` (sorted input positions)."""
        with compute_threads(self.threads), own_numerics():
            return self._run(np.asarray(rows, dtype=np.int64))

    def _run(self, rows: np.ndarray) -> PhaseOutput:
        n = len(rows)
        pos = to_device(self.store.positions(rows), self.device)
        n_store = self.store.n_stored
        current = torch.zeros(n_store, dtype=torch.float32, device=self.device)
        current[pos] = 1.0
        design = None
        # the partitions are drawn on the CPU whatever the compute device: CUDA's random
        # streams are not the CPU's, and the rows a seed removes must not depend on the device
        cpu = torch.device("cpu")
        canon, groups = self._canon(rows)
        if self.partitions == "blocks":
            design = self._design(rows, canon, groups).to(self.device)
            train_active = None
        else:
            train_active = train_masks(
                n,
                self.n_partitions,
                self.train_size,
                generator=self.generator,
                device=cpu,
                groups=groups,
                canon=canon,
            )
            # a byte a mask entry on the way (not four)
            train_active = to_device(train_active.bool(), self.device).to(torch.float32)
        if design is not None and self.family.blocks:
            counts = self.model.score_blocks(design, pos, current)
        else:
            if train_active is None:  # a family that takes masks: the design's
                train_active = design.train_mask()
            if n == n_store:
                train, heldout = train_active, 1.0 - train_active
            else:
                train = torch.zeros(
                    (n_store, self.n_partitions), dtype=torch.float32, device=self.device
                )
                train[pos] = train_active
                heldout = torch.zeros_like(train)
                heldout[pos] = 1.0 - train_active
            counts = self.model.score(train, heldout, current)
        correct, held = counts.correct[pos], counts.heldout[pos]
        info = dict(counts.info)
        info["partitions"] = self.partitions
        return PhaseOutput(
            correct=to_host(correct).astype(np.int64),
            heldout=to_host(held).astype(np.int64),
            train_on_device=(lambda: train_active) if design is None else design.train_mask,
            info=info,
            tol=counts.tol,
        )
