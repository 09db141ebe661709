"""Data a caller already holds -- a pandas DataFrame, a Hugging Face ``Dataset`` (or one split
of a ``DatasetDict``), a list of dicts -- as a :class:`~aflite.io.base.Table`, so that every
check a file gets (a missing field with the closest column, an empty value, ``where(i)``)
reads the same for them: ``DataFrame: row 4``, ``Dataset: row 4``, ``data: row 4``. A
DataFrame's row is named by its index label, as ``df.loc`` finds it (``DataFrame: row 4`` under
the default index, ``DataFrame: row 'r4' (position 4)`` under another); the other two count
rows from 1, as files do.

Each table also has ``subset(rows)``: those rows in the caller's own type (DataFrame rows
keep their index, a Dataset is ``select``-ed, a list of dicts stays a list of the same dicts).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.io.base import BaseTable, RowsTable, Table
from aflite.io.formats.hf import HFDatasetTable, choose_split

__all__ = [
    "MemoryTable",
    "FrameTable",
    "DatasetTable",
    "DictRowsTable",
    "as_table",
    "memory_table",
]


def _hash_values(table: BaseTable) -> str:
    """A content hash of an in-memory table: its columns' values as JSON text."""
    h = hashlib.sha256()
    for name in table.fieldnames:
        h.update(name.encode("utf-8", "surrogatepass") + b"\0")
        text = json.dumps(table.raw_values(name), default=str, ensure_ascii=True)
        h.update(text.encode())
    return h.hexdigest()[:16]


class MemoryTable(BaseTable):
    """What the in-memory tables share: no file to write to or to hash."""

    def content_hash(self) -> str:
        return _hash_values(self)

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        raise DataError(f"{self.path}: in-memory data has no file format to write rows in")

    def subset(self, rows: Sequence[int] | np.ndarray) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class FrameTable(MemoryTable):
    """A pandas DataFrame; ``pd.NA`` / ``NaT`` / NaN are empty values."""

    def __init__(self, frame: Any, path: str = "DataFrame") -> None:
        names = [str(c) for c in frame.columns]
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise DataError(f"{path}: field '{dup}' appears twice in the header")
        super().__init__(path, names)
        self._frame = frame
        self._by_name = dict(zip(names, frame.columns))

    def __len__(self) -> int:
        return len(self._frame)

    def values(self, name: str) -> list[Any]:
        import pandas as pd

        out = self._frame[self._by_name[name]].tolist()
        return [None if (v is pd.NA or v is pd.NaT) else v for v in out]

    def where(self, i: int) -> str:
        # the index label, which df.loc finds; "row 5" for position 4 would send a reader
        # of df to the wrong row
        label = self._frame.index[i]
        if isinstance(label, (int, np.integer)) and not isinstance(label, bool) and label == i:
            return f"{self.path}: row {i}"
        shown = f"'{label}'" if isinstance(label, str) else str(label)
        return f"{self.path}: row {shown} (position {i})"

    def subset(self, rows: Sequence[int] | np.ndarray) -> Any:
        return self._frame.iloc[np.asarray(rows, dtype=np.int64)]


class DatasetTable(HFDatasetTable, MemoryTable):
    """A Hugging Face ``datasets.Dataset`` held in memory (a split chosen by the caller): the
    hf format's table, with no folder to write rows to."""

    def __init__(self, dataset: Any, path: str = "Dataset", split: str | None = None) -> None:
        super().__init__(path, dataset, split)

    write_subset = MemoryTable.write_subset

    def subset(self, rows: Sequence[int] | np.ndarray) -> Any:
        return self._ds.select(np.asarray(rows, dtype=np.int64).tolist())


class DictRowsTable(RowsTable, MemoryTable):
    """A list of dicts, one per row; a row may lack a field another row has."""

    def __init__(self, rows: list[dict[str, Any]], path: str = "data") -> None:
        names: dict[str, None] = {}
        for r in rows:
            names.update(dict.fromkeys(str(k) for k in r))
        super().__init__(path, rows, list(range(1, len(rows) + 1)), list(names))

    def where(self, i: int) -> str:
        return f"{self.path}: row {i + 1}"

    def subset(self, rows: Sequence[int] | np.ndarray) -> Any:
        return [self._rows[i] for i in np.asarray(rows, dtype=np.int64)]


def memory_table(data: Any, *, split: str | None = None) -> MemoryTable:
    """``data`` (a DataFrame, a Dataset, a DatasetDict with ``split``, a list of dicts) as a
    table; anything else is a one-line DataError naming what can be passed."""
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas" and hasattr(data, "iloc") and hasattr(data, "columns"):
        table: MemoryTable = FrameTable(data)
    elif mod == "datasets" and hasattr(data, "column_names"):
        where = "Dataset" if hasattr(data, "select") else "DatasetDict"
        table = DatasetTable(choose_split(data, split, where), split=split)
    elif isinstance(data, Sequence) and not isinstance(data, (bytes, str)):
        rows = list(data)
        bad = next((i for i, r in enumerate(rows) if not isinstance(r, dict)), None)
        if bad is not None:
            raise DataError(
                f"data: row {bad + 1}: expected a dict per row, got {type(rows[bad]).__name__}"
            )
        table = DictRowsTable(rows)
    else:
        raise DataError(
            f"data: cannot read a {type(data).__name__}; pass a pandas DataFrame, a Hugging "
            "Face Dataset, a list of dicts or a file path"
        )
    if len(table) == 0:
        raise DataError(f"{table.path}: no rows")
    return table


def as_table(data: Any, *, split: str | None = None, input_format: str | None = None) -> Table:
    """``data`` as a :class:`~aflite.io.base.Table`: a path through the format registry
    (:func:`aflite.io.registry.read_table`), a Table as it is, data in memory through
    :func:`memory_table`."""
    if not isinstance(data, (str, os.PathLike)):
        if isinstance(data, Table) and not isinstance(data, (list, tuple)):
            return data
        return memory_table(data, split=split)
    from aflite.io.registry import read_table

    return read_table(data, input_format, split=split)
