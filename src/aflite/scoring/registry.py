"""The registry of per-example scorers: the names ``--scorers`` and ``score_examples`` accept.

A scorer is a function ``scorer(ctx: ScoringContext) -> dict[str, np.ndarray]`` returning an
(N,) column for its first declared name and for any of the others that apply, registered
with :func:`register_example_scorer`. The built-in scorers are one file each in
:mod:`aflite.scoring`, listed in :mod:`aflite.plugins`. Nothing here imports torch, so
listing the names is cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aflite._internal.registry import Entry, Registry

__all__ = [
    "EXAMPLE_SCORERS",
    "ExampleScorer",
    "ScoringContext",
    "register_example_scorer",
]


@dataclass
class ScoringContext:
    """One scoring call as every scorer sees it.

    ``x`` is the (N, d) feature matrix Phi as given; ``y`` the (N,) class codes in
    ``[0, n_classes)`` (for multiple-choice items, ``x`` is (N, K, d), NaN rows for missing
    choices, and ``y`` each item's right choice position, ``n_classes`` = K); ``folds`` the (R, N) fold of every row in each of the R cross-fits
    (shared by all cross-fitted scorers, so their columns come from the same splits);
    ``partial`` an optional second (N, d') matrix of a partial input. ``cache`` holds what
    several scorers share (the recorded training dynamics, out-of-fold probabilities), so
    it is computed once per call.
    """

    x: Any
    y: np.ndarray
    n_classes: int
    folds: np.ndarray
    seed: int = 0
    device: Any = "cpu"
    partial: Any = None
    groups: np.ndarray | None = None
    options: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.y)

    def shared(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per call under ``key``; later scorers get the same value."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


@dataclass(frozen=True)
class ExampleScorer(Entry):
    """A registered scorer: its function (``target``), the columns it returns and what it
    needs. ``check(options)`` refuses bad option values before any work (``options`` holds
    the call's options over the declared defaults, and ``dynamics`` when given).
    ``filter_phase``: the scorer is one phase of the filter itself (AFLITE's predictability),
    so ``filter --by`` hands it the run's ``n_partitions`` and ``train_size`` and its scores
    are the loop's first measurement of the representation bias. ``items``: it also scores
    multiple-choice items (``ctx.x`` of shape (N, K, d), ``ctx.y`` the right choice's
    position), so ``aflite score --choices-field`` may run it."""

    columns: tuple[str, ...] = ()
    needs_partial: bool = False
    lower_is_easier: tuple[str, ...] = ()
    check: Callable[[dict[str, Any]], None] | None = None
    filter_phase: bool = False
    items: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns or (self.name,)))
        object.__setattr__(self, "lower_is_easier", tuple(self.lower_is_easier))


EXAMPLE_SCORERS: Registry[ExampleScorer] = Registry("scorer", entry=ExampleScorer)
register_example_scorer = EXAMPLE_SCORERS.register
"""Register ``scorer(ctx) -> {column: (N,) array}`` under a name.

``columns`` names what it returns (default: ``(name,)``); ``needs_partial`` makes a call
without a partial-input matrix an error before anything is computed; ``lower_is_easier``
names the columns where a low value marks an easy row (EL2N, forgetting, variability; the
others count higher as easier), which ``aflite filter --by`` reads; ``options`` are the
keyword options the scorer reads from ``ctx.options``, with their defaults (a call may pass
them to :func:`~aflite.scoring.score_examples`); ``check(options)`` refuses bad values;
``items`` lets it score multiple-choice items."""
