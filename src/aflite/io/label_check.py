"""Classes that look like mistakes, caught before any work: a placeholder label (SNLI's ``-``
for "no gold label"), a number among text labels (``1`` beside "entailment"), a continuous
target read as classes, and a class of a few rows beside large ones.

A placeholder or a stray type would become a class of its own and be filtered as one, with no
word said; together they are one :class:`~aflite.errors.DataError` naming each class, its
rows and the one ``--drop-labels`` value (``drop_labels=``) that sets them all aside. A tiny
class may be real (a rare label), so it is a note, not an error.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aflite._internal.text import did_you_mean, is_number
from aflite.errors import DataError

__all__ = [
    "PLACEHOLDERS",
    "check_classes",
    "check_dropped_labels",
    "continuous",
    "drop_mask",
    "drop_names",
    "drop_value",
    "read_labels",
    "tiny_note",
    "tiny_warning",
]

# labels data sets use for "no label": SNLI/MultiNLI write "-" where annotators disagreed
PLACEHOLDERS = frozenset(
    {"-", "--", "?", "n/a", "na", "none", "null", "nan", "unknown", "no label", "no_label"}
)
_TINY_SHARE = 0.05  # of the largest class's rows
_TINY_ROWS = 10
_NO_GOLD_SHARE = 0.05  # of the rows: -1 on more is a class of its own


def drop_names(drop: Any) -> list[str] | None:
    """Labels to drop as text, compared as the labels are: ``"-,1"``, ``["-", 1]`` or ``2``;
    None stays None (the caller cannot set rows aside)."""
    if drop is None:
        return None
    if isinstance(drop, str):
        return [d.strip() for d in drop.split(",") if d.strip()]
    if isinstance(drop, (int, np.integer)) and not isinstance(drop, bool):
        return [str(drop)]
    return [str(d) for d in drop]


def _hint(labels: list[str], n_found: int, cli: bool, keywords: bool = False) -> str:
    """How to set ``labels`` aside, with the one value that names them all (``keywords``:
    as the Python keyword alone)."""
    value = shlex.quote(",".join(labels))
    them, their = ("it", "its") if n_found == 1 else ("them", "their")
    if not cli:
        return (
            f"fix {them} in the data, or set {them} aside with aflite filter --drop-labels {value}"
        )
    return f"fix {them}, or drop {their} rows with {drop_value(labels, keywords)}"


def drop_value(labels: list[str], keywords: bool) -> str:
    """The option that drops ``labels``, ready to copy: the flag with its value and the
    keyword beside it (a config file takes the keyword), or the keyword alone."""
    if keywords:
        return f"drop_labels={labels!r}"
    return f"--drop-labels {shlex.quote(','.join(labels))} (drop_labels={labels!r})"


def _rows(where: Callable[[int], str], rows: np.ndarray, source: str) -> str:
    """The first rows, as ``where`` names them without the file's name (``line 7``)."""

    def short(i: int) -> str:
        w = where(i)
        w = (w[len(source) :] if w.startswith(source) else w).lstrip(":").strip()
        return f"line {w}" if w.isdigit() else w

    head = ", ".join(short(int(i)) for i in rows[:3])
    return head + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


def check_classes(
    text: np.ndarray,
    values: np.ndarray,
    *,
    field: str,
    where: Callable[[int], str],
    source: str,
    drop: Sequence[str] | None = (),
    keywords: bool = False,
) -> None:
    """Raise one DataError naming every class that looks like a mistake and is not in
    ``drop`` (labels as text): placeholders and values of another type than most labels; or,
    where every label is a number and some have a fraction, a continuous target. ``drop``
    None: the caller cannot set rows aside, and the message says how to fix the data.
    ``keywords``: the option is named as Python's keyword, not as the flag."""
    given = list(drop or ())
    looked = np.flatnonzero(~np.isin(text, given)) if given else np.arange(len(text))
    strings = [str(text[i]) for i in looked]
    if (
        strings
        and all(is_number(s) for s in strings)
        and any(not float(s).is_integer() for s in strings)
    ):
        i = next(int(j) for j, s in zip(looked, strings) if not float(s).is_integer())
        raise continuous(where(i), field, text[i])
    found: dict[str, tuple[str, np.ndarray]] = {}  # label -> (what it is, its rows)
    for label in dict.fromkeys(strings):
        if label.strip().lower() in PLACEHOLDERS or not label.strip():
            found[label] = ("a placeholder", np.flatnonzero(text == label))
    no_gold = _no_gold_label(strings)
    if no_gold is not None:
        found[no_gold] = (
            "a placeholder: Hugging Face's 'no gold label'",
            np.flatnonzero(text == no_gold),
        )
    for label, rows in _numbers_among_text(text, values, looked).items():
        found.setdefault(label, ("a number among text labels", rows))
    types = Counter(type(values[i]).__name__ for i in looked)
    if len(types) > 1:
        common = types.most_common(1)[0][0]
        kind = "a number among text labels" if common == "str" else "text among number labels"
        odd = [int(i) for i in looked if type(values[i]).__name__ != common]
        for label in dict.fromkeys(str(text[i]) for i in odd):
            found.setdefault(label, (kind, np.asarray([i for i in odd if text[i] == label])))
    if not found:
        return
    first = min(int(rows[0]) for _, rows in found.values())
    named = "; ".join(
        f"{label!r} ({what}, {len(rows)} {'row' if len(rows) == 1 else 'rows'}: "
        f"{_rows(where, rows, source)})"
        for label, (what, rows) in found.items()
    )
    noun = "a class that looks" if len(found) == 1 else "classes that look"
    raise DataError(
        f"{where(first)}: field '{field}' has {noun} like a mistake: {named}; "
        + _hint(given + list(found), len(found), cli=drop is not None, keywords=keywords)
    )


