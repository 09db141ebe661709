"""The scikit-learn family (``model=`` a scikit-learn classifier): its model (:mod:`.model`)."""

from aflite._internal.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {name: "aflite.algorithm.models.sklearn.model" for name in ("SklearnModel", "check_estimator")},
)
