"""aflite: find and remove spurious biases (artifacts) from labelled data sets.

The core is AFLITE (Le Bras et al., ICML 2020): repeatedly train an ensemble of simple models
on random partitions of the data and remove the instances they predict too easily.

>>> import aflite
>>> result = aflite.filter(features, labels, target_size=0.5)  # doctest: +SKIP
"""

from aflite.algorithm import (
    SCORERS,
    STOP_REASONS,
    STRATEGIES,
    ConvergenceWarning,
    FilterResult,
    FilterState,
    LinearEnsemble,
    OptimumResult,
    PhaseRecord,
    PhaseScores,
    Scorer,
    SolveReport,
    adversarial_filter,
    optimum,
    predictability_scores,
    register_scorer,
    representation_bias,
    subset_bias,
)

# ``aflite.filter`` is the name the paper's users expect; it stays out of ``__all__`` so that
# ``from aflite import *`` does not shadow the built-in ``filter``.
filter = adversarial_filter  # noqa: A001

__version__ = "0.1.0"

__all__ = [
    "SCORERS",
    "STOP_REASONS",
    "STRATEGIES",
    "ConvergenceWarning",
    "FilterResult",
    "FilterState",
    "LinearEnsemble",
    "OptimumResult",
    "PhaseRecord",
    "PhaseScores",
    "Scorer",
    "SolveReport",
    "__version__",
    "adversarial_filter",
    "optimum",
    "predictability_scores",
    "register_scorer",
    "representation_bias",
    "subset_bias",
]
