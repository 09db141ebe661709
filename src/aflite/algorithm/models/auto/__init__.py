"""``model="auto"``: the exact least-squares family where it measures what logistic regression
does, logistic regression elsewhere.

Where a training part has at most as many rows as there are features (t <= d: text features,
n-grams or sentence embeddings, at the usual t of 10% of a few thousand rows), the ridge
family's scores agreed with converged logistic regression on the same partitions at least as
closely as two seeds of logistic regression agree with each other, on every data set
measured (docs/algorithm.md, "Model families"); and it is exact, so the same seed keeps the
same rows on any machine. Where t > d (many rows of few features: pixels, small embeddings)
least squares and logistic regression part ways (scikit-learn's digits: r 0.91 against 0.98
between two logistic seeds), so the choice there stays logistic regression. On
multiple-choice items it takes the choice-wise model.
"""

from __future__ import annotations

from typing import Any

from aflite.algorithm.models.contract import Model, register_model

__all__ = ["ridge_where_parts_are_narrow"]


def ridge_where_parts_are_narrow(train_size: int, dim: int) -> str:
    """The family ``auto`` runs for training parts of ``train_size`` rows of ``dim``
    features."""
    return "ridge" if train_size <= dim else "linear"


@register_model(
    "auto",
    description="ridge where a training part has at most as many rows as features (t <= d), "
    "else linear",
    distributed=True,
    items="choice",
    size_rule=ridge_where_parts_are_narrow,
)
def auto(settings: Any) -> Model:
    raise ValueError("model 'auto' chooses a family from the run's sizes: it has no model")
