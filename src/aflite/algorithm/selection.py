"""Which rows a phase removes: the strategies of Le Bras et al. (greedy, slicing, slice
sampling, single shot), optional class-balanced slices, and the threshold on integer counts."""

from __future__ import annotations

import math

import numpy as np
import torch

from aflite.algorithm._validation import threshold_fraction
from aflite.types import STRATEGIES as _STRATEGIES

__all__ = ["STRATEGIES", "BALANCE", "class_quotas", "select_slice"]

STRATEGIES = _STRATEGIES  # the values of aflite.types.Strategy
BALANCE = (None, "classes")


def class_quotas(counts: np.ndarray, k: int) -> np.ndarray:
    """Split k over classes in proportion to their sizes (largest remainders)."""
    exact = k * counts / max(1, counts.sum())
    quota = np.floor(exact).astype(np.int64)
    rest = k - int(quota.sum())
    if rest > 0:
        order = np.argsort(-(exact - quota), kind="stable")
        quota[order[:rest]] += 1
    return np.minimum(quota, counts)


def select_slice(
    correct: np.ndarray,
    heldout: np.ndarray,
    labels: np.ndarray,
    *,
    k: int,
    tau: float,
    strategy: str,
    balance: str | None,
    generator: torch.Generator,
    device: torch.device,
    protected: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Positions (into the current rows) to remove, most predictable first; their scores; and
    how many rows were eligible.

    Eligible means held out at least once and ``correct / heldout >= tau``, decided exactly on
    the integer counts. Ties between equal scores are broken at random, not by row order.
    Rows where ``protected`` (a boolean mask over the current rows) is True are never eligible.
    """
    n = len(correct)
    scored = heldout > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(scored, correct / np.maximum(heldout, 1), np.nan)
    num, den = threshold_fraction(tau)
    passes = scored & (correct.astype(np.int64) * den >= num * heldout.astype(np.int64))
    eligible = scored if strategy == "single_shot" else passes
    if protected is not None:
        eligible = eligible & ~np.asarray(protected, dtype=bool)
    tiebreak = torch.rand(n, generator=generator, device=device, dtype=torch.float64).cpu().numpy()
    if strategy == "sampling":
        # Gumbel top-k over log-scores = sampling without replacement proportional to score
        gumbel = -np.log(-np.log(np.clip(tiebreak, 1e-300, 1 - 1e-16)))
        with np.errstate(divide="ignore"):
            key = np.log(np.maximum(np.nan_to_num(scores), 1e-300)) + gumbel
    else:
        key = np.nan_to_num(scores) + tiebreak * 1e-12
    key = np.where(eligible, key, -math.inf)
    n_eligible = int(eligible.sum())
    if balance == "classes":
        counts = np.bincount(labels, minlength=int(labels.max()) + 1)
        quota = class_quotas(counts, k)
        picks = []
        for c, q in enumerate(quota):
            in_c = np.flatnonzero((labels == c) & eligible)
            if q and len(in_c):
                picks.append(in_c[np.argsort(-key[in_c], kind="stable")[:q]])
        picked = np.concatenate(picks) if picks else np.zeros(0, dtype=np.int64)
        picked = picked[np.argsort(-key[picked], kind="stable")]
    else:
        take = min(k, n_eligible)
        picked = np.argsort(-key, kind="stable")[:take]
    return picked.astype(np.int64), scores[picked], n_eligible
