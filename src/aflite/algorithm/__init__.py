"""The adversarial filter: batched model ensembles, predictability scores, AFLITE and AFOPT.

Pure array code: nothing here reads or writes data files. The names below are imported on
first use: the options (:class:`FilterOptions`, :data:`PRESETS`) need no torch, so a
command's config and ``--help`` load none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aflite._internal.lazy import lazy_exports

_MODULES = {
    "aflite.algorithm._validation": (
        "AUTO_PARTITIONS",
        "SizeError",
        "check_features",
        "check_train_covers_classes",
        "encode_groups",
        "encode_labels",
        "resolve_size",
    ),
    "aflite.algorithm.by_scores": ("ByScores",),
    "aflite.algorithm.filtering": ("ConvergenceWarning", "FilterState", "adversarial_filter"),
    "aflite.algorithm.models": ("MODELS", "Model", "PhaseCounts", "register_model"),
    "aflite.algorithm.afopt": ("OptimumResult", "optimum", "subset_bias"),
    "aflite.algorithm.options": ("PRESETS", "FilterOptions"),
    "aflite.algorithm.result": ("STOP_REASONS", "FilterResult", "PhaseRecord"),
    "aflite.algorithm.scoring": ("PhaseScores", "predictability_scores", "representation_bias"),
    "aflite.algorithm.selection": ("STRATEGIES",),
    "aflite.algorithm.solvers": ("LinearEnsemble", "SolveReport"),
    "aflite.algorithm.solvers.choice": ("ChoiceEnsemble",),
    "aflite.algorithm.solvers.ridge": ("RidgeEnsemble",),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}
__all__ = [
    "AUTO_PARTITIONS",
    "SizeError",
    "check_features",
    "check_train_covers_classes",
    "encode_groups",
    "encode_labels",
    "resolve_size",
    "ByScores",
    "ConvergenceWarning",
    "FilterState",
    "adversarial_filter",
    "MODELS",
    "Model",
    "PhaseCounts",
    "register_model",
    "OptimumResult",
    "optimum",
    "subset_bias",
    "PRESETS",
    "FilterOptions",
    "STOP_REASONS",
    "FilterResult",
    "PhaseRecord",
    "PhaseScores",
    "predictability_scores",
    "representation_bias",
    "STRATEGIES",
    "LinearEnsemble",
    "SolveReport",
    "ChoiceEnsemble",
    "RidgeEnsemble",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from aflite.algorithm._validation import (
        AUTO_PARTITIONS,
        SizeError,
        check_features,
        check_train_covers_classes,
        encode_groups,
        encode_labels,
        resolve_size,
    )
    from aflite.algorithm.afopt import OptimumResult, optimum, subset_bias
    from aflite.algorithm.by_scores import ByScores
    from aflite.algorithm.filtering import ConvergenceWarning, FilterState, adversarial_filter
    from aflite.algorithm.models import MODELS, Model, PhaseCounts, register_model
    from aflite.algorithm.options import PRESETS, FilterOptions
    from aflite.algorithm.result import STOP_REASONS, FilterResult, PhaseRecord
    from aflite.algorithm.scoring import PhaseScores, predictability_scores, representation_bias
    from aflite.algorithm.selection import STRATEGIES
    from aflite.algorithm.solvers import LinearEnsemble, SolveReport
    from aflite.algorithm.solvers.choice import ChoiceEnsemble
    from aflite.algorithm.solvers.ridge import RidgeEnsemble
