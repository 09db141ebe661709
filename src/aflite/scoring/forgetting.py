"""``forgetting``: forgetting events (Toneva et al. 2019) from out-of-fold training dynamics.

A forgetting event is a row going from correctly to incorrectly predicted between two
consecutive epochs. A row never predicted correctly in any epoch was never learned; it counts
as forgotten more often than any learned row can be: the number of epochs E (a learned row
is forgotten at most E / 2 times; cartography writes 1000). Averaged over repeated
cross-fits. Higher is harder.
"""

from __future__ import annotations

import numpy as np

from aflite.scoring.dynamics import DYNAMICS_OPTIONS, dynamics_of
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["forgetting", "forgetting_events"]


def forgetting_events(correct: np.ndarray) -> np.ndarray:
    """(N,) forgetting events from (N, R, E) correctness, never-learned rows counted as E."""
    c = np.asarray(correct, dtype=bool)
    events = (c[:, :, :-1] & ~c[:, :, 1:]).sum(axis=2).astype(np.float64)
    events[~c.any(axis=2)] = c.shape[2]
    return events.mean(axis=1)


@register_example_scorer(
    "forgetting",
    description="forgetting events: correct -> incorrect between epochs; never learned = "
    "epochs (higher = harder)",
    lower_is_easier=("forgetting",),
    options=dict(DYNAMICS_OPTIONS),
)
def forgetting(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """Forgetting events from the call's training dynamics (out of fold)."""
    td = dynamics_of(ctx)
    return {"forgetting": forgetting_events(td.correct())}
