"""The exact least-squares family's phase model: scikit-learn's ``RidgeClassifier`` on every
training part, all partitions of a phase solved in closed form
(:mod:`aflite.algorithm.models.ridge.fit`)."""

from __future__ import annotations

import numpy as np
import torch

from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.models.ridge.direct import BLOCK_BYTES, BlockSums, parts_of_mask
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
# Blocks per part for the primal form where its blocks' sums fit in a quarter of BLOCK_BYTES:
# a row never trains the parts that predict its block-mates, an effect of the dealing that
# more partitions do not average away. Removed-set Jaccard of seeds 0, 1 and 2 at m = 512:
# digits 0.863 at 8 blocks a part, 0.891 at 32, 0.893 at 128; SNLI dev TF-IDF + SVD-256
# 0.804 at 8, 0.836 at 32, 0.838 at 64. Wide features (d = 1,024) keep 8: their sums are
# 8 MiB a block, and each part adds up its blocks'.
PRIMAL_BLOCKS = 32


class RidgeModel:
    """All partitions of a phase solved exactly, on the CPU or CUDA."""

    def __init__(self, model: RidgeEnsemble | None = None) -> None:
        self.model = model or RidgeEnsemble()
        self.kernel = KernelCache()
        self.sums = BlockSums()
        self.form = "auto"

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        """Rows per block. The dual and sparse forms solve each part on its own rows, so the
        blocks can be small: a part is ``FINE_BLOCKS`` blocks, and the phase's design is
        close to independent parts, balanced (every block in the same number of parts).
        The primal form sums its blocks' Gram matrices, so it takes fewer, larger blocks:
        ``PRIMAL_BLOCKS`` a part where their sums fit in a quarter of ``BLOCK_BYTES``, else
        ``MIN_BLOCKS_PER_PART``."""
        # from the shapes only, never from the device, the features' dtype or whether the
        # store keeps raw sparse rows: the design decides which rows train which part, so it
        # must be the same on every machine (the sparse form takes any design)
        store = self.store
        self.form = choose_form(
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
        q = FINE_BLOCKS
        if self.form == "primal":
            width = store.dim + 1 + self.n_classes
            fit = BLOCK_BYTES // 4 * train_size // (8 * width * width * max(1, store.n_stored))
            q = max(MIN_BLOCKS_PER_PART, min(PRIMAL_BLOCKS, int(fit)))
        return max(1, -(-train_size // q))

    def keeps_blocks(self) -> bool:
        """The primal form keeps its blocks' sums from phase to phase (brought down by the
        rows that left), so its phases keep the blocks of the phase that dealt them."""
        return self.form == "primal"

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        # the kernel cache follows the store's rows by itself (cut down on compaction); the
        # blocks' sums cannot be brought down by rows the compaction took away
        self.store, self.y, self.n_classes = store, y, n_classes
        self.sums = BlockSums()

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        fit, counts = fit_ridge(
            self.store,
            self.y,
            Parts(*parts_of_mask(train)),
            self.n_classes,
            self.model,
            kernel=self.kernel,
            held_of=lambda pos: heldout[pos] > 0,
        )
        return self._counts(fit, counts)

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        block = torch.full((self.store.n_stored,), -1, dtype=torch.int64, device=positions.device)
        block[positions] = design.block_of_rows()
        # the held-out mask of a row: its block's parts that do not train on it (no block:
        # a row not in the current set, held out by none)
        held = torch.cat([~design.incidence, torch.zeros_like(design.incidence[:1])])

        def held_of(pos: torch.Tensor) -> torch.Tensor:
            b = block[pos]
            return held[torch.where(b >= 0, b, len(held) - 1)]

        fit, counts = fit_ridge(
            self.store,
            self.y,
            Parts.of_design(design, positions),
            self.n_classes,
            self.model,
            kernel=self.kernel,
            held_of=held_of,
            sums=self.sums if self.keeps_blocks() else None,
        )
        return self._counts(fit, counts)

    def _counts(self, fit, counts) -> PhaseCounts:
        return PhaseCounts(counts.correct.float(), counts.held.float(), fit.report.to_dict())

    def describe(self) -> str:
        return repr(self.model)
