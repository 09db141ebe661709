"""Parquet: an Arrow table; subsets keep the schema (types, metadata) of the input."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.base import BaseTable, plain_value
from aflite.io.registry import ReadOptions, register_format

__all__ = ["ParquetTable"]


@register_format("parquet", suffixes=(".parquet", ".pq"), description="Parquet")
class ParquetTable(BaseTable):
    """Rows of a Parquet file (held as a ``pyarrow.Table``)."""

    suffix = ".parquet"

    def __init__(self, path: str, arrow: Any) -> None:
        super().__init__(path, arrow.column_names)
        self._arrow = arrow

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> ParquetTable:
        import pyarrow.parquet as pq

        try:
            tbl = pq.read_table(path)
        except Exception as e:  # pyarrow raises several types for corrupt files
            raise DataError(f"{path}: not a readable Parquet file ({type(e).__name__})") from None
        if tbl.num_rows == 0:
            raise DataError(f"{path}: no rows")
        names = tbl.column_names
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise DataError(f"{path}: field '{dup}' appears twice in the header")
        return cls(path, tbl)

    def __len__(self) -> int:
        return self._arrow.num_rows

    def values(self, name: str) -> list[Any]:
        return self._arrow.column(name).to_pylist()

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        sub = self._arrow.take(pa.array(rows, type=pa.int64()))
        for k, v in extra.items():
            col = pa.array([plain_value(x) for x in v])
            if k in sub.column_names:  # an input column of the same name is replaced
                sub = sub.set_column(sub.column_names.index(k), k, col)
            else:
                sub = sub.append_column(k, col)
        with atomic_path(target) as tmp:
            pq.write_table(sub, tmp)
