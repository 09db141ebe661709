"""Multiple-choice items in a table: the choices, an optional context and the answer.

The choices are one field holding a list (HellaSwag's ``endings``) or one field per choice
(``option1,option2``; ``sol1,sol2``); an item may offer fewer choices than the widest (a
shorter list, or empty trailing fields): such items are padded and masked downstream. The
context is one or more fields, joined by a space; with a ``blank`` (WinoGrande's ``_``) each
choice fills the context's first blank instead of following it. The answer is a 0-based or
1-based index, a letter or the right choice's text: detected from the values unless stated,
and every value is checked against its own item, as a one-line error naming the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.io.base import Table

__all__ = [
    "ANSWER_FORMATS",
    "CHOICE_CONTEXT",
    "CHOICE_SEPARATOR",
    "ChoiceFields",
    "Choices",
    "check_answer_format",
    "check_choice_context",
    "check_item_fields",
    "read_choices",
    "read_items",
]

ANSWER_FORMATS = ("index0", "index1", "letter", "text")
# how each choice is represented: with its context as one text, encoded apart, or alone
CHOICE_CONTEXT = ("joint", "apart", "none")
# a field holding a list of choices is shown, and kept for the report and exports, as one
# text of its choices joined by this
CHOICE_SEPARATOR = " | "
_DESCRIBE = {
    "index0": "0-based indexes",
    "index1": "1-based indexes",
    "letter": "letters (A = the first choice)",
    "text": "the right choice's text",
}
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class ChoiceFields:
    """Where a table holds its items: ``choices`` (one field holding a list, or one field per
    choice), ``context`` (fields joined by a space), ``blank`` (the mark in the context each
    choice fills) and ``answer_format`` (one of :data:`ANSWER_FORMATS`; None: detected)."""

    choices: tuple[str, ...]
    context: tuple[str, ...] = ()
    blank: str | None = None
    answer_format: str | None = None

    def __post_init__(self) -> None:
        if not self.choices:
            raise DataError(
                "choices: name the field holding a list of choices, or two or more fields"
            )
        if self.blank is not None and not self.context:
            raise DataError(f"blank {self.blank!r}: name the context fields that hold it")
        if self.answer_format is not None and self.answer_format not in ANSWER_FORMATS:
            raise DataError(
                f"answer format {self.answer_format!r}: must be one of {', '.join(ANSWER_FORMATS)}"
            )

    @property
    def list_field(self) -> bool:
        """Whether the choices are one field holding a list."""
        return len(self.choices) == 1


@dataclass
class Choices:
    """Checked multiple-choice items: ``options[i]`` (item i's choices, 2 or more),
    ``contexts`` (the joined context per item, or None), ``answers`` (0-based positions) and
    the ``answer_format`` they were read in (``detected``: not stated by the caller)."""

    fields: ChoiceFields
    options: list[list[str]]
    contexts: list[str] | None
    answers: np.ndarray
    answer_format: str
    detected: bool

    def __len__(self) -> int:
        return len(self.options)

    def subset(self, rows: Sequence[int]) -> Choices:
        """The items at ``rows``, in that order."""
        rows = [int(i) for i in rows]
        return Choices(
            self.fields,
            [self.options[i] for i in rows],
            None if self.contexts is None else [self.contexts[i] for i in rows],
            np.asarray(self.answers)[rows],
            self.answer_format,
            self.detected,
        )

    @property
    def n_choices(self) -> np.ndarray:
        """(N,) the number of choices of each item."""
        return np.asarray([len(o) for o in self.options], dtype=np.int64)

    @property
    def width(self) -> int:
        """K: the most choices an item offers (the others are padded to it)."""
        return int(self.n_choices.max())

    def texts(self, *, context: bool = True) -> list[list[str]]:
        """Each item's choices as text: with ``context``, the context followed by the choice
        (or the context with its blank filled by it); without, the choice alone."""
        if not context or self.contexts is None:
            return [list(o) for o in self.options]
        blank = self.fields.blank
        if blank is not None:
            return [
                [c.replace(blank, o, 1) for o in opts]
                for c, opts in zip(self.contexts, self.options)
            ]
        return [[f"{c} {o}" for o in opts] for c, opts in zip(self.contexts, self.options)]

    def chance(self) -> float:
        """The chance level the filter measures against: the accuracy of the best guess that
        sees only answer positions (:func:`aflite.algorithm.numerics.item_store.choice_chance`)."""
        from aflite.algorithm.numerics.item_store import choice_chance

        return float(choice_chance(self.answers, self.n_choices))

    def note(self) -> str:
        """One line on how the answers were read."""
        how = "detected" if self.detected else "as stated"
        return (
            f"answers read as {_DESCRIBE[self.answer_format]} ({how}; --answer-format / "
            "answer_format= to change)"
        )

    def as_dict(self) -> dict[str, Any]:
        """What a summary states about the items."""
        k = self.n_choices
        return {
            "choices": list(self.fields.choices),
            "context": list(self.fields.context),
            "blank": self.fields.blank,
            "answer_format": self.answer_format,
            "answer_format_detected": self.detected,
            "n_choices": int(k.max()) if k.min() == k.max() else [int(k.min()), int(k.max())],
            "chance": self.chance(),
            # what the choice-wise model scores when it tells no choice apart: it has no
            # position term, so it cannot reach a skewed answer position's share
            "guess": float(np.mean(1.0 / self.n_choices)),
        }


def _empty(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip())


def _values(table: Table, name: str) -> list[Any]:
    """A field's raw values (None where a row lacks it); a field no row has is the table's
    own error for it, as reading it whole gives."""
    if name not in table.fieldnames:
        table.column(name)  # raises: no row has the field
    return list(getattr(table, "raw_values", table.column)(name))


def _from_list(table: Table, name: str) -> list[list[str]]:
    out = []
    for i, v in enumerate(_values(table, name)):
        if hasattr(v, "tolist") and not isinstance(v, str):
            v = v.tolist()  # a numpy array (Parquet, Arrow)
        if not isinstance(v, (list, tuple)):
            raise DataError(f"{table.where(i)}: field '{name}' is not a list of choices ({v!r})")
        for j, c in enumerate(v):
            if not isinstance(c, str):
                raise DataError(
                    f"{table.where(i)}: field '{name}' choice {j + 1} is not text ({c!r})"
                )
            if not c.strip():
                raise DataError(f"{table.where(i)}: field '{name}' choice {j + 1} is empty")
        if len(v) < 2:
            raise DataError(f"{table.where(i)}: field '{name}' holds fewer than two choices")
        out.append(list(v))
    return out


def _from_fields(table: Table, names: Sequence[str]) -> list[list[str]]:
    columns = [_values(table, n) for n in names]
    out = []
    for i in range(len(table)):
        row = [col[i] for col in columns]
        n = len(row)
        while n and _empty(row[n - 1]):
            n -= 1  # trailing empty fields: an item with fewer choices
        for name, v in zip(names[:n], row[:n]):
            if _empty(v):
                raise DataError(
                    f"{table.where(i)}: field '{name}' is empty but a later choice field is not"
                )
            if not isinstance(v, str):
                raise DataError(f"{table.where(i)}: field '{name}' is not text ({v!r})")
        if n < 2:
            raise DataError(f"{table.where(i)}: fewer than two choices in {', '.join(names)}")
        out.append(list(row[:n]))
    return out


def _contexts(table: Table, names: Sequence[str], blank: str | None) -> list[str] | None:
    if not names:
        return None
    parts = [table.text_column(n) for n in names]
    joined = [" ".join(p) for p in zip(*parts)]
    if blank is not None:
        for i, c in enumerate(joined):
            if blank not in c:
                raise DataError(
                    f"{table.where(i)}: no blank {blank!r} in {', '.join(names)} for a choice to fill"
                )
    return joined


def _as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _detect(values: list[Any]) -> str:
    """The answer format the values are written in, going by the first: an index (0-based
    where any value is 0), a single letter, or else the choice's text. A value written
    otherwise is then an error naming its row."""
    first = values[0]
    if _as_int(first) is not None:
        return "index0" if any(_as_int(v) == 0 for v in values) else "index1"
    if isinstance(first, str) and len(first.strip()) == 1 and first.strip().isalpha():
        return "letter"
    return "text"


def _answer(v: Any, options: list[str], fmt: str, where: str, field: str) -> int:
    k = len(options)
    if fmt in ("index0", "index1"):
        base = 0 if fmt == "index0" else 1
        i = _as_int(v)
        if i is None or not base <= i < k + base:
            raise DataError(
                f"{where}: field '{field}' is {v!r}, not a {base}-based index of its {k} "
                f"choices ({base}-{k - 1 + base})"
            )
        return i - base
    if fmt == "letter":
        s = v.strip().upper() if isinstance(v, str) else ""
        if len(s) != 1 or s not in _LETTERS[:k]:
            raise DataError(
                f"{where}: field '{field}' is {v!r}, not a letter of its {k} choices (A-{_LETTERS[k - 1]})"
            )
        return _LETTERS.index(s)
    hits = [j for j, o in enumerate(options) if isinstance(v, str) and o.strip() == v.strip()]
    if len(hits) != 1:
        why = "matches several of its choices" if hits else f"is not one of its {k} choices"
        raise DataError(f"{where}: field '{field}' ({v!r}) {why}")
    return hits[0]


def read_choices(table: Table, fields: ChoiceFields, label: str) -> Choices:
    """Read and check the items of ``table``: choices, context and the answer in ``label``;
    every problem is a one-line DataError naming the row and field."""
    if fields.list_field:
        options = _from_list(table, fields.choices[0])
    else:
        options = _from_fields(table, fields.choices)
    contexts = _contexts(table, fields.context, fields.blank)
    values = table.column(label)
    fmt = fields.answer_format or _detect(values)
    answers = np.asarray(
        [
            _answer(v, o, fmt, table.where(i), label)
            for i, (v, o) in enumerate(zip(values, options))
        ],
        dtype=np.int64,
    )
    return Choices(fields, options, contexts, answers, fmt, fields.answer_format is None)


def read_items(
    table: Table,
    label: str | None,
    choices: str | Sequence[str],
    context: str | Sequence[str] | None,
    blank: str | None,
    answer_format: str | None,
    text: str | Sequence[str] | None,
) -> tuple[ChoiceFields, dict[str, list[str]], Choices]:
    """The multiple-choice items of ``table``: where they are, their text fields (the
    context and choice fields) and the items, whose answer positions are the labels."""
    if text:
        raise DataError("text fields and choices: name the choices (and context) only")
    if label is None:
        raise DataError("choices: name the field holding the answer (--label-field / label=)")
    fields = ChoiceFields(_names(choices), _names(context), blank, answer_format)
    items = read_choices(table, fields, label)
    texts = {f: table.text_column(f) for f in fields.context}
    if fields.list_field:
        texts[fields.choices[0]] = [CHOICE_SEPARATOR.join(o) for o in items.options]
    else:
        for j, f in enumerate(fields.choices):
            texts[f] = [o[j] if j < len(o) else "" for o in items.options]
    return fields, texts, items


def _names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value or ())


def check_answer_format(value: Any, name: str) -> None:
    """None (detected), or one of the answer formats items are read with."""
    if value is not None:
        from aflite._internal.checks import choice

        choice(ANSWER_FORMATS)(value, name)


def check_choice_context(value: Any, name: str) -> None:
    """How each choice is represented: one of :data:`CHOICE_CONTEXT`."""
    from aflite._internal.checks import choice

    choice(CHOICE_CONTEXT)(value, name)


def check_item_fields(fields: Any) -> bool:
    """The checks the item fields of ``fields`` (``choices``, ``context``, ``blank``,
    ``answer_format`` and, where it has one, ``choice_context``, beside ``label`` and
    ``text``: a command's :class:`~aflite.config.fields.DataFields`, or a call's arguments)
    need together, a ConfigError naming the option; True when they read multiple-choice items
    (then ``text`` must be empty)."""
    from aflite._internal.options import ConfigError

    if not fields.choices:
        for name in ("context", "blank", "answer_format"):
            if getattr(fields, name):
                raise ConfigError(name, "needs {choices}")
        if getattr(fields, "choice_context", "joint") != "joint":
            raise ConfigError("choice_context", "needs {choices}")
        return False
    if fields.blank is not None and not fields.context:
        raise ConfigError("blank", "needs {context}, the fields holding it")
    named = [fields.choices] if isinstance(fields.choices, str) else list(fields.choices)
    if fields.label in named + list(fields.context):
        raise ConfigError("label", f"'{fields.label}' is a choice or context field")
    if fields.text:
        raise ConfigError("text", "multiple-choice items are read from {choices} and {context}")
    return True
