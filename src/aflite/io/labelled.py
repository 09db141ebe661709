"""One labelled data set, whatever it came from: :class:`LabelledData`, built by
:func:`read_labelled` from a file (through the format registry), a pandas DataFrame, a
Hugging Face ``Dataset`` / ``DatasetDict`` split or a list of dicts.

Every entry point -- ``aflite filter`` / ``score`` / ``audit`` / ``experiment``,
:func:`aflite.filter_dataset`, :func:`aflite.score_dataset`, :func:`aflite.audit`,
:func:`aflite.featurize` -- reads its data here, so a bad input gives the same one-line
:class:`~aflite.errors.DataError` through each of them, naming the file (or ``DataFrame``,
``Dataset``, ``data``), the row and the field. Fields left out are picked here (the only text
column, a column named ``id``) and returned in :attr:`LabelledData.fields`, never written back
into the caller's options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite._internal.text import is_number
from aflite.errors import DataError
from aflite.io.base import ImageTable, Table
from aflite.io.choices import ChoiceFields, Choices, read_items
from aflite.io.ids import ID_COLUMN, NO_ID, read_groups_and_ids
from aflite.io.label_check import drop_names, read_labels, tiny_note

__all__ = [
    "ID_COLUMN",
    "NO_ID",
    "LabelledData",
    "LabelledFields",
    "read_labelled",
    "text_columns",
]

TEXT_HINT = "name the text fields to use (--text-fields / text=)"
_SAMPLE = 1000  # rows looked at per column; the picked column is read and checked in full


@dataclass(frozen=True)
class LabelledFields:
    """The fields a data set was read with, as resolved: ``picked`` names those chosen
    automatically (``"text"``: the only text column, ``"id"``: a column named ``id``)."""

    label: str | None
    text: tuple[str, ...] = ()
    id: str | None = None
    group: str | None = None
    picked: tuple[str, ...] = ()
    choices: ChoiceFields | None = None  # multiple-choice items: where they are

    def as_dict(self) -> dict[str, Any]:
        """``{"label", "text", "id", "group", "auto"}`` (and ``"choices"``, ``"context"``,
        ``"blank"`` for multiple-choice items), as results and summaries show them."""
        out = {
            "label": self.label,
            "id": self.id,
            "group": self.group,
            "auto": list(self.picked),
            "text": list(self.text),
        }
        if self.choices is not None:
            c = self.choices
            out |= {"choices": list(c.choices), "context": list(c.context), "blank": c.blank}
        return out

    def note(self) -> str:
        """One line saying what was picked, or "" when nothing was."""
        parts = []
        if "text" in self.picked:
            parts.append(f"text field {', '.join(self.text)} (the only text column)")
        if "id" in self.picked:
            parts.append(f"id field {self.id} (a column named {ID_COLUMN})")
        if not parts:
            return ""
        # name the options of what was picked only: the others were given
        flags = [
            f
            for f, kind in (("--text-fields", "text"), ("--id-field", "id"))
            if kind in self.picked
        ]
        return "picked " + " and ".join(parts) + "; name others with " + " / ".join(flags)


@dataclass
class LabelledData:
    """A checked labelled data set: ``labels`` (the class labels as text), ``label_values``
    (as given), ``ids`` (the id field's values, or row numbers), ``texts`` (field -> values;
    None when no text field was read), ``groups`` (as text, or None) and the ``table`` they
    were read from. ``subset(rows)`` gives rows back in the input's own type. For
    multiple-choice items ``choices`` holds them (:class:`~aflite.io.choices.Choices`) and
    ``labels`` are the answers' 0-based positions, as text."""

    source: Any
    table: Table
    fields: LabelledFields
    labels: np.ndarray | None
    label_values: np.ndarray | None
    ids: list[Any]
    texts: dict[str, list[str]] | None
    groups: np.ndarray | None
    choices: Choices | None = None
    dropped: np.ndarray | None = None  # rows whose label was named to drop (drop_labels)
    keywords: bool = False  # read for Python: notes name options as keywords, not flags
    # what the label checks found that is no error: classes of a few rows beside large ones
    note: str | None = None

    def __len__(self) -> int:
        return len(self.table)

    @property
    def where(self) -> str:
        """The input, for messages: the file, ``DataFrame``, ``Dataset`` or ``data``."""
        return self.table.path

    @property
    def picked(self) -> list[str]:
        return list(self.fields.picked)

    @property
    def from_file(self) -> bool:
        """Whether the rows were read from a file (whose fingerprint can key a cache)."""
        from aflite.io.memory import MemoryTable

        return not isinstance(self.table, MemoryTable)

    def label_codes(self) -> np.ndarray:
        """Labels for the algorithm: as given, or as text where their types are mixed (1 and
        "1" cannot be sorted together)."""
        if self.choices is not None:
            return self.choices.answers  # the right choice's position
        values = self.label_values
        if values is None:
            raise DataError(f"{self.where}: no label field was read")
        return (
            np.asarray([str(v) for v in values]) if len({type(v) for v in values}) > 1 else values
        )

    def tiny_classes_note(self) -> str | None:
        """One line naming classes of a few rows beside large ones (typos more often than
        real classes), leaving out rows already dropped; None when there are none."""
        if self.labels is None or self.choices is not None:
            return None
        return tiny_note(self.labels, self.dropped, str(self.fields.label), self.where,
                         self.keywords)  # fmt: skip

    def context(self) -> dict[str, list[str | None]]:
        """The input's other text columns (a premise beside the hypothesis filtered on, a
        title): not features, but what a reviewer needs to judge a row. Values as text."""
        f = self.fields
        skip = {f.label, f.id, *(self.texts or {})}
        if f.choices is not None:
            skip |= {*f.choices.choices, *f.choices.context}
        return {
            c: [None if v is None else str(v) for v in _raw(self.table, c)]
            for c in text_columns(self.table, {s for s in skip if s is not None})
        }

    def subset(self, rows: Sequence[int] | np.ndarray) -> Any:
        """The rows at ``rows`` in the input's own type: DataFrame rows keep their index, a
        Dataset is ``select``-ed, a list of dicts gives the same dicts, a file gives a list of
        dicts, one per row."""
        own = getattr(self.table, "subset", None)
        if own is not None:
            return own(rows)
        names = self.table.fieldnames
        cols = {c: _raw(self.table, c) for c in names}
        return [{c: cols[c][i] for c in names} for i in np.asarray(rows, dtype=np.int64)]


