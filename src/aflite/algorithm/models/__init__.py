"""Model families for a phase, behind one protocol (:class:`Model`) and one registry
(:data:`MODELS`): the batched linear ensemble (default), any scikit-learn classifier, and
(in :mod:`aflite.distributed`) the linear ensemble spread over a Ray cluster."""

from aflite.algorithm.models.base import (
    MODELS,
    Model,
    ModelFamily,
    PhaseCounts,
    check_model_name,
    register_model,
    resolve_model,
)
from aflite.algorithm.models.linear.model import LinearModel
from aflite.algorithm.models.sklearn.model import SklearnModel, check_estimator

__all__ = [
    "MODELS",
    "LinearModel",
    "Model",
    "ModelFamily",
    "PhaseCounts",
    "SklearnModel",
    "check_estimator",
    "check_model_name",
    "register_model",
    "resolve_model",
]
