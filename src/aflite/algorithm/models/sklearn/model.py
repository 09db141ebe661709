"""The scikit-learn family's phase model: any scikit-learn classifier, cloned and fitted once
per partition (slower; flexible).

The estimator sees the caller's features as given (not standardised): a ``MultinomialNB``
gets its non-negative counts; put a ``StandardScaler`` in a ``Pipeline`` where scaling helps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.numerics.report import SolveReport
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["SklearnModel", "check_estimator"]


def check_estimator(estimator: Any) -> Any:
    """A scikit-learn classifier instance, or ValueError saying what it is instead."""
    try:
        from sklearn.base import is_classifier
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        raise ValueError("scikit-learn models need scikit-learn installed") from None
    if isinstance(estimator, type):
        raise ValueError(
            f"model must be an estimator instance, got the class {estimator.__name__}; "
            f"use {estimator.__name__}()"
        )
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise ValueError(
            f"model must be a scikit-learn classifier (with fit and predict), got {estimator!r}"
        )
    if not is_classifier(estimator):
        raise ValueError(
            f"model must be a classifier; {type(estimator).__name__} is not "
            "(sklearn.base.is_classifier is False)"
        )
    return estimator


class SklearnModel:
    """One cloned estimator per partition, fitted on that partition's training rows."""

    def __init__(self, estimator: Any) -> None:
        self.estimator = check_estimator(estimator)

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        self.store, self.raw, self.y = store, raw, y

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        from sklearn.base import clone

        pos = torch.nonzero(current > 0).squeeze(1)
        rows = self.store.rows[pos.cpu().numpy()]
        x = np.asarray(self.raw[rows])
        y = self.y[pos].cpu().numpy()
        tr = train[pos].cpu().numpy().astype(bool)
        ho = heldout[pos].cpu().numpy().astype(bool)
        correct = np.zeros(len(pos))
        for j in range(tr.shape[1]):
            fit_rows = tr[:, j]
            if len(np.unique(y[fit_rows])) < 2:
                # a one-class training part predicts that class everywhere
                pred = np.full(len(y), y[fit_rows][0])
            else:
                pred = clone(self.estimator).fit(x[fit_rows], y[fit_rows]).predict(x)
            correct += (pred == y) & ho[:, j]
        out_c = torch.zeros(self.store.n_stored, dtype=torch.float32, device=train.device)
        out_c[pos] = torch.as_tensor(correct, dtype=torch.float32, device=train.device)
        return PhaseCounts(out_c, heldout.sum(dim=1), SolveReport("scikit-learn").to_dict())

    def describe(self) -> str:
        return repr(self.estimator)