def _raw(table: Table, name: str) -> list[Any]:
    """Values of a column, None where a row lacks it (a Table without ``raw_values``: its
    checked column)."""
    return list(getattr(table, "raw_values", table.column)(name))


def text_columns(table: Table, exclude: set[str]) -> list[str]:
    """Columns (outside ``exclude``) of strings that are not all numbers: CSV keeps every value
    as a string, so a column of digits there is not text, as numbers in a DataFrame are not."""
    out = []
    for name in table.columns:
        if name in exclude:
            continue
        try:
            values = list(getattr(table, "values", table.column)(name))
        except DataError:
            out.append(name)  # rows lack it: a candidate, so a pick is never a guess
            continue
        sample = [v for v in values[:_SAMPLE] if v is not None and v == v]
        if sample and all(isinstance(v, str) for v in sample):
            if not all(is_number(v) for v in sample):
                out.append(name)
    return out


def _pick_text(table: Table, skip: set[str]) -> list[str]:
    found = text_columns(table, skip)
    if len(found) == 1:
        return found
    if found:
        raise DataError(
            f"{table.path}: several text columns ({', '.join(found)}); {TEXT_HINT}, "
            f"e.g. {','.join(found[:2])}"
        )
    raise DataError(
        f"{table.path}: no text column besides the label, id and group fields (columns: "
        f"{', '.join(map(str, table.columns))}); {TEXT_HINT}"
    )


