"""Out-of-distribution sets read the way the paper reads them: restricted to some gold labels
(its HANS columns are HANS's non-entailment cases) and broken down by a field of the set
(HANS's ``heuristic`` or ``subcase``, a diagnostic set's ``category``, a stress set's
``category``). Each group becomes an evaluation set of its own, named ``SET[VALUE]``, so the
tables, the differences filtered − random, the sizes and majority rates cover it as any set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from aflite.errors import DataError

if TYPE_CHECKING:
    from aflite.experiments.sets import LabelledTexts

__all__ = ["group_set_name", "parse_per_set", "restrict_labels", "split_by_category"]


def group_set_name(name: str, value: Any) -> str:
    """The evaluation set of the rows of ``name`` whose category is ``value``."""
    return f"{name}[{value}]"


def parse_per_set(values: Sequence[str] | None, flag: str) -> dict[str | None, str]:
    """Repeatable ``--flag VALUE`` (every set) or ``--flag SET:VALUE`` (set SET only, by its
    file stem) -> ``{None or SET: VALUE}``; a set named twice is a one-line DataError."""
    out: dict[str | None, str] = {}
    for raw in values or []:
        name, sep, value = raw.partition(":")
        key: str | None = name.strip() if sep else None
        value = (value if sep else raw).strip()
        if not value or key == "":
            raise DataError(f"{flag}: '{raw}' is not VALUE or SET:VALUE")
        if key in out:
            raise DataError(f"{flag}: {'every set' if key is None else key} is given twice")
        out[key] = value
    return out


def for_set(per_set: Mapping[str | None, Any] | Any, name: str) -> Any:
    """The value of a per-set option for set ``name``: its own, else the one for every set."""
    if isinstance(per_set, Mapping):
        return per_set.get(name, per_set.get(None))
    return per_set


def restrict_labels(name: str, data: LabelledTexts, labels: Sequence[Any] | None) -> LabelledTexts:
    """The rows of ``data`` whose gold label is one of ``labels`` (all rows for None); a label
    the set does not hold is a one-line DataError naming the set."""
    if not labels:
        return data
    wanted = [str(v) for v in labels]
    present = set(np.asarray(data.labels).astype(str).tolist())
    absent = [v for v in wanted if v not in present]
    if absent:
        raise DataError(
            f"--ood-labels: {name} has no rows labelled {', '.join(absent)} "
            f"(its labels: {', '.join(sorted(present))})"
        )
    keep = np.flatnonzero(np.isin(np.asarray(data.labels).astype(str), wanted))
    return data.subset(keep)


def split_by_category(name: str, data: LabelledTexts) -> dict[str, np.ndarray]:
    """``{SET[VALUE]: row indices}`` for each value of ``data.groups`` (the set's
    categories), in sorted order; an empty dict when the set has none."""
    if data.groups is None:
        return {}
    cats = np.asarray(data.groups).astype(str)
    return {group_set_name(name, v): np.flatnonzero(cats == v) for v in np.unique(cats)}
