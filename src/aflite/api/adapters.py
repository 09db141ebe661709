"""The data a user already has -- a pandas DataFrame, a Hugging Face ``Dataset``, a list of
dicts or a path -- seen as columns, and subsets of it handed back in the same type."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = ["DataView", "as_view"]


class DataView:
    """Columns of the caller's data (``column``), its size, and ``subset(rows)`` in the same
    type as the data: DataFrame rows keep their index, a Dataset is ``select``-ed, a list of
    dicts or a file gives a list of dicts."""

    def __init__(self, data: Any, kind: str, columns: list[str], n: int, where: str) -> None:
        self.data, self.kind, self.columns, self.n, self.where = data, kind, columns, n, where

    def __len__(self) -> int:
        return self.n

    def column(self, name: str, role: str = "field") -> list[Any]:
        if name not in self.columns:
            close = difflib.get_close_matches(name, self.columns, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise DataError(
                f"{self.where}: {role} '{name}' is missing (columns: {', '.join(self.columns)}){hint}"
            )
        if self.kind == "pandas":
            return self.data[name].tolist()
        if self.kind == "hf":
            return list(self.data[name])
        if self.kind == "table":
            return list(self.data.column(name))
        return [row.get(name) for row in self.data]

    def text_column(self, name: str) -> list[str]:
        values = self.column(name, "text field")
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise DataError(f"{self.where}: row {i + 1}: text field '{name}' is not a string")
        return values

    def subset(self, rows: np.ndarray) -> Any:
        rows = np.asarray(rows, dtype=np.int64)
        if self.kind == "pandas":
            return self.data.iloc[rows]
        if self.kind == "hf":
            return self.data.select(rows.tolist())
        if self.kind == "table":
            cols = {c: self.data.column(c) for c in self.columns}
            return [{c: cols[c][i] for c in self.columns} for i in rows]
        return [self.data[i] for i in rows]

    def string_columns(self) -> list[str]:
        """Columns whose first rows are all strings (candidates for the text field)."""
        out = []
        for c in self.columns:
            head = self.column(c)[:50]
            if head and all(isinstance(v, str) for v in head):
                out.append(c)
        return out


def as_view(data: Any, *, split: str | None = None) -> DataView:
    """Wrap ``data`` (DataFrame, Dataset, list of dicts, or a path that ``aflite filter`` reads)."""
    if isinstance(data, (str, os.PathLike)):
        from aflite.io import read_table

        table = read_table(str(data), split=split)
        cols = list(table.fieldnames)
        return DataView(table, "table", cols, len(table), str(data))
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas" and hasattr(data, "iloc"):
        return DataView(data, "pandas", [str(c) for c in data.columns], len(data), "DataFrame")
    if mod == "datasets":
        if hasattr(data, "keys") and not hasattr(data, "select"):  # a DatasetDict
            if split is None or split not in data:
                raise DataError(
                    f"DatasetDict: choose a split with split= ({', '.join(data.keys())})"
                )
            data = data[split]
        return DataView(data, "hf", list(data.column_names), len(data), "Dataset")
    if isinstance(data, Sequence) and not isinstance(data, (bytes, str)):
        if not all(isinstance(r, dict) for r in data):
            raise DataError("data: a list must hold one dict per row")
        cols: list[str] = []
        for r in data:
            cols.extend(k for k in r if k not in cols)
        return DataView(list(data), "rows", cols, len(data), "data")
    raise DataError(
        f"data: cannot read a {type(data).__name__}; pass a pandas DataFrame, a Hugging Face "
        "Dataset, a list of dicts or a file path"
    )
