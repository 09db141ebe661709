"""The sets of an experiment as its models and representation read them: a
:class:`LabelledTexts` is a view of a :class:`~aflite.io.labelled.LabelledData`, so every set
of ``compare`` and ``ood`` is read and checked by :func:`~aflite.io.labelled.read_labelled`,
as the command line reads it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.io.labelled import LabelledData, read_labelled

__all__ = ["LabelledTexts", "experiment_set"]


@dataclass(frozen=True)
class LabelledTexts:
    """Text fields and labels (as text) of one set; ``ids`` find its rows in a pre-computed
    feature file (None when the set was read without an id field); ``groups`` (the set's group
    field, as text) keep rows together in the filter of a training or dev set, and break an
    out-of-distribution set's accuracy down by value (e.g. HANS's ``heuristic``). Made by :meth:`of`, or by ``subset`` of one."""

    texts: dict[str, list[str]]
    labels: np.ndarray
    ids: list[Any] | None = None
    groups: np.ndarray | None = None

    @classmethod
    def of(cls, data: LabelledData) -> LabelledTexts:
        """The view of a set read by :func:`read_labelled` (with its text fields)."""
        if not data.texts or data.labels is None:
            raise DataError(f"{data.where}: an experiment set needs a label and text fields")
        ids = list(data.ids) if data.fields.id else None
        return cls(dict(data.texts), data.labels, ids, data.groups)

    def subset(self, idx: np.ndarray) -> LabelledTexts:
        return LabelledTexts(
            {k: [v[i] for i in idx] for k, v in self.texts.items()},
            self.labels[idx],
            None if self.ids is None else [self.ids[i] for i in idx],
            None if self.groups is None else self.groups[idx],
        )

    def fields(self, names: list[str]) -> LabelledTexts:
        """The same rows with only the text fields ``names``."""
        return LabelledTexts({f: self.texts[f] for f in names}, self.labels, self.ids)

    def fingerprint(self, *, with_ids: bool = False) -> str:
        """A digest of the field names and texts (and ids): equal texts, equal embeddings."""
        h = hashlib.sha256()
        for name, values in self.texts.items():
            h.update(f"{name}\x1e{len(values)}\x1e".encode())
            for v in values:
                h.update(v.encode("utf-8", "surrogatepass") + b"\x1f")
        if with_ids and self.ids is not None:
            h.update("\x1d".join(map(str, self.ids)).encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:24]

    def __len__(self) -> int:
        return len(self.labels)


def experiment_set(name: str, data: Any, fields: list[str] | None = None) -> LabelledTexts:
    """Set ``name`` of an experiment: a :class:`LabelledData`, or any input
    :func:`read_labelled` reads (label field ``label``, the text field picked), checked there.
    ``fields``: the text fields it must have (those of the training set)."""
    if not isinstance(data, LabelledData):
        data = read_labelled(data)
    out = LabelledTexts.of(data)
    missing = [f for f in fields or [] if f not in out.texts]
    if missing:
        raise DataError(
            f"{name}: no text field {', '.join(missing)} (the training set's text fields are "
            f"{', '.join(fields or [])}; read every set with the same text fields)"
        )
    return out
