"""The model-family contract: what one phase of AFLITE asks of a model (:class:`Model`), what a
family declares about itself (:class:`ModelFamily`), and the registry of families
(:data:`MODELS`).

Given the stored rows of the current set and the phase's partitions, a model fits one
classifier per partition and returns, per stored row, how many of its held-out predictions
were correct and how often it was held out. A family is one sub-package of
:mod:`aflite.algorithm.models` that registers a factory ``factory(settings_or_None) -> Model``
with :func:`register_model`, declaring in that one call everything the filter needs to know
about it (the fields of :class:`ModelFamily`, each with its default): the filter reads those
fields, never the model's attributes or the family's name. ``aflite.filter(...,
model="name")`` and ``aflite filter --model name`` then find it.

Registering imports no torch: a factory imports its model when it is called, so the names,
the ``--model`` help and the check of a name read the registry at no cost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from aflite._internal.registry import Entry, Registry
from aflite.errors import DataError

if TYPE_CHECKING:
    import numpy as np
    import torch

    from aflite.algorithm.numerics.blocks import BlockDesign
    from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "MODELS",
    "UNREGISTERED",
    "BlockModel",
    "Model",
    "ModelFamily",
    "PhaseCounts",
    "asks_for_items",
    "check_model_name",
    "family_of",
    "phase_model",
    "register_model",
    "resolve_model",
]


@dataclass
class PhaseCounts:
    """Per stored row: correct held-out predictions and times held out; how the fits ended
    (a :class:`~aflite.algorithm.numerics.report.SolveReport` as a dict); and the tolerance
    the fits were run to (None: fitted exactly), which the warning for classifiers that did
    not converge names."""

    correct: torch.Tensor
    heldout: torch.Tensor
    info: dict[str, Any] = field(default_factory=dict)
    tol: float | None = None


@runtime_checkable
class Model(Protocol):
    """One phase's models. ``attach`` is called once and again after the store is compacted;
    ``raw`` is the features as given, ``store`` the rows the family's store keeps."""

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


class BlockModel(Model, Protocol):
    """The model of a family that declares ``blocks``: it also takes a phase's block design
    as is (:func:`aflite.algorithm.loop.partitions.block_design`), says how large the
    blocks should be once attached (it knows the stored rows then), and whether it keeps
    something per block from phase to phase (the exact family's sums): its phases then keep
    the blocks the first one dealt, and draw only which parts each block trains
    (:func:`aflite.algorithm.loop.partitions.kept_block_design`)."""

    def block_rows(self, train_size: int, n_partitions: int) -> int: ...

    def keeps_blocks(self) -> bool: ...

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        """``positions``: the store positions of the rows the design dealt (the current
        set); ``current`` as for :meth:`Model.score`."""
        ...


# store(x, device, *, chunk_rows, in_place, sparse_rows) -> the phase runner's FeatureStore
StoreMaker = Callable[..., "FeatureStore"]
# chance(store, rows, labels) -> the chance level of input rows ``rows`` with ``labels``
Chance = Callable[[Any, "np.ndarray", "np.ndarray"], float]


@dataclass(frozen=True)
class ModelFamily(Entry):
    """A registered model family: ``target`` is ``factory(settings) -> Model``, called with
    None when the family is chosen by name; the other fields declare what the filter needs
    to know about the family, each with the default a plain family has.

    ``shown``: how messages name the family ("logistic regression"; default its name).
    ``accepts(obj)``: whether an object passed as ``model=`` belongs to the family (its
    settings, e.g. a ``LinearEnsemble``). ``needs_instance``: the family cannot be chosen by
    name alone (a scikit-learn classifier must be given). ``distributed``: a distributed
    backend can run it.

    ``exact``: its fits are closed-form, the same on any machine to float64 rounding (the
    partitions are then cheap, and the phase runner keeps raw sparse rows for any design).
    ``blocks``: its models are of the :class:`BlockModel` kind, which take a block design as is
    (else they get its masks). ``raw_features``: its models read the features as given
    (``attach``'s ``raw``), so the caller's array is never standardised in place.
    ``n_partitions``: m when ``n_partitions="auto"``, or ``n_partitions(n_rows, dim, train) -> m``
    (:meth:`partitions_for`).

    ``fits``: what it fits, ``"rows"`` ((N, d) features and class labels) or ``"items"``
    (multiple-choice items, (N, K, d) features and answer positions). ``items``: the name of
    the family that fits multiple-choice items when this one is asked for (its own name for a
    family of items; None: it has no such variant).

    ``store(x, device, *, chunk_rows, in_place, sparse_rows)``: builds the rows a phase
    reads (None: the standardised rows, :class:`~aflite.algorithm.numerics.store.FeatureStore`).
    ``chance(store, rows, labels)``: the score of a model that learned nothing, on input
    rows ``rows`` with ``labels``, from what the family's ``store`` holds (None: their
    majority-class rate).
    ``sharded(settings) -> Model``: the model that runs its phases over shards of rows held
    elsewhere (a distributed backend's store; None: its own model does, through
    :func:`~aflite.algorithm.numerics.shard_set.shards_of`).
    """

    accepts: Callable[[Any], bool] | None = None
    shown: str = ""  # how messages name the family (default: its name)
    needs_instance: bool = False
    distributed: bool = False
    exact: bool = False
    blocks: bool = False
    raw_features: bool = False
    n_partitions: int | Callable[[int], int] = 64
    fits: Literal["rows", "items"] = "rows"
    items: str | None = None
    store: StoreMaker | None = None
    chance: Chance | None = None
    sharded: Callable[[Any], Model] | None = None

    def title(self) -> str:
        """How a message names the family: ``shown``, else its registered name."""
        return self.shown or self.name

    def partitions_for(self, n_rows: int, dim: int | None = None, train: int | None = None) -> int:
        """m for ``n_partitions="auto"`` on an input of ``n_rows`` rows of ``dim`` features,
        parts of ``train`` rows."""
        m = self.n_partitions
        return int(m(n_rows, dim, train) if callable(m) else m)


