"""The adversarial filter: batched model ensembles, predictability scores, AFLITE and AFOPT.

Pure array code: nothing here reads or writes data files.
"""

from aflite.algorithm._validation import (
    AUTO_PARTITIONS,
    SizeError,
    check_features,
    check_train_covers_classes,
    encode_groups,
    encode_labels,
    resolve_size,
)
from aflite.algorithm.by_scores import ByScores
from aflite.algorithm.filtering import ConvergenceWarning, FilterState, adversarial_filter
from aflite.algorithm.models import MODELS, Model, PhaseCounts, register_model
from aflite.algorithm.optimum import OptimumResult, optimum, subset_bias
from aflite.algorithm.result import STOP_REASONS, FilterResult, PhaseRecord
from aflite.algorithm.scoring import PhaseScores, predictability_scores, representation_bias
from aflite.algorithm.selection import STRATEGIES
from aflite.algorithm.solvers import LinearEnsemble, SolveReport
from aflite.algorithm.solvers.choice import ChoiceEnsemble
from aflite.algorithm.solvers.ridge import RidgeEnsemble

__all__ = [
    "AUTO_PARTITIONS",
    "MODELS",
    "STOP_REASONS",
    "STRATEGIES",
    "SizeError",
    "ChoiceEnsemble",
    "ConvergenceWarning",
    "FilterResult",
    "FilterState",
    "LinearEnsemble",
    "OptimumResult",
    "PhaseCounts",
    "PhaseRecord",
    "PhaseScores",
    "Model",
    "RidgeEnsemble",
    "SolveReport",
    "adversarial_filter",
    "check_features",
    "check_train_covers_classes",
    "encode_groups",
    "encode_labels",
    "ByScores",
    "optimum",
    "predictability_scores",
    "register_model",
    "representation_bias",
    "resolve_size",
    "subset_bias",
]
