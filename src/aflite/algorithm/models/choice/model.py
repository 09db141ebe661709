"""The choice-wise family's phase model: AFLITE on multiple-choice items (features (N, K, d)).

Each row of the store is one item, its K choices' standardised features side by side
(:func:`aflite.algorithm.numerics.item_store.choice_store`), so partitions, compaction and the
slice selection work on items unchanged; an item is kept or removed with all its choices.
"""

from __future__ import annotations

import torch

from aflite.algorithm.models.choice.fit import choice_heldout_counts, fit_choices
from aflite.algorithm.models.choice.settings import ChoiceEnsemble
from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.models.items import ItemModel
from aflite.algorithm.models.linear.settings import LinearEnsemble
from aflite.algorithm.models.sharded_items import ShardedItems
from aflite.algorithm.numerics.blocks import TASK_ROWS, BlockDesign, default_block_rows, plan_blocks
from aflite.algorithm.numerics.shard_set import shards_of

__all__ = ["ChoiceModel"]


class ChoiceModel(ItemModel):
    """All partitions' choice-wise models of a phase fitted at once
    (:mod:`aflite.algorithm.models.choice.fit`); a held-out item counts as predicted when its
    right choice is picked out. Settings: a :class:`ChoiceEnsemble`, or the logistic family's
    :class:`~aflite.LinearEnsemble`, which lends its C, tol, max_iter and history."""

    def __init__(self, model: ChoiceEnsemble | LinearEnsemble | None = None) -> None:
        if isinstance(model, LinearEnsemble):
            model = ChoiceEnsemble(
                C=model.C, tol=model.tol, max_iter=model.max_iter, history=model.history
            )
        self.model = model or ChoiceEnsemble()

    def keeps_blocks(self) -> bool:
        return False  # nothing kept between phases: the blocks are dealt afresh

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        # over S shards a block is S times as large: each shard's part of it is what one
        # store's block is (as the logistic family's)
        return default_block_rows(self.store.dim) * self.store.n_shards

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        fit = fit_choices(self.store, self.y, self.neg, self.model, train=train)
        correct, held = choice_heldout_counts(self.store, self.y, self.neg, fit, heldout=heldout)
        return PhaseCounts(correct, held, fit.report.to_dict(), tol=self.model.tol)

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        """One phase on block partitions of the items."""
        # a task of TASK_ROWS rows of d features stays in cache: here a row is an item's K choices
        rows = (1 << 18 if self.store.device.type == "cuda" else TASK_ROWS) // self.k
        if self.store.n_shards > 1:  # over the shards of the items, where they are held
            passes = ShardedItems(shards_of(self.store, self.y), self.store, design, positions,
                                  self.y, self.k, max(1, rows))  # fmt: skip
            fit = fit_choices(self.store, self.y, self.neg, self.model, passes=passes)
            correct, held = passes.counts(fit.weights)
            return PhaseCounts(correct, held, fit.report.to_dict(), tol=self.model.tol)
        plan = plan_blocks(self.store, self.y, design, positions, self.k, task_rows=max(1, rows))
        fit = fit_choices(self.store, self.y, self.neg, self.model, plan=plan)
        correct, held = choice_heldout_counts(self.store, self.y, self.neg, fit, plan=plan)
        return PhaseCounts(correct, held, fit.report.to_dict(), tol=self.model.tol)

    def describe(self) -> str:
        return repr(self.model)
