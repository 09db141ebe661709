"""Model families for a phase, behind one protocol: the batched linear ensemble (default),
any scikit-learn classifier, and (in :mod:`aflite.distributed`) the linear ensemble spread
over a Ray cluster."""

from aflite.algorithm.scorers import choice as _choice  # noqa: F401  (registers "choice")
from aflite.algorithm.scorers import linear as _linear  # noqa: F401  (registers "linear")
from aflite.algorithm.scorers import sklearn as _sklearn  # noqa: F401  (registers "sklearn")
from aflite.algorithm.scorers.base import (
    SCORERS,
    PhaseCounts,
    Scorer,
    register_scorer,
    resolve_scorer,
)
from aflite.algorithm.scorers.linear import LinearScorer
from aflite.algorithm.scorers.sklearn import SklearnScorer, check_estimator

__all__ = [
    "SCORERS",
    "LinearScorer",
    "PhaseCounts",
    "Scorer",
    "SklearnScorer",
    "check_estimator",
    "register_scorer",
    "resolve_scorer",
]