def read_labelled(
    data: Any,
    *,
    label: str | None = "label",
    text: str | Sequence[str] | None = None,
    id: str | None = None,  # noqa: A002 -- the column, named as users name it
    group: str | None = None,
    split: str | None = None,
    input_format: str | None = None,
    need_text: bool = True,
    pick: bool = True,
    choices: str | Sequence[str] | None = None,
    context: str | Sequence[str] | None = None,
    blank: str | None = None,
    answer_format: str | None = None,
    drop_labels: Sequence[str] | None = None,
    images_for: str | None = None,
    keywords: bool = False,
) -> LabelledData:
    """Read and check ``data`` (a path, a :class:`Table`, a DataFrame, a Dataset, a
    DatasetDict with ``split``, a list of dicts); every problem is a one-line DataError.

    ``label`` must hold at least two classes (``None``: no labels are read). ``text`` is read
    when given; left out where ``need_text``, it is the only text column outside the label, id
    and group fields (with ``pick``; without, naming it is required). ``id`` left out is a
    column named ``id`` where there is one (with ``pick``); ``"none"`` numbers the rows. Ids
    must be unique, including as text.

    ``choices`` reads multiple-choice items (:mod:`aflite.io.choices`): one field holding a
    list of choices, or two or more fields, one per choice; ``context`` the fields before
    them, ``blank`` the mark in the context each choice fills; ``label`` is then the answer,
    read as ``answer_format`` (``index0``, ``index1``, ``letter``, ``text``; None: detected).
    The text fields are then the context and choice fields, never picked.

    A label that looks like a mistake (a placeholder such as ``-``, a number among text labels,
    a continuous number) is an error unless named in ``drop_labels``, whose rows
    :attr:`LabelledData.dropped` marks for the caller to set aside (None: the caller cannot,
    and the error says how to fix the data instead). ``images_for`` names the feature kind
    that needs images: other data is refused. ``keywords``: the messages and notes name
    ``drop_labels`` as Python's keyword (the Python API's door), not as the flag.

    >>> d = read_labelled([{"t": "a b", "y": 0}, {"t": "c", "y": 1}], label="y")
    >>> d.fields.text, d.labels.tolist(), d.subset([1])
    (('t',), ['0', '1'], [{'t': 'c', 'y': 1}])
    """
    from aflite.io.memory import as_table  # DataFrames, Datasets: only when one is read

    table = as_table(data, split=split, input_format=input_format)
    if images_for is not None and not isinstance(table, ImageTable):
        raise DataError(
            f"{data}: {images_for} needs images: a folder of class sub-folders or an .npz "
            "with 'images' and 'labels'"
        )
    groups, id_field, ids, picked = read_groups_and_ids(table, label, id, group, pick)
    if choices is not None:
        if drop_names(drop_labels):
            option = "drop_labels" if keywords else "--drop-labels"
            raise DataError(f"{option}: applies to class labels, not to multiple-choice answers")
        fields, texts, items = read_items(
            table, label, choices, context, blank, answer_format, text
        )
        lf = LabelledFields(label, tuple(texts), fields_id(id_field), group or None,
                            tuple(picked), fields)  # fmt: skip
        labels = np.asarray([str(a) for a in items.answers])
        values = np.asarray(table.column(label), dtype=object)
        return LabelledData(data, table, lf, labels, values, ids, texts, groups, items)
    labels, values, dropped = read_labels(table, label, drop_labels, keywords)
    tiny = None if labels is None else tiny_note(labels, dropped, str(label), table.path, keywords)
    names = [text] if isinstance(text, str) else list(text or [])
    if need_text and not names:
        if not pick:
            raise DataError(f"{table.path}: text features need text fields; {TEXT_HINT}")
        skip = {label, id_field, group, ID_COLUMN} - {None}
        names = _pick_text(table, skip)  # type: ignore[arg-type]
        picked.insert(0, "text")
    # read for reports and audits even where the features do not need text
    texts = {f: table.text_column(f) for f in names} if names else None
    lf = LabelledFields(label, tuple(names), fields_id(id_field), group or None, tuple(picked))
    return LabelledData(
        data, table, lf, labels, values, ids, texts, groups, None, dropped, keywords, tiny
    )


def fields_id(id_field: str | None) -> str | None:
    """The id field as :class:`LabelledFields` names it: None for row numbers."""
    return None if id_field == NO_ID else id_field


def __getattr__(name: str) -> Any:
    # as_table lives with the tables of data in memory (imported on first use, as the format
    # registry's built-ins are)
    if name == "as_table":
        from aflite.io.memory import as_table

        return as_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
