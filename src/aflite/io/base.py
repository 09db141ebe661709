"""What every data format presents to the rest of aflite: the :class:`Table` protocol, and
:class:`BaseTable` / :class:`RowsTable`, which implement most of it for a format's class.

A table is the rows of one input, addressed by 0-based position. Every user-facing error is a
one-line :class:`~aflite.errors.DataError` naming the file, the row (``where(i)``) and the field.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from aflite._internal.text import did_you_mean
from aflite.errors import DataError

__all__ = [
    "Table",
    "ImageTable",
    "BaseTable",
    "RowsTable",
    "missing_field",
    "did_you_mean",
    "plain_value",
    "hash_path",
]

# an error names at most this many columns, so it stays one readable line on wide tables
_MAX_LISTED = 30


@runtime_checkable
class Table(Protocol):
    """Rows of one input with their source format (what jobs, audits and outputs use)."""

    @property
    def path(self) -> str: ...

    @property
    def format(self) -> str: ...

    @property
    def fieldnames(self) -> list[str]: ...

    @property
    def columns(self) -> list[str]: ...

    def __len__(self) -> int: ...

    def where(self, i: int) -> str:
        """Where row ``i`` is, for messages: ``file:LINE`` or ``file: row N`` (1-based)."""
        ...

    def column(self, name: str) -> list[Any]:
        """All values of a field; a missing field or an empty value is a DataError."""
        ...

    def text_column(self, name: str) -> list[str]:
        """All values of a field, each a non-blank string."""
        ...

    def fingerprint(self) -> str:
        """A content hash of the input (caches, checkpoints, the run summary)."""
        ...

    def output_name(self, stem: str) -> str:
        """The name of an output written in this format, e.g. ``kept.csv``."""
        ...

    def write_subset(
        self,
        target: str | os.PathLike,
        indices: Sequence[int] | np.ndarray,
        extra: dict[str, Sequence[Any]] | None = None,
    ) -> Path:
        """Write the rows at ``indices`` (in that order), untouched, plus ``extra`` columns,
        atomically; return the path written."""
        ...


@runtime_checkable
class ImageTable(Table, Protocol):
    """A table of images: ``images`` is (N, H, W, C) float32 in [0, 1]."""

    @property
    def images(self) -> np.ndarray: ...


def missing_field(where: str, name: str, columns: Sequence[str]) -> DataError:
    """The error for a field no row has: the columns there are and the closest one."""
    names = [str(c) for c in columns]
    if not names:
        return DataError(f"{where}: field '{name}' is missing (the data has no columns)")
    listed = ", ".join(names[:_MAX_LISTED])
    if len(names) > _MAX_LISTED:
        listed += f", ... ({len(names) - _MAX_LISTED} more)"
    return DataError(
        f"{where}: field '{name}' is missing (columns: {listed}{did_you_mean(name, names)})"
    )


def plain_value(v: Any) -> Any:
    """A value as a writer takes it: numpy scalars as Python ones, NaN as a missing value."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    return v


def hash_path(path: str | os.PathLike) -> str:
    """sha256 (16 hex digits) of a file's bytes, or of every file under a folder."""
    h = hashlib.sha256()
    p = Path(path)
    files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
    for f in files:
        if f is not p:
            h.update(str(f.relative_to(p)).encode() + b"\0")
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


class BaseTable:
    """Most of :class:`Table` for a format's class. A subclass implements ``__len__``,
    ``values(name)`` (the raw values of a known field) and ``write_rows``, and sets
    ``suffix`` (of its output files; ``""`` for a folder). ``register_format`` sets ``format``.
    """

    format: ClassVar[str] = ""
    suffix: ClassVar[str] = ""
    # the rows are written as a folder that carries the set's card as README.md (a Hugging
    # Face dataset folder: the Hub shows its README as the data set card)
    readme: ClassVar[bool] = False

    def __init__(self, path: str, fieldnames: Sequence[str]) -> None:
        self.path = path
        self.fieldnames = list(fieldnames)
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def columns(self) -> list[str]:
        return list(self.fieldnames)

    def where(self, i: int) -> str:
        return f"{self.path}: row {i + 1}"

    def missing_where(self) -> str:
        """Where a field that no row has is reported (the file, by default)."""
        return self.path

    def values(self, name: str) -> list[Any]:
        """The raw values of ``name``, one of ``fieldnames``."""
        raise NotImplementedError

    def raw_values(self, name: str) -> list[Any]:
        """The values of ``name`` with None where a row lacks it (subsets, hashes)."""
        return self.values(name)

    def column(self, name: str) -> list[Any]:
        if name not in self.fieldnames:
            raise missing_field(self.missing_where(), name, self.fieldnames)
        out = self.values(name)
        for i, v in enumerate(out):
            if v is None or (isinstance(v, float) and v != v):
                raise DataError(f"{self.where(i)}: field '{name}' is empty")
        return out

    def text_column(self, name: str) -> list[str]:
        values = self.column(name)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise DataError(f"{self.where(i)}: field '{name}' is not text ({v!r})")
            if not v.strip():
                raise DataError(f"{self.where(i)}: field '{name}' is empty")
        return values

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = self.content_hash()
        return self._fingerprint

    def content_hash(self) -> str:
        """The fingerprint, computed (once, by :meth:`fingerprint`); the input's bytes by
        default."""
        return hash_path(self.path)

    def output_name(self, stem: str) -> str:
        return stem + self.suffix

    def write_subset(
        self,
        target: str | os.PathLike,
        indices: Sequence[int] | np.ndarray,
        extra: dict[str, Sequence[Any]] | None = None,
    ) -> Path:
        """Write the rows at ``indices`` (in that order), untouched, plus ``extra`` columns,
        atomically (:meth:`write_rows`); return the path written."""
        target = Path(target)
        self.write_rows(target, np.asarray(indices, dtype=np.int64), dict(extra or {}))
        return target

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        """Write ``rows`` (row numbers, in order) to ``target`` in this table's format, each
        with the ``extra`` columns beside its own (an input column of the same name is
        replaced), atomically (:func:`aflite.io.atomic_path`)."""
        raise NotImplementedError


class RowsTable(BaseTable):
    """A table held as a list of dicts, with the 1-based line each row starts on (text
    formats). A row may lack a field another row has; that row's error names its line."""

    def __init__(
        self,
        path: str,
        rows: list[dict[str, Any]],
        line_numbers: list[int],
        fieldnames: Sequence[str],
    ) -> None:
        super().__init__(path, fieldnames)
        self._rows = rows
        self._lines = line_numbers

    def __len__(self) -> int:
        return len(self._rows)

    def where(self, i: int) -> str:
        return f"{self.path}:{self._lines[i]}"

    def values(self, name: str) -> list[Any]:
        out = []
        for i, row in enumerate(self._rows):
            if name not in row:
                raise DataError(f"{self.where(i)}: field '{name}' is missing")
            out.append(row[name])
        return out

    def raw_values(self, name: str) -> list[Any]:
        return [row.get(name) for row in self._rows]

    def rows_with(
        self, indices: np.ndarray, extra: dict[str, Sequence[Any]]
    ) -> Iterator[dict[str, Any]]:
        """Copies of the rows at ``indices``, one at a time, with the ``extra`` columns set."""
        for j, i in enumerate(indices):
            row = dict(self._rows[i])
            for k, v in extra.items():
                row[k] = plain_value(v[j])
            yield row
