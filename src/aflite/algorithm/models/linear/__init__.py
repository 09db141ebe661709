"""The logistic family (``model="linear"``, the default of :func:`aflite.filter`): every
partition's L2 multinomial logistic regression fitted at once and run to convergence.

Its settings are :class:`~.settings.LinearEnsemble`; its model (:mod:`.model`) fits the
classifiers through :mod:`.ensemble`, which takes the primal solver (:mod:`.primal`, with its
passes over a block plan in :mod:`.block_pass`) or, for training parts much smaller than the
features, the span solver (:mod:`.span`). On multiple-choice items the choice-wise model
(``"choice"``) runs in its place, with its C, tol, max_iter and history.
"""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports
from aflite.algorithm.models.contract import Model, register_model
from aflite.algorithm.models.linear.settings import LinearEnsemble

__all__ = ["LinearEnsemble", "LinearModel"]

__getattr__, __dir__ = lazy_exports(
    __name__, {"LinearModel": "aflite.algorithm.models.linear.model"}
)


def _is_ensemble(model: object) -> bool:
    return isinstance(model, LinearEnsemble)


@register_model(
    "linear",
    description="batched L2 logistic regression, all partitions at once (aflite.filter's "
    "and the paper preset's)",
    accepts=_is_ensemble,
    shown="logistic regression",
    distributed=True,
    blocks=True,
    items="choice",
)
def linear(settings: LinearEnsemble | None) -> Model:
    from aflite.algorithm.models.linear.model import LinearModel

    return LinearModel(settings)
