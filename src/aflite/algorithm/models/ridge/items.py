"""The exact least-squares family on multiple-choice items (``model="ridge"`` with features
(N, K, d)): the choice-wise variant of :mod:`aflite.algorithm.models.ridge.fit`.

Each training part fits one weight vector on its items' choices, stored centred on their
item's mean (:func:`aflite.algorithm.numerics.item_store.choice_store`): the target of a choice is +1
where it is the answer and -1 where it is not, and

    min_w  sum over the part's real choices (y_ik - z_ik w)^2 + alpha * r * ||w||^2

with r the part's real choices, as scikit-learn's ``Ridge(alpha=alpha * r,
fit_intercept=False)`` on those rows. A choice's centred row makes a shift shared by an item's
choices irrelevant, as in the choice-wise logistic model, and the item's prediction is its
choice of highest ``z w`` (a tie is a draw among the tied, as there). The d x d system of a
part is the sum of its blocks' Grams (every choice multiplied once a phase), solved in float64
(a float32 factor refined against the float64 matrix) with float64 predictions, so machines
differ only at a lead within about 1e-12 of zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.choice.fit import ChoiceFit, choice_heldout_counts
from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.models.items import ItemModel
from aflite.algorithm.models.ridge.direct import (
    BLOCK_BYTES,
    SOLVE_BYTES,
    PrimalSums,
    parts_from_blocks,
    primal_solve,
)
from aflite.algorithm.models.ridge.fit import Parts
from aflite.algorithm.models.ridge.model import parts_of_mask
from aflite.algorithm.models.ridge.settings import RidgeEnsemble
from aflite.algorithm.models.sharded_items import (
    block_choices,
    block_grams,
    item_counts,
    part_grams,
    plan_shards,
)
from aflite.algorithm.numerics.blocks import (
    MIN_BLOCKS_PER_PART,
    TASK_ROWS,
    BlockDesign,
    plan_blocks,
)
from aflite.algorithm.numerics.report import SolveReport
from aflite.algorithm.numerics.shard_set import shards_of
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["ChoiceRidgeModel"]


class ChoiceRidgeModel(ItemModel):
    """All partitions of a phase on multiple-choice items, each solved exactly."""

    def __init__(self, model: RidgeEnsemble | None = None) -> None:
        self.model = model or RidgeEnsemble()
        if self.model.form not in ("auto", "primal"):
            raise ValueError(
                "multiple-choice items are fitted by the exact family's primal form only: "
                f"use RidgeEnsemble(form='auto') or form='primal', not form={self.model.form!r}"
            )

    def _choice_rows(self) -> tuple[FeatureStore, torch.Tensor, torch.Tensor]:
        """The stored items' rows one choice each (item i's choice c is row i*K + c), their
        targets (+1 the answer, -1 another real choice, 0 padding) and each item's real
        choices: for a phase in this process, on the rows it holds."""
        valid = self.neg == 0
        d = self.store.dim // self.k
        choices = FeatureStore.from_standardised(
            self.store.standardised().view(-1, d), self.store.device
        )
        target = torch.where(valid, -1.0, 0.0).double()
        target[torch.arange(len(self.y), device=self.y.device), self.y] = 1.0
        return choices, target.view(-1, 1), valid.sum(dim=1).double()

    def keeps_blocks(self) -> bool:
        return False  # nothing kept between phases: the blocks are dealt afresh

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        # a part is a sum of few, large blocks' Grams, as the class-wise primal form's
        return max(1, -(-train_size // MIN_BLOCKS_PER_PART))

    def _weights(self, parts: Parts) -> torch.Tensor:
        """(d, P) float64 weights of every part."""
        choices, targets, n_real = self._choice_rows()
        w = parts.weight.to(torch.float64)
        penalty = self.model.alpha * (n_real[parts.order] * w).sum(dim=1)
        sums = PrimalSums(choices, targets, _choice_parts(parts, self.k))
        return self._solve(sums.of, penalty)

    def _solve(
        self,
        sums_of: Callable[[torch.Tensor], Any],
        penalty: torch.Tensor,
        together: bool = True,
    ) -> torch.Tensor:
        """(d, P) float64 weights of the parts whose sums ``sums_of(j)`` gives, at
        ``penalty`` (P,), a group of parts at a time (on the worker threads where
        ``together``, else one group after another)."""
        p, d = len(penalty), self.store.dim // self.k
        per = max(1, SOLVE_BYTES // (8 * 4 * (d + 1) ** 2))
        dev = self.store.device
        groups = [torch.arange(s, min(p, s + per), device=dev) for s in range(0, p, per)]
        out = torch.empty((d, p), dtype=torch.float64, device=dev)
        solve = lambda j: primal_solve(sums_of(j), penalty[j], centre=False)  # noqa: E731
        solved = workers().map(solve, groups) if together else map(solve, groups)
        for j, (coef, _, _) in zip(groups, solved):
            out[:, j] = coef[:, :, 0].T
        return out

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        weights = self._weights(Parts(*parts_of_mask(train)))
        correct, held = choice_heldout_counts(
            self.store, self.y, self.neg, ChoiceFit(weights, self._report()), heldout=heldout
        )
        return PhaseCounts(correct, held, self._report().to_dict())

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        rows = (1 << 18 if self.store.device.type == "cuda" else TASK_ROWS) // self.k
        if self.store.n_shards > 1:
            return self._over_shards(design, positions, max(1, rows))
        order, weight = parts_of_mask(design.train_mask(torch.bool), positions)
        weights = self._weights(Parts(order, weight, design, positions))
        plan = plan_blocks(self.store, self.y, design, positions, self.k, task_rows=max(1, rows))
        correct, held = choice_heldout_counts(
            self.store, self.y, self.neg, ChoiceFit(weights, self._report()), plan=plan
        )
        return PhaseCounts(correct, held, self._report().to_dict())

    def _over_shards(self, design: BlockDesign, positions: torch.Tensor, rows: int) -> PhaseCounts:
        """One phase over the shards of the items (:mod:`~aflite.algorithm.models.sharded_items`):
        every block's sums gathered from the shards (or, where those would pass
        ``BLOCK_BYTES``, each part's own, a group of parts at a time), every part solved here."""
        shards = shards_of(self.store, self.y)
        plan_shards(shards, self.store, design, positions, self.k, rows)
        dev, d = self.store.device, self.store.dim // self.k
        inc = design.incidence.to(dev)
        if design.n_blocks * (d + 2) ** 2 * 8 <= BLOCK_BYTES:
            full, n_real = block_grams(shards, design.n_blocks)
            full = full.to(dev)
            penalty = self.model.alpha * (inc.T.to(torch.float64) @ n_real.to(dev))
            weights = self._solve(lambda j: parts_from_blocks(full, inc[:, j], d), penalty)
            moved = {"blocks": design.n_blocks}
        else:
            n_real = block_choices(shards, design.n_blocks).to(dev)
            penalty = self.model.alpha * (inc.T.to(torch.float64) @ n_real)
            eye = lambda j: torch.eye(len(j), dtype=torch.bool, device=dev)  # noqa: E731
            # one group's sums at a time from the shards: not from several threads at once
            weights = self._solve(
                lambda j: parts_from_blocks(part_grams(shards, inc[:, j]).to(dev), eye(j), d),
                penalty,
                together=False,
            )
            moved = {"part_sums": design.n_partitions}
        correct, held = item_counts(shards, self.store, weights)
        # what a phase moves: B (or m) x (d+2)^2 float64 a worker
        return PhaseCounts(correct, held, {**self._report().to_dict(), **moved})

    def _report(self) -> SolveReport:
        return SolveReport("choice-ridge", form="primal", alpha=self.model.alpha)

    def describe(self) -> str:
        return repr(self.model)


def _choice_parts(parts: Parts, k: int) -> Parts:
    """The same parts over choice rows (item i -> rows i*K .. i*K + K-1)."""
    offsets = torch.arange(k, device=parts.order.device)
    order = (parts.order[:, :, None] * k + offsets).flatten(1)
    weight = parts.weight[:, :, None].expand(*parts.weight.shape, k).flatten(1)
    if parts.design is None:
        return Parts(order, weight)
    design = parts.design
    rows = (parts.positions[design.order][:, None] * k + offsets).flatten()
    by_choice = BlockDesign(
        torch.arange(len(rows), device=rows.device), design.bounds * k, design.incidence
    )
    return Parts(order, weight, by_choice, rows)
