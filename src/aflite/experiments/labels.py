"""Label spaces of the compare experiment: an evaluation set is scored in the labels the models
were trained on, or, through a label map, in a coarser space (a 3-class NLI model's predictions
collapsed into HANS's entailment / non-entailment)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = ["parse_label_map", "check_label_map", "label_space", "mapped_accuracy"]

_FLAG = "--label-map"


def parse_label_map(value: str | None) -> dict[str, str] | None:
    """``neutral=non-entailment,contradiction=non-entailment`` -> a dict; None for none.

    Every malformed entry is a one-line DataError naming the flag.
    """
    if value is None or not value.strip():
        return None
    out: dict[str, str] = {}
    for entry in value.split(","):
        pred, eq, label = (s.strip() for s in entry.partition("="))
        if not eq or not pred or not label or "=" in label:
            raise DataError(
                f"{_FLAG}: '{entry.strip()}' is not PREDICTED=LABEL "
                "(e.g. neutral=non-entailment,contradiction=non-entailment)"
            )
        if pred in out and out[pred] != label:
            raise DataError(f"{_FLAG}: '{pred}' is mapped twice ({out[pred]} and {label})")
        out[pred] = label
    return out


def check_label_map(label_map: Mapping[Any, Any] | None, trained: Sequence[Any]) -> None:
    """Every key of the map must be a label the models predict."""
    if not label_map:
        return
    known = set(np.asarray(trained).tolist())
    for key in label_map:
        if key not in known:
            raise DataError(
                f"{_FLAG}: '{key}' is not a training label (the models predict {_names(known)})"
            )


def label_space(
    name: str,
    labels: Sequence[Any],
    trained: Sequence[Any],
    label_map: Mapping[Any, Any] | None,
) -> Mapping[Any, Any] | None:
    """How set ``name`` is scored: None when its labels are all training labels (predictions
    compared as they are), else ``label_map`` when its labels are all in the mapped space.
    Otherwise a one-line DataError naming the set and its unseen labels."""
    known = set(np.asarray(trained).tolist())
    present = set(np.asarray(labels).tolist())
    unseen = present - known
    if not unseen:
        return None
    if label_map:
        mapped = {label_map.get(c, c) for c in known}
        if present <= mapped:
            return label_map
        raise DataError(
            f"{name}: labels {_names(present - mapped)} are neither training labels nor "
            f"targets of {_FLAG} (mapped predictions: {_names(mapped)})"
        )
    raise DataError(
        f"{name}: labels {_names(unseen)} are not among the labels the models were trained on "
        f"({_names(known)}); map predictions with {_FLAG} PREDICTED=LABEL,..."
    )


def mapped_accuracy(
    predictions: np.ndarray, labels: Sequence[Any], label_map: Mapping[Any, Any] | None
) -> float:
    """Accuracy of ``predictions`` (passed through ``label_map`` when given)."""
    pred = np.asarray(predictions)
    if label_map:
        pred = np.asarray([label_map.get(p, p) for p in pred.tolist()], dtype=object)
    return float(np.mean(pred == np.asarray(labels, dtype=object)))


def _names(values: set[Any]) -> str:
    return ", ".join(sorted(str(v) for v in values))
