"""The exact least-squares family's phase model: scikit-learn's ``RidgeClassifier`` on every
training part, all partitions of a phase solved in closed form
(:mod:`aflite.algorithm.models.ridge.fit`)."""

from __future__ import annotations

import numpy as np
import torch

from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.models.ridge.fit import Parts, choose_form, fit_ridge
from aflite.algorithm.models.ridge.kernel import KernelCache, kernel_fits
from aflite.algorithm.models.ridge.settings import RidgeEnsemble
from aflite.algorithm.numerics.blocks import MIN_BLOCKS_PER_PART, BlockDesign
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["FINE_BLOCKS", "RidgeModel", "parts_of_mask"]

# Blocks per training part for the dual and sparse forms. With one dealing of the rows per
# phase, a part of 8 blocks made the scores of two seeds differ by 0.034 (sd, bundled SNLI
# slice, m=1,024), against 0.021 for independent uniform parts; at 128 blocks they differ by
# 0.016: the balanced design (each block in the same number of parts) beats independent draws.
FINE_BLOCKS = 128


class RidgeModel:
    """All partitions of a phase solved exactly, on the CPU or CUDA."""

    def __init__(self, model: RidgeEnsemble | None = None) -> None:
        self.model = model or RidgeEnsemble()
        self.kernel = KernelCache()

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        """Rows per block. The dual and sparse forms solve each part on its own rows, so the
        blocks can be small: a part is ``FINE_BLOCKS`` blocks, and the phase's design is
        close to independent parts, balanced (every block in the same number of parts).
        The primal form sums its blocks' Gram matrices (``cg``: multiplies each block by its
        parts' weights), so it takes few, large blocks (``MIN_BLOCKS_PER_PART`` a part)."""
        # from the shapes only, never from the device, the features' dtype or whether the
        # store keeps raw sparse rows: the design decides which rows train which part, so it
        # must be the same on every machine (the sparse form takes any design)
        store = self.store
        form = choose_form(
            RidgeEnsemble(
                self.model.alpha, "auto" if self.model.form == "sparse" else self.model.form
            ),
            n=store.n_stored,
            d=store.dim,
            t=train_size,
            p=n_partitions,
            dual_ok=kernel_fits(store.n_stored),
            sparse_ok=False,
            n_classes=self.n_classes,
        )
        # the two primal solvers take the same design: they give the same answer
        q = MIN_BLOCKS_PER_PART if form in ("primal", "cg") else FINE_BLOCKS
        return max(1, -(-train_size // q))

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        # the kernel cache follows the store's rows by itself (cut down on compaction)
        self.store, self.y, self.n_classes = store, y, n_classes

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        order, weight = parts_of_mask(train)
        fit, counts = fit_ridge(
            self.store,
            self.y,
            Parts(order, weight),
            self.n_classes,
            self.model,
            kernel=self.kernel,
            held_of=lambda s, e: heldout[s:e] > 0,
        )
        return PhaseCounts(
            counts.correct.float(), counts.held.float(), fit.report.to_dict(), margin=counts.margin
        )

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        order, weight = parts_of_mask(design.train_mask(torch.bool), positions)
        parts = Parts(order, weight, design, positions)
        block = torch.full((self.store.n_stored,), -1, dtype=torch.int64, device=positions.device)
        block[positions] = design.block_of_rows()
        trains = design.incidence

        def held_of(s: int, e: int) -> torch.Tensor:
            b = block[s:e]
            return (b >= 0)[:, None] & ~trains[b.clamp(min=0)]

        fit, counts = fit_ridge(
            self.store,
            self.y,
            parts,
            self.n_classes,
            self.model,
            kernel=self.kernel,
            held_of=held_of,
        )
        return PhaseCounts(
            counts.correct.float(), counts.held.float(), fit.report.to_dict(), margin=counts.margin
        )

    def describe(self) -> str:
        return repr(self.model)


def parts_of_mask(
    train: torch.Tensor, positions: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(P, t_max) positions of each column's training rows (ascending) and their 1/0 weights
    (padding points at row 0 with weight 0); ``positions`` maps the mask's rows to store
    positions."""
    part, row = torch.nonzero(train.T > 0, as_tuple=True)  # by part, rows ascending
    sizes = torch.bincount(part, minlength=train.shape[1])
    t_max = int(sizes.max())
    slot = torch.arange(len(part), device=train.device) - (torch.cumsum(sizes, 0) - sizes)[part]
    order = torch.zeros((train.shape[1], t_max), dtype=torch.int64, device=train.device)
    weight = torch.zeros((train.shape[1], t_max), dtype=torch.float32, device=train.device)
    order[part, slot] = row if positions is None else positions[row]
    weight[part, slot] = 1.0
    return order, weight
