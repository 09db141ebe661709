"""How settled a phase's decisions are.

A row's score is the share of its held-out predictions that were right: an estimate, with a
standard error, of the chance that a model trained on t other rows predicts it. Two runs
with other seeds draw other partitions, so a row whose score sits near the phase's cut may
land on the other side. This module measures that: each row's standard error, the phase's
cut, the number of rows another seed is expected to put on the other side of it (the rows
*in contest*), and from those the overlap two seeds' removed sets are expected to have.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

__all__ = ["contested", "expected_overlap", "standard_errors"]


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


def expected_overlap(removed: np.ndarray, margin: np.ndarray, se: np.ndarray) -> float:
    """The Jaccard index two runs with other seeds are expected to reach: from each row's
    distance to the cut that decided it (``margin``, > 0 above it) and its standard error,
    the chance that another seed decides it the same way. A normal approximation that
    leaves out how one phase's removals change the next phase's scores."""
    ok = ~np.isnan(margin) & ~np.isnan(se) & (se > 0)
    z = np.where(ok, np.abs(np.nan_to_num(margin)) / (np.sqrt(2.0) * np.where(ok, se, 1.0)), np.inf)
    agree = ndtr(z)
    stays = float(agree[removed].sum())  # removed rows another seed removes too
    joins = float((1.0 - agree[~removed]).sum())  # kept rows another seed removes
    total = float(removed.sum())
    return stays / (total + joins) if total + joins > 0 else 1.0
