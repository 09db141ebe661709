"""The settings of the choice-wise family (``model="choice"``): what a user passes as
``model=`` to change them. Importing them loads no torch (the family's registration reads
them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ChoiceEnsemble"]


@dataclass(frozen=True)
class ChoiceEnsemble:
    """The choice-wise linear model family for features of shape (N, K, d).

    ``adversarial_filter(features, answers, ...)`` with (N, K, d) features (a padded choice is
    a row of NaN, :func:`aflite.algorithm.numerics.item_store.pad_choices`) and the 0-based position of
    each item's right choice uses it by default (``model="choice"`` or an instance to set
    its options); items are kept or removed whole, and the chance level (each phase's and the
    kept set's) is the best answer-position-only guess: the share of the most frequent answer
    position, at least 1/K (per number of choices when K varies).

    Parameters
    ----------
    C:
        Inverse regularisation strength: each model minimises ``C * sum(cross_entropy over
        the item's choices) + 0.5 * ||w||^2``, the convention of :class:`~aflite.LinearEnsemble`
        (for two choices, a binary logistic regression with this C on the choices' difference).
    tol:
        A model has converged when its gradient norm is at most ``tol`` times its value at
        zero.
    max_iter:
        L-BFGS iterations at most; a phase that needs more warns and records it.
    history:
        L-BFGS memory (curvature pairs kept).
    """

    C: float = 1.0
    tol: float = 1e-4
    max_iter: int = 1000
    history: int = 5

    def __post_init__(self) -> None:
        if not (isinstance(self.C, (int, float)) and math.isfinite(self.C) and self.C > 0):
            raise ValueError(f"ChoiceEnsemble: C must be a positive number, got {self.C!r}")
        if not (isinstance(self.tol, (int, float)) and 0 < self.tol < 1):
            raise ValueError(f"ChoiceEnsemble: tol must be in (0, 1), got {self.tol!r}")
        for name in ("max_iter", "history"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"ChoiceEnsemble: {name} must be a positive int, got {v!r}")
