"""``predictability``: AFLITE's first-phase score, the fraction of a row's held-out
predictions that were correct over random partitions (:func:`aflite.predictability_scores`)."""

from __future__ import annotations

import numpy as np

from aflite.algorithm import FilterOptions
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["predictability"]


@register_example_scorer(
    "predictability",
    description="AFLITE's score: share of correct held-out predictions over random partitions",
    # one phase as aflite.filter runs it by default (one table: aflite.FilterOptions)
    options={"n_partitions": FilterOptions.n_partitions, "train_size": FilterOptions.train_size},
    filter_phase=True,
    items=True,
)
def predictability(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """One phase of AFLITE: ``n_partitions`` models, each trained on ``train_size`` rows (the
    filter's defaults), out of sample by construction; grouped when the call has groups. On
    multiple-choice items the models are choice-wise (:class:`aflite.ChoiceEnsemble`) and an
    item's score is the share of them that pick its right choice."""
    from aflite.algorithm import predictability_scores

    ps = predictability_scores(
        ctx.x,
        ctx.y,
        n_partitions=ctx.options["n_partitions"],
        train_size=ctx.options["train_size"],
        groups=ctx.groups,
        seed=ctx.seed,
        device=ctx.device,
    )
    ctx.info["predictability"] = {"representation_bias": ps.representation_bias}
    return {"predictability": ps.scores}
