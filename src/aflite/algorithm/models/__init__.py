"""Model families for a phase: the contract every family declares itself by and the registry
of families (:mod:`.contract`: :class:`Model`, :class:`ModelFamily`, :data:`MODELS`), what the
families of multiple-choice items share (:mod:`.items`), and one sub-package per built-in
family, its model and solvers together: ``ridge`` (exact least squares, the default of the
command line, also named ``auto``; ``choice-ridge`` for items), ``linear`` (batched logistic
regression, Algorithm 1's), ``choice`` (the choice-wise logistic model of items) and
``sklearn`` (any scikit-learn classifier). The Ray backend (:mod:`aflite.distributed`) runs
the families that declare ``distributed`` over a cluster.

Importing this package loads no torch: the families register light factories.
"""

from aflite._internal.lazy import lazy_exports
from aflite.algorithm.models.contract import (
    MODELS,
    UNREGISTERED,
    BlockModel,
    Model,
    ModelFamily,
    PhaseCounts,
    asks_for_items,
    check_model_name,
    family_of,
    phase_model,
    register_model,
    resolve_model,
)

__all__ = [
    "MODELS",
    "UNREGISTERED",
    "BlockModel",
    "LinearModel",
    "Model",
    "ModelFamily",
    "PhaseCounts",
    "SklearnModel",
    "asks_for_items",
    "check_estimator",
    "check_model_name",
    "family_of",
    "phase_model",
    "register_model",
    "resolve_model",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LinearModel": "aflite.algorithm.models.linear.model",
        "SklearnModel": "aflite.algorithm.models.sklearn.model",
        "check_estimator": "aflite.algorithm.models.sklearn.model",
    },
)
