"""How settled a phase's decisions are.

A row's score is the share of its held-out predictions that were right: an estimate, with a
standard error, of the chance that a model trained on t other rows predicts it. Two runs
with other seeds draw other partitions, so a row whose score sits near the phase's cut may
land on the other side. This module measures that: each row's standard error, the phase's
cut, and the number of rows another seed is expected to put on the other side of it (the
rows *in contest*). How far two seeds' removed sets agree over a whole run is measured, not
modelled here: ``adversarial_filter(check_seed=...)`` runs the second seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr

__all__ = ["contested", "seed_check", "standard_errors"]


def standard_errors(correct: np.ndarray, heldout: np.ndarray) -> np.ndarray:
    """Binomial standard error of each score, ``sqrt(p (1 - p) / h)``, with p shrunk towards
    1/2 by half a prediction on either side (a score of 0 or 1 from h predictions is not
    certain); NaN where a row was never held out."""
    h = np.asarray(heldout, dtype=np.float64)
    p = (np.asarray(correct, dtype=np.float64) + 0.5) / (h + 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(h > 0, np.sqrt(p * (1.0 - p) / np.maximum(h, 1.0)), np.nan)


def contested(scores: np.ndarray, se: np.ndarray, cut: float) -> float:
    """Rows another seed is expected to put on the other side of ``cut``: each row's chance
    that a second estimate of its score, as uncertain as this one, differs from this one by
    more than the distance to the cut, summed."""
    ok = ~np.isnan(scores) & (se > 0)
    z = np.abs(scores[ok] - cut) / (np.sqrt(2.0) * se[ok])
    return float(ndtr(-z).sum())


def seed_check(result: Any, other: Any, seed: int, ids: Any = None) -> dict[str, Any]:
    """How much of ``result``'s removed set a run with another ``seed`` removed too (its
    ``other`` result): the rows each removed, those both did, and the Jaccard index of the
    two removed sets. A measurement, not a model of one: what a second seed does to the
    removed set goes through every phase's cut and how each phase's removals move the next
    phase's scores, which no formula on one run's scores predicted within 0.05 on the sets
    measured."""
    a, b = set(result.removed.tolist()), set(other.removed.tolist())
    both = len(a & b)
    union = len(a | b)
    return {
        "seed": seed,
        "removed": len(b),
        "removed_by_both": both,
        "jaccard": both / union if union else 1.0,
        "kept_fingerprint": other.fingerprint(None if ids is None else list(ids)),
    }
