"""``aum``: area under the margin (Pleiss et al. 2020) from out-of-fold training dynamics.

The margin of a row after an epoch is the logit of its assigned label minus the largest other
logit; AUM is its mean over epochs (and over repeated cross-fits). Negative: the models
prefer another label, the mark of a mislabelled row.
"""

from __future__ import annotations

import numpy as np

from aflite.scoring.dynamics import DYNAMICS_OPTIONS, dynamics_of
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["aum", "aum_from_logits"]


def aum_from_logits(logits: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(N,) mean margin from (N, R, E, C) logits and (N,) assigned labels."""
    z = np.asarray(logits, dtype=np.float64)
    own = np.take_along_axis(z, np.broadcast_to(gold[:, None, None, None], z.shape[:3] + (1,)), 3)
    others = z.copy()
    np.put_along_axis(
        others, np.broadcast_to(gold[:, None, None, None], z.shape[:3] + (1,)), -np.inf, 3
    )
    margin = own[..., 0] - others.max(axis=3)
    return margin.mean(axis=(1, 2))


@register_example_scorer(
    "aum",
    description="area under the margin: assigned-label logit minus the largest other, "
    "mean over epochs",
    options=dict(DYNAMICS_OPTIONS),
)
def aum(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """AUM from the call's training dynamics (out of fold)."""
    td = dynamics_of(ctx)
    return {"aum": aum_from_logits(td.logits, td.gold)}
