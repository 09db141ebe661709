"""``el2n``: the error L2-norm (Paul et al. 2021) early in training, out of fold.

EL2N = || softmax(f(x)) - onehot(y) ||_2 after epoch ``el2n_epoch`` (1-based; early in
training, as in the paper), averaged over repeated cross-fits (the paper averages over
seeds: pass ``repeats``). Higher is harder.
"""

from __future__ import annotations

import numpy as np

from aflite.scoring.dynamics import DYNAMICS_OPTIONS, dynamics_of
from aflite.scoring.registry import ScoringContext, register_example_scorer

__all__ = ["check_el2n_epoch", "el2n", "el2n_from_probabilities"]


def el2n_from_probabilities(probs: np.ndarray, gold: np.ndarray, epoch: int) -> np.ndarray:
    """(N,) EL2N from (N, R, E, C) probabilities after the 1-based ``epoch``."""
    e = probs.shape[2]
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or not 1 <= epoch <= e:
        raise ValueError(f"el2n_epoch must be an epoch from 1 to {e}, got {epoch!r}")
    p = np.asarray(probs[:, :, epoch - 1], dtype=np.float64)  # (N, R, C)
    onehot = np.eye(p.shape[2])[gold][:, None, :]
    return np.linalg.norm(p - onehot, axis=2).mean(axis=1)


def check_el2n_epoch(options: dict) -> None:
    """``el2n_epoch`` must be one of the epochs recorded (or given with the dynamics)."""
    given = options.get("dynamics")
    epochs = given.n_epochs if given is not None else options["epochs"]
    e = options["el2n_epoch"]
    if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 1 <= e <= epochs:
        raise ValueError(f"el2n_epoch must be an epoch from 1 to {epochs}, got {e!r}")


@register_example_scorer(
    "el2n",
    description="error L2-norm ||softmax - onehot(y)|| early in training (higher = harder)",
    lower_is_easier=("el2n",),
    options={**DYNAMICS_OPTIONS, "el2n_epoch": 1},
    check=check_el2n_epoch,
)
def el2n(ctx: ScoringContext) -> dict[str, np.ndarray]:
    """EL2N from the call's training dynamics (out of fold)."""
    td = dynamics_of(ctx)
    return {"el2n": el2n_from_probabilities(td.probabilities(), td.gold, ctx.options["el2n_epoch"])}
