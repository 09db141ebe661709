"""Types of the public API: the strategies, balance modes and devices it accepts, and the
protocols a model or a distributed backend must follow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import torch

    from aflite.algorithm.models.choice.settings import ChoiceEnsemble
    from aflite.algorithm.models.contract import Model, ModelFamily
    from aflite.algorithm.models.linear.settings import LinearEnsemble

__all__ = [
    "ArrayLike",
    "Strategy",
    "STRATEGIES",
    "Balance",
    "DeviceLike",
    "SeedLike",
    "Size",
    "Classifier",
    "Backend",
    "ModelLike",
]

Strategy: TypeAlias = Literal["slicing", "greedy", "sampling", "single_shot"]
"""How a phase picks the rows to remove (see :func:`aflite.adversarial_filter`)."""

STRATEGIES: tuple[str, ...] = get_args(Strategy)

Balance: TypeAlias = Literal["classes"] | None
"""``"classes"``: remove from every class in proportion to its size."""

DeviceLike: TypeAlias = 'Literal["auto", "cpu", "cuda"] | str | torch.device'
"""``"auto"`` picks CUDA when it is there; any torch device string or object."""

SeedLike: TypeAlias = int | np.random.Generator | None
"""One seed for the whole run, normalised once into a generator."""

Size: TypeAlias = int | float
"""A row count (int) or a fraction of the input (float in (0, 1])."""


@runtime_checkable
class Classifier(Protocol):
    """A scikit-learn classifier: any object with ``fit(X, y)`` and ``predict(X)``; it is
    cloned for every partition."""

    def fit(self, X: Any, y: Any) -> Any: ...

    def predict(self, X: Any) -> Any: ...


class Backend(Protocol):
    """A distributed backend (e.g. :class:`aflite.distributed.RayBackend`): it wraps a model
    family's settings (None: the defaults of ``family``, the registered
    :class:`~aflite.algorithm.models.ModelFamily`) into a phase model that runs the phases
    elsewhere, under the family's declaration, and releases its workers on ``close``. A
    model with a ``store`` (the family's ``store`` signature) has the phase runner keep its
    rows there: a backend whose workers hold the features."""

    def phase_model(self, model: Any, family: ModelFamily) -> Model: ...

    def close(self) -> None: ...


ModelLike: TypeAlias = "str | LinearEnsemble | ChoiceEnsemble | Classifier | Model"
"""The model family M: a registered family's name (``"linear"``, ``"choice"``), the batched
linear ensemble, the choice-wise model (features (N, K, d)), a scikit-learn classifier or a
:class:`~aflite.algorithm.models.Model`."""
