"""``pvi``: pointwise V-information (Ethayarajh et al. 2022), out of fold.

PVI(x -> y) = -log2 p_null(y) + log2 p_x(y), as in kawine/dataset_difficulty, where p_x is a
model trained on the input and p_null one trained on a null input. Here both are cross-fitted:
p_x is the out-of-fold probability of the gold label under L2 logistic regression on Phi
(the filter's converged solver; ``C="auto"`` picks the penalty with the lowest held-out
log-loss, see :func:`~aflite.scoring.crossfit.oof_probabilities`), and the null model's output is the class frequencies of the rows its fold
trained on (what a model of an empty input learns). With a partial input (a second feature
matrix, e.g. hypothesis-only n-grams) the scorer also gives ``pvi_partial`` =
-log2 p_partial(y) + log2 p_x(y): what the full input adds to the partial one.
Probabilities are clipped at 1e-12 (a class a fold never trained on). Higher is easier.
On multiple-choice items p_x is the choice-wise model's (a softmax over the item's choices)
and the null model learns answer positions: PVI is what the content adds to them.
"""

from __future__ import annotations

import numpy as np

from aflite.scoring.crossfit import oof_prior, oof_probabilities
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["gold_probability", "oof_full", "oof_partial", "pvi", "pvi_from_probabilities"]

_FLOOR = 1e-12


def gold_probability(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(R, N) probability of each row's gold label from (R, N, C) probabilities."""
    return np.take_along_axis(
        probs, np.broadcast_to(gold[None, :, None], probs.shape[:2] + (1,)), 2
    )[..., 0]


def pvi_from_probabilities(p_model: np.ndarray, p_baseline: np.ndarray) -> np.ndarray:
    """(N,) PVI from (R, N) gold-label probabilities of the model and of the baseline
    (null or partial input), averaged over the R cross-fits."""
    pm = np.clip(p_model, _FLOOR, 1.0)
    pb = np.clip(p_baseline, _FLOOR, 1.0)
    return (-np.log2(pb) + np.log2(pm)).mean(axis=0)


def _oof(ctx: ScoringContext, key: str, x: np.ndarray, given: str) -> np.ndarray:
    if ctx.options.get(given) is not None:
        # the user's own model's out-of-fold probabilities: one "repeat"
        ctx.info[key] = {"source": given}
        return ctx.options[given][None]

    def fit() -> np.ndarray:
        probs, info = oof_probabilities(
            x, ctx.y, ctx.n_classes, ctx.folds, C=ctx.options["C"], device=ctx.device
        )
        ctx.info[key] = info
        return probs

    return ctx.shared(key, fit)


def oof_full(ctx: ScoringContext) -> np.ndarray:
    """(R, N, C) out-of-fold probabilities on Phi, shared by the scorers of a call."""
    return _oof(ctx, "model_full", ctx.x, "probs")


def oof_partial(ctx: ScoringContext) -> np.ndarray:
    """(R, N, C) out-of-fold probabilities on the partial input."""
    return _oof(ctx, "model_partial", ctx.partial, "partial_probs")


@register_example_scorer(
    "pvi",
    columns=("pvi", "pvi_partial"),
    description="pointwise V-information, bits: -log2 p_null(y) + log2 p_x(y) out of fold "
    "(and given the partial input, when there is one)",
    options={"C": "auto"},
    items=True,
)
def pvi(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """PVI against the null model, and against the partial input when the call has one."""
    if np.ndim(ctx.x) == 3:
        return {"pvi": _item_pvi(ctx)}
    p_x = gold_probability(oof_full(ctx), ctx.y)
    p_null = gold_probability(oof_prior(ctx.y, ctx.n_classes, ctx.folds), ctx.y)
    out = {"pvi": pvi_from_probabilities(p_x, p_null)}
    if ctx.partial is not None or ctx.options.get("partial_probs") is not None:
        out["pvi_partial"] = pvi_from_probabilities(p_x, gold_probability(oof_partial(ctx), ctx.y))
    return out


def _item_pvi(ctx: ScoringContext) -> np.ndarray:
    """PVI of multiple-choice items: p_x the choice-wise model's out-of-fold probability of
    the right choice, p_null the answer-position frequencies of the items its fold trained
    on, over the item's own choices (what a model that sees no content learns)."""
    from aflite.algorithm.numerics.item_store import valid_choices
    from aflite.scoring.crossfit import oof_choice_probabilities

    def fit() -> np.ndarray:
        probs, info = oof_choice_probabilities(
            ctx.x, ctx.y, ctx.folds, C=ctx.options["C"], device=ctx.device
        )
        ctx.info["model_full"] = info
        return probs

    p_x = gold_probability(ctx.shared("model_full", fit), ctx.y)
    prior = oof_prior(ctx.y, ctx.n_classes, ctx.folds) * valid_choices(ctx.x)[None]
    prior /= np.maximum(prior.sum(axis=2, keepdims=True), 1e-300)  # no position seen: 0
    return pvi_from_probabilities(p_x, gold_probability(prior, ctx.y))
