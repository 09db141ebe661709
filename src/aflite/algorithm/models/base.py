"""The Model protocol: what one phase of AFLITE asks of a model family, and the registry of
model families (:data:`MODELS`).

Given the stored rows of the current set and an (N, P) training mask, a model fits one
classifier per partition and returns, per stored row, how many of its held-out predictions
were correct and how often it was held out. A new model family is one file: implement
``Model`` and register a factory ``factory(model) -> Model`` with :func:`register_model`;
``aflite.filter(..., model="name")`` (and ``aflite filter --model name``) then finds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from aflite._internal.registry import Entry, Registry
from aflite.errors import DataError

if TYPE_CHECKING:
    import numpy as np
    import torch

    from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "MODELS",
    "Model",
    "ModelFamily",
    "PhaseCounts",
    "check_model_name",
    "family_name",
    "register_model",
    "resolve_model",
]


@dataclass
class PhaseCounts:
    """Per stored row: correct held-out predictions and times held out; solver details; and,
    where the family gives it, the sum over those predictions of the gold class's margin
    (its decision value less the best other class's): a finer view of the same predictions
    that orders rows with equal counts."""

    correct: torch.Tensor
    heldout: torch.Tensor
    info: dict[str, Any] = field(default_factory=dict)
    margin: torch.Tensor | None = None


@runtime_checkable
class Model(Protocol):
    """One phase's models. ``attach`` is called once and again after the store is compacted.

    Optional: ``make_store(x, device, *, chunk_rows, in_place)`` builds the phase runner's
    :class:`FeatureStore` for a model with its own row layout (the choice-wise model keeps
    an item's K choices in one row), and ``chance(rows, labels)`` gives the chance level that
    ``min_bias`` is measured against (default: the majority-class rate).
    """

    def attach(
        self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int
    ) -> None: ...

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        """``train``/``heldout``: (N_store, P) 0/1 float masks; ``current``: (N_store,) 0/1
        mask of the rows in the current set."""
        ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class ModelFamily(Entry):
    """A registered model family: ``target`` is ``factory(model) -> Model``, called with
    ``None`` when the family is chosen by name. ``accepts(obj)`` says whether an object
    passed as ``model=`` belongs to this family (its settings, e.g. a ``LinearEnsemble``);
    ``needs_instance``: the family cannot be chosen by name alone (a scikit-learn classifier
    must be given); ``distributed``: a distributed backend can run it."""

    accepts: Callable[[Any], bool] | None = None
    needs_instance: bool = False
    distributed: bool = False


MODELS: Registry[ModelFamily] = Registry("model", what="model family", entry=ModelFamily)
register_model = MODELS.register


def check_model_name(name: str, *, flag: str | None = None) -> ModelFamily:
    """The family registered as ``name``, usable by name (a one-line DataError otherwise)."""
    family = MODELS.lookup(name, flag=flag)
    if family.needs_instance:
        where = f"{flag}: " if flag else ""
        raise DataError(
            f"{where}model family '{name}' needs a model instance (model= in the Python API); "
            f"by name use {', '.join(n for n, f in MODELS.items() if not f.needs_instance)}"
        )
    return family


def family_name(model: Any) -> str | None:
    """The registered name of a phase model's family (``"ridge"``, ``"linear"``, ...), or
    None for a model no registered class makes."""
    for name, family in MODELS.items():
        if isinstance(family.target, type) and isinstance(model, family.target):
            return name
    return None


def resolve_model(model: Any, backend: Any = None) -> Model:
    """The phase model for ``model=``: a registered family's name (``"linear"``), an object a
    family accepts (a :class:`~aflite.LinearEnsemble`, a scikit-learn classifier), or a
    :class:`Model` as is. With a distributed ``backend``, the family must be one it runs."""
    if isinstance(model, str):
        family, given = check_model_name(model), None
    elif isinstance(model, Model) and not hasattr(model, "fit"):
        if backend is not None:
            raise ValueError("a distributed backend runs registered model families only")
        return model
    else:
        # later registrations first, so a plug-in can claim objects a built-in would take
        claims = [f for f in reversed(list(MODELS.values())) if f.accepts and f.accepts(model)]
        if not claims:
            raise ValueError(
                f"model must be a registered model family ({', '.join(MODELS)}), an object "
                f"one of them accepts, or a Model; got {model!r}"
            )
        family, given = claims[0], model
    if backend is not None:
        if not family.distributed:
            ok = ", ".join(n for n, f in MODELS.items() if f.distributed)
            raise ValueError(f"a distributed backend runs the model families {ok} only")
        return backend.phase_model(given)  # the family's settings (None: its defaults)
    return family.target(given)
