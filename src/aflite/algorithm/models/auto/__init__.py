"""``model="auto"``: the exact least-squares family where it measures what logistic regression
does, logistic regression elsewhere.

Where a training part has at most as many rows as there are features (t <= d: text features,
n-grams or sentence embeddings, at the usual t of 10% of a few thousand rows), the ridge
family's scores agreed with converged logistic regression on the same partitions at least as
closely as two seeds of logistic regression agree with each other, on every data set
measured (README, "Model families"); and it is exact, so the same seed keeps the same rows on
any machine. Where t > d (many rows of few features: pixels, small embeddings) least squares
and logistic regression part ways (scikit-learn's digits: r 0.91 against 0.98 between two
logistic seeds), so the choice there stays logistic regression.
"""

from __future__ import annotations

from typing import Any

from aflite.algorithm.models.base import Model, register_model
from aflite.algorithm.models.linear.model import LinearModel
from aflite.algorithm.models.ridge.model import RidgeModel

__all__ = ["AutoModel"]


@register_model(
    "auto",
    description="ridge where a training part has at most as many rows as features (t <= d), "
    "else linear",
    distributed=True,
)
class AutoModel:
    """Chooses a family from the shapes of a run; :meth:`choose` gives the phase model."""

    def __init__(self, model: Any = None) -> None:
        self.model = model

    def choose(self, train_size: int, dim: int) -> Model:
        return RidgeModel() if train_size <= dim else LinearModel()
