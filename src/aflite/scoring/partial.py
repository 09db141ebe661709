"""``partial``: the out-of-fold probability of the gold label under a model that sees only a
partial input (e.g. the hypothesis of an NLI pair): high where the partial input alone gives
the label away (Gururangan et al. 2018, Poliak et al. 2018)."""

from __future__ import annotations

import numpy as np

from aflite.scoring.pvi import gold_probability, oof_partial
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["partial"]


@register_example_scorer(
    "partial",
    description="out-of-fold gold-label probability of a model on the partial input only",
    needs_partial=True,
    options={"C": "auto"},
)
def partial(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """Mean over the repeated cross-fits of p_partial(y), L2 logistic regression (``C`` as
    for ``pvi``)."""
    return {"partial": gold_probability(oof_partial(ctx), ctx.y).mean(axis=0)}