def _no_gold_label(strings: list[str]) -> str | None:
    """``-1`` among class numbers 0, 1, ... on a few rows: Hugging Face's datasets write it for
    "no gold label" (SNLI's ``-``). A large class of -1 (sentiment's -1 / 0 / 1) is a class."""
    counts = Counter(strings)
    hit = next((s for s in counts if s.strip() == "-1"), None)
    if hit is None:
        return None
    others = [s.strip() for s in counts if s != hit]
    if not others or not all(s.isdigit() for s in others) or "0" not in others:
        return None
    return hit if counts[hit] < _NO_GOLD_SHARE * len(strings) else None


def _numbers_among_text(
    text: np.ndarray, values: np.ndarray, looked: np.ndarray
) -> dict[str, np.ndarray]:
    """Labels read as text that are numbers (``1`` in a CSV column of ``entailment``), where
    most rows hold words: {label: its rows}. A file that keeps every value as text (CSV, TSV)
    cannot tell them by their type."""
    kinds = {i: isinstance(values[i], str) and is_number(str(text[i])) for i in looked}
    words = sum(isinstance(values[i], str) and not kinds[i] for i in looked)
    numbers = [i for i in looked if kinds[i]]
    if not numbers or words <= len(numbers):
        return {}
    found: dict[str, list[int]] = {}
    for i in numbers:
        found.setdefault(str(text[i]), []).append(int(i))
    return {label: np.asarray(rows) for label, rows in found.items()}


def continuous(where: str, field: str, value: object) -> DataError:
    return DataError(
        f"{where}: field '{field}' holds a continuous number ({value}), not a class label: "
        "AFLITE filters classification data; bin the values into classes first"
    )


def check_dropped_labels(data: Any, drop: Any, *, option: str = "--drop-labels") -> None:
    """A label named to drop that no row of ``data`` (the input, not a filtered set that has
    lost those rows) has is a typo: a one-line DataError naming the labels there are."""
    have = sorted(set(data.labels.tolist())) if data.labels is not None else []
    for d in drop_names(drop) or []:
        if d not in have:
            raise DataError(
                f"{option}: no row of {data.where} is labelled '{d}' (field "
                f"'{data.fields.label}' holds {', '.join(have[:10])}){did_you_mean(d, have)}"
            )


def drop_mask(text: np.ndarray, drop: Sequence[str]) -> np.ndarray | None:
    """The rows labelled one of ``drop`` (labels as text), or None when none is dropped."""
    return np.isin(text, list(drop)) if len(drop) else None


def tiny_warning(text: np.ndarray, field: str, source: str, keywords: bool = False) -> str | None:
    """One line naming the classes of a few rows beside large ones (fewer than 10 rows and
    under 5% of the largest class: a typo'd label more often than a real class), the class
    each is closest to, and the value that drops them (``keywords``: as Python's keyword);
    None when there are none."""
    counts = Counter(text.tolist())
    top = max(counts.values(), default=0)
    tiny = [(c, n) for c, n in counts.items() if n < _TINY_ROWS and n < _TINY_SHARE * top]
    if not tiny:
        return None
    large = [c for c in counts if c not in dict(tiny)]
    named = ", ".join(
        f"'{c}' ({n} {'row' if n == 1 else 'rows'}{did_you_mean(c, large).replace(';', ',')})"
        for c, n in tiny[:5]
    )
    value = drop_value([c for c, _ in tiny], keywords)
    return (
        f"{source}: field '{field}' has classes of a few rows beside large ones: {named}; "
        f"if they are mistakes, drop them with {value}"
    )


def tiny_note(
    text: np.ndarray, dropped: np.ndarray | None, field: str, source: str, keywords: bool = False
) -> str | None:
    """:func:`tiny_warning` of the labels ``text`` but the ``dropped`` rows (a mask, or None)."""
    return tiny_warning(text if dropped is None else text[~dropped], field, source, keywords)


def read_labels(
    table: Any, field: str | None, drop: Any, keywords: bool = False
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """The class labels of a table's ``field`` (any :class:`~aflite.io.base.Table`; None:
    none are read) as text and as given, and the rows of the labels named in ``drop`` (None
    when none is dropped). Each label is checked: no empty or continuous value, nothing that
    looks like a mistake unless named in ``drop`` (``keywords``: the message names it as
    Python's keyword), and two classes at least besides those."""
    drop = drop_names(drop)
    if field is None:
        if drop:
            option = "drop_labels" if keywords else "--drop-labels"
            raise DataError(f"{option}: no label field is read here")
        return None, None, None
    values = table.column(field)
    for i, v in enumerate(values):
        if v == "":  # a CSV cell left blank: what a JSON null or a missing key is
            raise DataError(f"{table.where(i)}: field '{field}' is empty")
        if isinstance(v, float) and v == v and not v.is_integer():
            raise continuous(table.where(i), field, v)
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise DataError(f"{table.where(i)}: field '{field}' is not a class label ({v!r})")
    text = np.asarray([str(v) for v in values])
    values = np.asarray(values, dtype=object)
    check_classes(
        text,
        values,
        field=field,
        where=table.where,
        source=table.path,
        drop=drop,
        keywords=keywords,
    )
    if len(np.unique(text[~np.isin(text, list(drop))] if drop else text)) < 2:
        raise DataError(f"{table.path}: field '{field}' has fewer than two classes")
    return text, values, drop_mask(text, drop or ())
