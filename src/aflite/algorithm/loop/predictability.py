"""Predictability scores: one phase of random partitions, fits and held-out predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from aflite._internal.device import make_generator, resolve_device
from aflite._internal.threads import resolve_threads
from aflite.algorithm.loop.inputs import (
    canonical_ranks,
    check_features,
    encode_groups,
    encode_labels,
)
from aflite.algorithm.loop.options import FilterOptions
from aflite.algorithm.loop.phases import PhaseRunner
from aflite.algorithm.loop.sizes import resolve_size
from aflite.algorithm.models.contract import Model, ModelFamily, asks_for_items, phase_model
from aflite.algorithm.numerics.item_store import check_choices
from aflite.types import ArrayLike, Backend, DeviceLike, ModelLike, SeedLike, Size

__all__ = [
    "PhaseScores",
    "phase_model_for",
    "predictability_scores",
    "prepare_runner",
    "representation_bias",
    "takes_items",
]


@dataclass
class PhaseScores:
    """Result of one phase over a set of rows.

    Attributes
    ----------
    scores:
        (N,) fraction of out-of-sample predictions that were correct; NaN for a row that no
        partition held out.
    n_heldout, n_correct:
        (N,) how often each row was held out, and how often it was then predicted correctly.
    train_mask:
        (N, P) bool, True where the row trained that partition's classifier.
    info:
        How the fits ended (solver, iterations, worst relative gradient norm).
    """

    scores: np.ndarray
    n_heldout: np.ndarray
    n_correct: np.ndarray
    train_mask: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def representation_bias(self) -> float:
        """Mean predictability over the scored rows: the estimate of R(Phi, S, M)."""
        valid = ~np.isnan(self.scores)
        return float(self.scores[valid].mean()) if valid.any() else float("nan")

    def __repr__(self) -> str:
        return (
            f"PhaseScores(n={len(self.scores)}, partitions={self.train_mask.shape[1]}, "
            f"representation_bias={self.representation_bias:.4f})"
        )


def prepare_runner(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    n_partitions: int | str,
    model: ModelLike,
    groups: ArrayLike | None,
    seed: SeedLike,
    device: DeviceLike,
    train_size: Size,
    backend: Backend | None = None,
    copy: bool = True,
    partitions: str,
    threads: int | None = None,
    ids: ArrayLike | None = None,
) -> tuple[PhaseRunner, np.ndarray, int]:
    """Check the inputs and set up a :class:`PhaseRunner`; returns it, the classes and t."""
    if takes_items(features, model):  # (N, K, d): answers are choice positions
        x, y, classes = check_choices(features, labels, in_shards=True)
    else:
        x = check_features(features)
        y, classes = encode_labels(labels, x.shape[0])
    g = encode_groups(groups, x.shape[0])
    t = resolve_size(train_size, x.shape[0], "train_size")
    if t >= x.shape[0]:
        raise ValueError(
            f"train_size ({t}) must be smaller than the number of rows ({x.shape[0]}): "
            "some rows must be held out"
        )
    largest = 0 if g is None else int(np.bincount(g).max())
    if partitions == "uniform" and t < largest:
        # a uniform part takes whole groups, t rows give or take one group: below the
        # largest group's size a part could be empty, and an empty part predicts nothing
        raise ValueError(
            f"train_size ({t}) must be at least the largest group ({largest} rows): a "
            "training part takes whole groups"
        )
    if backend is not None and partitions != "blocks":
        # a backend's workers are sent each phase's blocks, never rows x partitions masks
        raise ValueError(
            f"a distributed backend runs block partitions only (partitions='blocks'), "
            f"got {partitions!r}"
        )
    keys = canonical_ranks(ids, x.shape[0])
    threads = resolve_threads(threads)
    family, phase, n_partitions = phase_model_for(model, n_partitions, t, x.shape, backend)
    dev = resolve_device(device)
    runner = PhaseRunner(
        x,
        y,
        len(classes),
        model=phase,
        family=family,
        n_partitions=n_partitions,
        train_size=t,
        groups=g,
        device=dev,
        generator=make_generator(seed, torch.device("cpu")),  # drawn on the CPU, see PhaseRunner
        in_place=not copy,
        partitions=partitions,
        threads=threads,
        keys=keys,
    )
    return runner, classes, t


def takes_items(features: ArrayLike, model: ModelLike) -> bool:
    """Whether a run is on multiple-choice items: (N, K, d) features, or a family of items
    asked for (whose check then names the shape it needs)."""
    return np.ndim(features) == 3 or asks_for_items(model)


def phase_model_for(
    model: ModelLike,
    n_partitions: int | str,
    train_size: int,
    shape: tuple[int, ...],
    backend: Backend | None = None,
) -> tuple[ModelFamily, Model, int]:
    """The family that runs a phase for ``model`` on features of ``shape`` (its items variant
    on (N, K, d) features), its model, and m for ``n_partitions`` (``"auto"``: the
    family's)."""
    family, phase = phase_model(model, items=len(shape) == 3, backend=backend)
    m = (
        family.partitions_for(shape[0], shape[-1], train_size)
        if n_partitions == "auto"
        else n_partitions
    )
    return family, phase, int(m)


def predictability_scores(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    n_partitions: int | str = FilterOptions.n_partitions,
    train_size: Size = FilterOptions.train_size,
    model: ModelLike = FilterOptions.model,
    groups: ArrayLike | None = None,
    seed: SeedLike = 0,
    device: DeviceLike = "auto",
    copy: bool = True,
    partitions: str = FilterOptions.partitions,
    threads: int | None = None,
    ids: ArrayLike | None = None,
) -> PhaseScores:
    """Score every row once: the fraction of its held-out predictions that are correct.

    This is one phase of AFLITE on its own: ``n_partitions`` random splits into a training part
    of ``train_size`` rows and a held-out part, one model per split.
    ``copy=False`` lets the linear family standardise a float32 array in place.
    ``partitions``: ``"blocks"`` (default: rows dealt into blocks, each classifier trains on
    t/b whole blocks, see :func:`aflite.algorithm.loop.partitions.block_design`) or ``"uniform"``
    (independent uniform training parts, Algorithm 1's wording). ``threads``: worker threads
    (default ``AFLITE_THREADS`` or the cores this process may use); the scores do not depend
    on it. ``ids``: unique row ids; partitions are drawn by id, so the same rows in another
    order get the same scores.

    Examples
    --------
    >>> import numpy as np, aflite
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 5)); y = (x[:, 0] > 0).astype(int)
    >>> ps = aflite.predictability_scores(x, y, n_partitions=16, train_size=0.5)
    >>> ps.representation_bias > 0.9
    True
    """
    # each option checked as aflite.FilterOptions checks it; trusted from here on
    checked = FilterOptions.check_fields(
        {
            "n_partitions": n_partitions,
            "train_size": train_size,
            "model": model,
            "partitions": partitions,
        }
    )
    runner, _, _ = prepare_runner(
        features,
        labels,
        groups=groups,
        seed=seed,
        device=device,
        copy=copy,
        threads=threads,
        ids=ids,
        **checked,
    )
    out = runner.run(np.arange(runner.n_input))
    return PhaseScores(
        scores=out.scores(),
        n_heldout=out.heldout,
        n_correct=out.correct,
        train_mask=out.train,
        info=out.info,
    )


def representation_bias(features: ArrayLike, labels: ArrayLike, **kwargs: Any) -> float:
    """Estimate R(Phi, S, M): the mean predictability of the rows (see :func:`predictability_scores`)."""
    return predictability_scores(features, labels, **kwargs).representation_bias
