"""Label summaries shared by the audits, the experiments and the job outputs."""

from __future__ import annotations

import numpy as np

__all__ = ["label_counts", "majority_rate"]


def majority_rate(labels: np.ndarray) -> float:
    """Share of the most frequent label: the accuracy of always predicting it."""
    return float(np.unique(labels, return_counts=True)[1].max() / len(labels))


def label_counts(labels: np.ndarray) -> dict[str, int]:
    """Rows per label, keyed by the label's text, in sorted label order."""
    values, counts = np.unique(labels, return_counts=True)
    return {str(v): int(c) for v, c in zip(values.tolist(), counts.tolist())}
