"""The adversarial filter: batched model ensembles, predictability scores, AFLITE and AFOPT.

Pure array code: nothing here reads or writes data files.
"""

from aflite.algorithm.filtering import STRATEGIES, FilterState, adversarial_filter
from aflite.algorithm.linear import LinearEnsemble
from aflite.algorithm.optimum import OptimumResult, optimum, subset_bias
from aflite.algorithm.result import STOP_REASONS, FilterResult, PhaseRecord
from aflite.algorithm.scoring import PhaseScores, predictability_scores, representation_bias

__all__ = [
    "STOP_REASONS",
    "STRATEGIES",
    "FilterResult",
    "FilterState",
    "LinearEnsemble",
    "OptimumResult",
    "PhaseRecord",
    "PhaseScores",
    "adversarial_filter",
    "optimum",
    "predictability_scores",
    "representation_bias",
    "subset_bias",
]
