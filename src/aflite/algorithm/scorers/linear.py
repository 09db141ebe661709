"""The default scorer: the batched L2 logistic-regression ensemble (:mod:`aflite.algorithm.solvers`)."""

from __future__ import annotations

import numpy as np
import torch

from aflite.algorithm.partitions import BlockDesign
from aflite.algorithm.scorers.base import PhaseCounts, register_scorer
from aflite.algorithm.solvers import LinearEnsemble, fit_ensemble, heldout_counts
from aflite.algorithm.solvers.blocks import plan_blocks
from aflite.algorithm.storage import FeatureStore

__all__ = ["LinearScorer"]


@register_scorer("linear")
class LinearScorer:
    """All partitions of a phase fitted at once on the compute device."""

    supports_blocks = True

    def __init__(self, model: LinearEnsemble | None = None) -> None:
        self.model = model or LinearEnsemble()

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        self.store, self.y, self.n_classes = store, y, n_classes

    def score(self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor) -> PhaseCounts:
        ens, _ = fit_ensemble(self.store, self.y, train, self.n_classes, self.model, current=current)
        correct, held = heldout_counts(self.store, self.y, ens, heldout)
        return PhaseCounts(correct, held, ens.report.to_dict())

    def score_blocks(self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor) -> PhaseCounts:
        """One phase on block partitions (see :mod:`aflite.algorithm.solvers.blocks`)."""
        plan = plan_blocks(self.store, self.y, design, positions, self.n_classes)
        ens, _ = fit_ensemble(
            self.store, self.y, None, self.n_classes, self.model, current=current, plan=plan
        )
        correct, held = plan.heldout_counts(ens.theta, ens.neg)
        return PhaseCounts(correct, held, ens.report.to_dict())

    def describe(self) -> str:
        return repr(self.model)
