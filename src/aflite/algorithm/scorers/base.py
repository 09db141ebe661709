"""The Scorer protocol: what one phase of AFLITE asks of a model family.

Given the stored rows of the current set and an (N, P) training mask, a scorer fits one model
per partition and returns, per stored row, how many of its held-out predictions were correct
and how often it was held out. New model families are one file: implement ``Scorer`` and
register a factory with :func:`register_scorer`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from aflite.algorithm.storage import FeatureStore

__all__ = ["PhaseCounts", "Scorer", "SCORERS", "register_scorer", "resolve_scorer"]


@dataclass
class PhaseCounts:
    """Per stored row: correct held-out predictions and times held out; solver details."""

    correct: torch.Tensor
    heldout: torch.Tensor
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Scorer(Protocol):
    """One phase's models. ``attach`` is called once and again after the store is compacted.

    Optional: ``make_store(x, device, *, chunk_rows, in_place)`` builds the phase runner's
    :class:`FeatureStore` for a scorer with its own row layout (the choice-wise scorer keeps
    an item's K choices in one row), and ``chance(rows, labels)`` gives the chance level that
    ``min_bias`` is measured against (default: the majority-class rate).
    """

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        ...

    def score(self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor) -> PhaseCounts:
        """``train``/``heldout``: (N_store, P) 0/1 float masks; ``current``: (N_store,) 0/1
        mask of the rows in the current set."""
        ...

    def describe(self) -> str:
        ...


SCORERS: dict[str, Callable[..., Scorer]] = {}


def register_scorer(name: str) -> Callable[[Callable[..., Scorer]], Callable[..., Scorer]]:
    """Register a factory ``factory(model) -> Scorer`` under ``name``."""

    def deco(factory: Callable[..., Scorer]) -> Callable[..., Scorer]:
        SCORERS[name] = factory
        return factory

    return deco


def resolve_scorer(model: Any, backend: Any = None) -> Scorer:
    """``"linear"`` or a :class:`~aflite.LinearEnsemble` -> the batched linear scorer (on a
    distributed ``backend`` when given); a scikit-learn classifier -> the per-partition loop;
    a :class:`Scorer` as is."""
    from aflite.algorithm.solvers import LinearEnsemble

    if isinstance(model, str):
        if model not in ("linear",):
            raise ValueError(
                f"unknown model {model!r}: use 'linear', a LinearEnsemble, "
                "or a scikit-learn classifier instance"
            )
        model = LinearEnsemble()
    if isinstance(model, LinearEnsemble):
        if backend is not None:
            return backend.scorer(model)
        return SCORERS["linear"](model)
    if backend is not None:
        raise ValueError("a distributed backend supports the linear model family only")
    if isinstance(model, Scorer) and not hasattr(model, "fit"):
        return model
    return SCORERS["sklearn"](model)
