"""AFOPT: the exact optimum ``argmin_{S subset of D, |S| >= n} R(Phi, S, M)`` by enumeration.

Intractable in general; on a few dozen rows it is a reference for the heuristics. Every
candidate subset's representation bias is estimated with the same batched linear ensemble as
the filter: subsets x partitions become the columns of one training mask, so thousands of
subsets cost one batched fit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from aflite._internal.device import make_generator, resolve_device
from aflite.algorithm.loop.inputs import check_features, encode_labels
from aflite.algorithm.loop.options import FilterOptions
from aflite.algorithm.loop.sizes import resolve_size
from aflite.algorithm.models.contract import family_of
from aflite.algorithm.models.linear.ensemble import fit_ensemble, predict_all
from aflite.algorithm.models.linear.settings import LinearEnsemble
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["OptimumResult", "optimum", "subset_bias", "MAX_OPTIMUM_ROWS", "MAX_OPTIMUM_SUBSETS"]

MAX_OPTIMUM_ROWS = 24
MAX_OPTIMUM_SUBSETS = 200_000
_CHUNK_COLUMNS = 65_536


@dataclass
class OptimumResult:
    """The subset of at least ``target_size`` rows with the lowest estimated bias."""

    subset: np.ndarray
    bias: float
    n_evaluated: int


def _n_candidates(n_rows: int, target: int) -> int:
    return sum(math.comb(n_rows, s) for s in range(target, n_rows + 1))


def subset_bias(
    features: Any,
    labels: Any,
    subsets: np.ndarray,
    *,
    n_partitions: int = FilterOptions.n_partitions,
    train_size: int,
    model: Any = FilterOptions.model,
    seed: Any = 0,
    device: str | torch.device = "auto",
) -> np.ndarray:
    """Representation-bias estimate of each subset (rows of a (S, N) boolean array).

    The estimate for subset s is the mean, over its rows that were held out at least once, of
    the fraction of correct held-out predictions across ``n_partitions`` random splits of s.
    Standardisation uses the statistics of all N rows, so estimates are comparable.
    """
    x = check_features(features)
    y, classes = encode_labels(labels, x.shape[0])
    # the logistic family only (its batched ensemble): the family whose settings it is
    logistic = family_of(LinearEnsemble())
    if isinstance(model, str) and family_of(model) is logistic:
        model = LinearEnsemble()
    if not isinstance(model, LinearEnsemble):
        raise ValueError(f"subset_bias and optimum support the model family {logistic.name} only")
    mdl = model
    subsets = np.asarray(subsets, dtype=bool)
    if subsets.ndim != 2 or subsets.shape[1] != x.shape[0]:
        raise ValueError(f"subsets must be a (S, {x.shape[0]}) boolean array")
    sizes = subsets.sum(axis=1)
    if (sizes <= train_size).any():
        raise ValueError(f"every subset must have more than train_size ({train_size}) rows")
    dev = resolve_device(device)
    gen = make_generator(seed, dev)
    store = FeatureStore(np.asarray(x), dev)
    yt = torch.as_tensor(y, device=dev)
    n = x.shape[0]
    per_chunk = max(1, _CHUNK_COLUMNS // n_partitions)
    out = np.empty(len(subsets))
    for start in range(0, len(subsets), per_chunk):
        block = torch.as_tensor(subsets[start : start + per_chunk], device=dev)  # (S, N)
        member = block.T.repeat_interleave(n_partitions, dim=1)  # (N, S*m)
        keys = torch.rand(member.shape, generator=gen, device=dev)
        keys = torch.where(member, keys, torch.full_like(keys, 2.0))
        idx = torch.topk(keys, train_size, dim=0, largest=False, sorted=False).indices
        train = torch.zeros(member.shape, dtype=torch.float32, device=dev)
        train.scatter_(0, idx, 1.0)
        ensemble, _ = fit_ensemble(store, yt, train, len(classes), mdl)
        pred = predict_all(store, ensemble)
        heldout = member.float() - train
        correct = (pred == yt[:, None]).float() * heldout
        s = block.shape[0]
        c = correct.view(n, s, n_partitions).sum(dim=2)
        h = heldout.view(n, s, n_partitions).sum(dim=2)
        scored = h > 0
        p = torch.where(scored, c / h.clamp_min(1), torch.zeros_like(c))
        bias = p.sum(dim=0) / scored.sum(dim=0).clamp_min(1)
        out[start : start + s] = bias.cpu().numpy()
    return out


def optimum(
    features: Any,
    labels: Any,
    *,
    target_size: int | float,
    n_partitions: int = FilterOptions.n_partitions,
    train_size: int,
    model: Any = FilterOptions.model,
    seed: Any = 0,
    device: str | torch.device = "auto",
    max_subsets: int = MAX_OPTIMUM_SUBSETS,
) -> OptimumResult:
    """Exact AFOPT by enumerating every subset of at least ``target_size`` rows.

    Limited to ``MAX_OPTIMUM_ROWS`` (24) rows and ``max_subsets`` candidate subsets; larger
    problems raise ValueError. ``train_size`` is an absolute row count smaller than
    ``target_size``. The minimum of noisy estimates is optimistic: raise ``n_partitions`` to
    tighten it.

    Examples
    --------
    >>> import numpy as np, aflite
    >>> x = np.arange(12.0).reshape(-1, 1); y = np.array([0, 1] * 6)
    >>> res = aflite.optimum(x, y, target_size=10, train_size=4, n_partitions=16)
    >>> len(res.subset) >= 10
    True
    """
    x = check_features(features)
    encode_labels(labels, x.shape[0])
    n_rows = x.shape[0]
    if n_rows > MAX_OPTIMUM_ROWS:
        raise ValueError(
            f"optimum enumerates subsets and is limited to {MAX_OPTIMUM_ROWS} rows, "
            f"got {n_rows}; use aflite.filter for real data"
        )
    n = resolve_size(target_size, n_rows, "target_size")
    if n > n_rows:
        raise ValueError(f"target_size ({n}) exceeds the number of rows ({n_rows})")
    if isinstance(train_size, bool) or not isinstance(train_size, (int, np.integer)):
        raise ValueError(f"train_size must be an int row count for optimum, got {train_size!r}")
    if not 1 <= train_size < n:
        raise ValueError(f"train_size ({train_size}) must be in [1, target_size={n})")
    total = _n_candidates(n_rows, n)
    if total > max_subsets:
        raise ValueError(
            f"{total} candidate subsets of >= {n} of {n_rows} rows exceed max_subsets "
            f"({max_subsets}); raise target_size or max_subsets"
        )
    masks = np.zeros((total, n_rows), dtype=bool)
    i = 0
    for size in range(n, n_rows + 1):
        for combo in itertools.combinations(range(n_rows), size):
            masks[i, list(combo)] = True
            i += 1
    bias = subset_bias(
        x,
        labels,
        masks,
        n_partitions=n_partitions,
        train_size=int(train_size),
        model=model,
        seed=seed,
        device=device,
    )
    best = int(np.argmin(bias))
    return OptimumResult(
        subset=np.flatnonzero(masks[best]), bias=float(bias[best]), n_evaluated=total
    )
