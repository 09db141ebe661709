"""The scikit-learn family (``model=`` any scikit-learn classifier instance): the estimator
cloned and fitted once per partition on the caller's features as given (:mod:`.model`)."""

from __future__ import annotations

from typing import Any

from aflite._internal.lazy import lazy_exports
from aflite.algorithm.models.contract import Model, register_model

__all__ = ["SklearnModel", "check_estimator"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SklearnModel": "aflite.algorithm.models.sklearn.model",
        "check_estimator": "aflite.algorithm.models.sklearn.model",
    },
)


def _is_estimator(model: object) -> bool:
    # a class counts too, so that check_estimator can say to pass an instance
    return hasattr(model, "fit") or isinstance(model, type)


@register_model(
    "sklearn",
    description="any scikit-learn classifier instance, cloned per partition",
    accepts=_is_estimator,
    needs_instance=True,
    raw_features=True,  # fitted on the caller's features, not the standardised ones
)
def sklearn(estimator: Any) -> Model:
    from aflite.algorithm.models.sklearn.model import SklearnModel

    return SklearnModel(estimator)