MODELS: Registry[ModelFamily] = Registry("model", what="model family", entry=ModelFamily)
register_model = MODELS.register

# The family of a model that no registered family made (one passed as ``model=`` as is): the
# contract's defaults, so it gets masks, the standardised rows and the majority-class chance
# level.
UNREGISTERED = ModelFamily(name="", target=None, description="a model given as is")


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


def family_of(model: Any) -> ModelFamily | None:
    """The family ``model=`` asks for: a registered name (checked), or the family that accepts
    an object (its settings, a scikit-learn classifier); None for a :class:`Model` given as
    is."""
    if isinstance(model, str):
        return check_model_name(model)
    # later registrations first, so a plug-in can claim objects a built-in would take
    claims = [f for f in reversed(list(MODELS.values())) if f.accepts and f.accepts(model)]
    if not claims and isinstance(model, Model):
        return None  # a model no family claims runs as it is
    if not claims:
        raise ValueError(
            f"model must be a registered model family ({', '.join(MODELS)}), an object "
            f"one of them accepts, or a Model; got {model!r}"
        )
    return claims[0]


def asks_for_items(model: Any) -> bool:
    """Whether ``model=`` asks for a family that fits multiple-choice items only
    (``"choice"``, a ``ChoiceEnsemble``); False for a name or an object no family has (its
    own check says so)."""
    try:
        family = family_of(model)
    except (DataError, ValueError):
        return False
    return family is not None and family.fits == "items"


def phase_model(
    model: Any,
    *,
    items: bool = False,
    backend: Any = None,
) -> tuple[ModelFamily, Model]:
    """The family that runs a phase for ``model=`` and its model: a registered family's name
    (``"linear"``), an object a family accepts (a :class:`~aflite.LinearEnsemble`, a
    scikit-learn classifier), or a :class:`Model` as is (then :data:`UNREGISTERED`).

    On multiple-choice ``items`` the family's items variant runs. With a distributed
    ``backend`` the family must be one it runs, and the backend's model runs it under the
    family's own declaration (its blocks, their size, its m), on the rows the backend's
    store (the model's ``store``, a :data:`StoreMaker`) holds where its workers are."""
    family = family_of(model)
    if family is None:
        if backend is not None:
            raise ValueError("a distributed backend runs registered model families only")
        if items:
            raise ValueError(_no_items(model))
        return UNREGISTERED, model
    settings = None if isinstance(model, str) else model
    if items:
        if family.items is None:
            raise ValueError(_no_items(model, family))
        family = MODELS.lookup(family.items)
    if backend is not None:
        if not family.distributed:
            ok = ", ".join(n for n, f in MODELS.items() if f.distributed)
            raise ValueError(f"a distributed backend runs the model families {ok} only")
        # the family's settings (None: its defaults)
        remote = backend.phase_model(settings, family)
        store = getattr(remote, "store", None)
        return (family if store is None else dataclasses.replace(family, store=store)), remote
    return family, family.target(settings)


def resolve_model(model: Any, backend: Any = None) -> Model:
    """The phase model for ``model=`` on labelled rows (see :func:`phase_model`)."""
    return phase_model(model, backend=backend)[1]


def _no_items(model: Any, family: ModelFamily | None = None) -> str:
    """The one line for multiple-choice items given to a family without an items variant."""
    if isinstance(model, str):
        shown = f"model family '{model}'"
    elif family is not None:
        shown = f"{model!r} (model family '{family.name}')"
    else:
        shown = f"{model!r} (a model given as is)"
    variants = ", ".join(n for n, f in MODELS.items() if f.items is not None)
    return (
        f"{shown} fits no multiple-choice items (features of shape (n_items, n_choices, "
        f"n_features)); the model families that do: {variants}"
    )
