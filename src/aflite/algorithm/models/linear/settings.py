"""The settings of the logistic family (``model="linear"``): what a user passes as ``model=``
to change them. Importing them loads no torch (the family's registration reads them)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["LinearEnsemble", "Solver"]

Solver = Literal["auto", "primal", "span"]


@dataclass(frozen=True)
class LinearEnsemble:
    """The default model family: multinomial logistic regression with an L2 penalty.

    Parameters
    ----------
    C:
        Inverse regularisation strength, as in scikit-learn's ``LogisticRegression``: each
        classifier minimises ``C * sum(cross_entropy) + 0.5 * ||W||^2`` (the intercept is not
        penalised; two classes are fitted as one binary model would be).
    tol:
        A classifier has converged when its gradient norm is at most ``tol`` times its value
        at zero (the span solver, whose steps cost only t^2 C per classifier, goes to a tenth
        of it: parts of a few dozen rows of wide features needed that to predict as converged
        fits do).
    max_iter:
        L-BFGS iterations at most; a phase that needs more warns and records it.
    history:
        L-BFGS memory (curvature pairs kept).
    solver:
        ``"primal"`` (all weights stacked, best when the training part is at least the
        feature dimension), ``"span"`` (coefficients over each part's training rows, best
        for small parts of wide features) or ``"auto"``.
    """

    C: float = 1.0
    tol: float = 1e-4
    max_iter: int = 1000
    history: int = 5
    solver: Solver = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.C, (int, float)) and math.isfinite(self.C) and self.C > 0):
            raise ValueError(f"LinearEnsemble: C must be a positive number, got {self.C!r}")
        if not (isinstance(self.tol, (int, float)) and 0 < self.tol < 1):
            raise ValueError(f"LinearEnsemble: tol must be in (0, 1), got {self.tol!r}")
        if (
            isinstance(self.max_iter, bool)
            or not isinstance(self.max_iter, int)
            or self.max_iter < 1
        ):
            raise ValueError(
                f"LinearEnsemble: max_iter must be a positive int, got {self.max_iter!r}"
            )
        if isinstance(self.history, bool) or not isinstance(self.history, int) or self.history < 1:
            raise ValueError(
                f"LinearEnsemble: history must be a positive int, got {self.history!r}"
            )
        if self.solver not in ("auto", "primal", "span"):
            raise ValueError(
                f"LinearEnsemble: solver must be 'auto', 'primal' or 'span', got {self.solver!r}"
            )
