"""``datamap``: dataset cartography (Swayamdipta et al. 2020) from out-of-fold training
dynamics: confidence, variability, correctness and a region per row.

As in allenai/cartography: confidence is the mean probability of the gold label over epochs,
variability its standard deviation (``np.std``, ddof 0), correctness the share of epochs
whose arg-max prediction is the gold label (cartography stores the count; its plots divide
by the epochs). With R repeated cross-fits each is averaged over the repeats.
"""

from __future__ import annotations

import numpy as np

from aflite.scoring.dynamics import DYNAMICS_OPTIONS, dynamics_of
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["REGIONS", "datamap", "datamap_metrics", "datamap_regions"]

REGIONS = ("easy", "ambiguous", "hard")


def datamap_metrics(gold_probability: np.ndarray, correct: np.ndarray) -> dict[str, np.ndarray]:
    """Confidence, variability and correctness from (N, R, E) gold-label probabilities and
    (N, R, E) correctness of each row, repeat and epoch."""
    p = np.asarray(gold_probability, dtype=np.float64)
    return {
        "confidence": p.mean(axis=2).mean(axis=1),
        "variability": p.std(axis=2).mean(axis=1),
        "correctness": np.asarray(correct, dtype=np.float64).mean(axis=(1, 2)),
    }


def datamap_regions(
    confidence: np.ndarray,
    variability: np.ndarray,
    *,
    ambiguous_share: float = 1 / 3,
    ambiguous_min: float = 0.05,
    easy_confidence: float = 0.5,
) -> np.ndarray:
    """The data map's regions, one of :data:`REGIONS` per row.

    ``ambiguous``: variability above its (1 - ``ambiguous_share``) quantile (cartography
    selects the 33% most variable rows as ambiguous) and at least ``ambiguous_min`` (a row
    whose gold-label probability barely moves is settled, however little the others move).
    Of the other rows, ``easy`` where confidence >= ``easy_confidence``, ``hard`` below.
    Variability is read by rank first because its scale depends on the model and the
    training schedule.
    """
    if not 0 <= ambiguous_share < 1:
        raise ValueError(f"ambiguous_share must be in [0, 1), got {ambiguous_share!r}")
    v = np.asarray(variability, dtype=np.float64)
    cut = np.quantile(v, 1 - ambiguous_share) if ambiguous_share > 0 else np.inf
    out = np.where(np.asarray(confidence) >= easy_confidence, "easy", "hard").astype(object)
    out[(v > cut) & (v >= ambiguous_min)] = "ambiguous"
    return out


@register_example_scorer(
    "datamap",
    columns=("confidence", "variability", "correctness", "region"),
    lower_is_easier=("variability",),
    description="data map: mean and std of the gold-label probability over epochs, share "
    "of epochs correct, region easy / ambiguous / hard",
    options={
        **DYNAMICS_OPTIONS,
        "ambiguous_share": 1 / 3,
        "ambiguous_min": 0.05,
        "easy_confidence": 0.5,
    },
)
def datamap(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """Data-map coordinates from the call's training dynamics (out of fold)."""
    td = dynamics_of(ctx)
    out = datamap_metrics(td.gold_probability(), td.correct())
    out["region"] = datamap_regions(
        out["confidence"],
        out["variability"],
        ambiguous_share=ctx.options["ambiguous_share"],
        ambiguous_min=ctx.options["ambiguous_min"],
        easy_confidence=ctx.options["easy_confidence"],
    )
    return out
