"""Classes that look like mistakes, caught before any work: a placeholder label (SNLI's ``-``
for "no gold label"), a number among text labels (``1`` beside "entailment"), a continuous
target read as classes, and a class of a few rows beside large ones.

A placeholder or a stray type would become a class of its own and be filtered as one, with no
word said; each is a one-line :class:`~aflite.errors.DataError` naming the rows and the option
that drops them (``--drop-labels`` / ``drop_labels=``). A tiny class may be real (a rare
label), so it is a warning, not an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = [
    "PLACEHOLDERS",
    "check_classes",
    "check_dropped_labels",
    "continuous",
    "drop_mask",
    "tiny_warning",
]

# labels data sets use for "no label": SNLI/MultiNLI write "-" where annotators disagreed
PLACEHOLDERS = frozenset(
    {"-", "--", "?", "n/a", "na", "none", "null", "nan", "unknown", "no label", "no_label"}
)
DROP_HINT = "drop its rows with --drop-labels {label} (drop_labels=[{label!r}])"
# where an entry point has nowhere to set rows aside (scores, comparisons: row-aligned inputs)
FIX_HINT = "fix its rows in the data, or set them aside with aflite filter --drop-labels {label}"
_TINY_SHARE = 0.05  # of the largest class's rows
_TINY_ROWS = 10


def _rows(where: Callable[[int], str], rows: np.ndarray, source: str) -> str:
    """The first rows, as ``where`` names them without the file's name (``line 7``)."""

    def short(i: int) -> str:
        w = where(i)
        w = (w[len(source) :] if w.startswith(source) else w).lstrip(":").strip()
        return f"line {w}" if w.isdigit() else w

    head = ", ".join(short(int(i)) for i in rows[:3])
    return head + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def check_classes(
    text: np.ndarray,
    values: np.ndarray,
    *,
    field: str,
    where: Callable[[int], str],
    source: str,
    drop: Sequence[str] | None = (),
) -> None:
    """Raise a one-line DataError for a class that looks like a mistake and is not in ``drop``
    (labels as text): a placeholder, a value of another type than most labels, or, where every
    label is a number and some have a fraction, a continuous target. ``drop`` None: the caller
    cannot set rows aside, and the message says how to fix the data instead."""
    hint = FIX_HINT if drop is None else DROP_HINT
    drop = drop or ()
    dropped = set(drop)
    looked = np.flatnonzero(~np.isin(text, list(dropped))) if dropped else np.arange(len(text))
    strings = [str(text[i]) for i in looked]
    if (
        strings
        and all(_is_number(s) for s in strings)
        and any(not float(s).is_integer() for s in strings)
    ):
        i = next(int(j) for j, s in zip(looked, strings) if not float(s).is_integer())
        raise continuous(where(i), field, text[i])
    for label in dict.fromkeys(strings):
        if label.strip().lower() in PLACEHOLDERS or not label.strip():
            rows = np.flatnonzero(text == label)
            raise DataError(
                f"{where(int(rows[0]))}: field '{field}' is '{label}', a placeholder, not a "
                f"class ({len(rows)} {'row' if len(rows) == 1 else 'rows'}: "
                f"{_rows(where, rows, source)}); {hint.format(label=label)}"
            )
    types = Counter(type(values[i]).__name__ for i in looked)
    if len(types) > 1:
        common = types.most_common(1)[0][0]
        odd = np.asarray([i for i in looked if type(values[i]).__name__ != common])
        label = str(text[odd[0]])
        kind = "a number" if common == "str" else "text"
        raise DataError(
            f"{where(int(odd[0]))}: field '{field}' is {values[odd[0]]!r}, {kind} among "
            f"{'text' if common == 'str' else 'number'} labels ({len(odd)} "
            f"{'row' if len(odd) == 1 else 'rows'}: {_rows(where, odd, source)}); "
            + ("fix them or " if drop is not None else "")
            + hint.format(label=label)
        )


def continuous(where: str, field: str, value: object) -> DataError:
    return DataError(
        f"{where}: field '{field}' holds a continuous number ({value}), not a class label: "
        "AFLITE filters classification data; bin the values into classes first"
    )


def check_dropped_labels(data: Any, drop: Sequence[str] | str) -> None:
    """A label named to drop that no row of ``data`` (the input, not a filtered set that has
    lost those rows) has is a typo: a one-line DataError naming the labels there are."""
    drop = [d.strip() for d in drop.split(",") if d.strip()] if isinstance(drop, str) else drop
    have = set(data.labels.tolist()) if data.labels is not None else set()
    unknown = [d for d in drop if d not in have]
    if unknown:
        raise DataError(
            f"--drop-labels: no row of {data.where} is labelled '{unknown[0]}' "
            f"(field '{data.fields.label}' holds {', '.join(sorted(have)[:10])})"
        )


def tiny_classes(text: np.ndarray) -> list[tuple[str, int]]:
    """Classes of a few rows beside large ones (fewer than 10 rows and under 5% of the
    largest class): a typo'd label more often than a real class."""
    counts = Counter(text.tolist())
    top = max(counts.values(), default=0)
    return [(c, n) for c, n in counts.items() if n < _TINY_ROWS and n < _TINY_SHARE * top]


def drop_mask(text: np.ndarray, drop: Sequence[str]) -> np.ndarray | None:
    """The rows labelled one of ``drop`` (labels as text), or None when none is dropped."""
    return np.isin(text, list(drop)) if len(drop) else None


def tiny_warning(text: np.ndarray, field: str, source: str) -> str | None:
    """One warning line naming the tiny classes, or None."""
    tiny = tiny_classes(text)
    if not tiny:
        return None
    named = ", ".join(f"'{c}' ({n} {'row' if n == 1 else 'rows'})" for c, n in tiny[:5])
    return (
        f"{source}: field '{field}' has classes of a few rows beside large ones: {named}; "
        "if they are mistakes, drop them with --drop-labels (drop_labels=)"
    )
