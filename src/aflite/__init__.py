"""aflite: find and remove spurious biases (artifacts) from labelled data sets.

The core is AFLITE (Le Bras et al., ICML 2020): repeatedly train an ensemble of simple models
on random partitions of the data and remove the instances they predict too easily.

>>> import aflite
>>> result = aflite.filter(features, labels, target_size=0.5)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aflite._internal.lazy import lazy_exports
from aflite._internal.registry import set_builtins_loader
from aflite._internal.version import VERSION
from aflite.plugins import load_builtins

__version__ = VERSION

_DATA_API = [
    "DatasetCard",
    "DatasetFilterResult",
    "DatasetScores",
    "Verdict",
    "audit",
    "featurize",
    "filter_dataset",
    "score_dataset",
    "verify",
]

__all__ = [
    "DatasetCard",
    "DatasetFilterResult",
    "DatasetScores",
    "Verdict",
    "audit",
    "featurize",
    "filter_dataset",
    "score_dataset",
    "verify",
    "filter",
    "MODELS",
    "PRESETS",
    "STOP_REASONS",
    "STRATEGIES",
    "ByScorer",
    "ByScores",
    "ChoiceEnsemble",
    "ConvergenceWarning",
    "FilterOptions",
    "FilterResult",
    "FilterState",
    "LinearEnsemble",
    "OptimumResult",
    "PhaseRecord",
    "Model",
    "PhaseScores",
    "RidgeEnsemble",
    "ShardedFeatures",
    "SolveReport",
    "__version__",
    "adversarial_filter",
    "optimum",
    "predictability_scores",
    "register_model",
    "representation_bias",
    "subset_bias",
]

# The algorithm needs torch; importing it only on first use keeps ``import aflite`` and the
# command line's start-up fast. ``aflite.filter`` is the name the paper's users expect (a
# star import of aflite shadows the built-in filter, as it says it would).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        name: "aflite.algorithm"
        for name in __all__
        if name not in ("__version__", "ByScorer", *_DATA_API)
    }
    | {name: "aflite.api" for name in _DATA_API}
    | {"ByScorer": "aflite.scoring.filter_by"}
    | {"filter": "aflite.algorithm.loop.filtering:filter"},
)


# every registry imports its built-ins (listed in aflite.plugins) on its first read
set_builtins_loader(load_builtins)

if TYPE_CHECKING:
    from aflite.algorithm import (
        MODELS,
        PRESETS,
        STOP_REASONS,
        STRATEGIES,
        ByScores,
        ChoiceEnsemble,
        ConvergenceWarning,
        FilterOptions,
        FilterResult,
        FilterState,
        LinearEnsemble,
        Model,
        OptimumResult,
        PhaseRecord,
        PhaseScores,
        RidgeEnsemble,
        ShardedFeatures,
        SolveReport,
        adversarial_filter,
        optimum,
        predictability_scores,
        register_model,
        representation_bias,
        subset_bias,
    )
    from aflite.algorithm.loop.filtering import filter  # noqa: A004
    from aflite.api import (
        DatasetCard,
        DatasetFilterResult,
        DatasetScores,
        Verdict,
        audit,
        featurize,
        filter_dataset,
        score_dataset,
        verify,
    )
    from aflite.scoring.filter_by import ByScorer
