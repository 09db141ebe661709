"""CSV and TSV: one class for delimited text with a header row, values read as strings."""

from __future__ import annotations

import contextlib
import csv
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.base import RowsTable
from aflite.io.registry import ReadOptions, register_format

__all__ = ["DelimitedTable", "CsvTable", "TsvTable"]


@contextlib.contextmanager
def _no_field_limit() -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _check_header(where: str, names: Sequence[str]) -> None:
    """Every field named once (a csv reader would silently keep only the last of two)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(f"{where}: field '{name}' appears twice in the header")
        seen.add(name)


def _line_ending(path: str) -> str:
    """The line ending of the file's first line: ``\r\n``, ``\n`` or ``\r``."""
    with open(path, "rb") as fh:
        first = fh.readline()
    if first.endswith(b"\r\n"):
        return "\r\n"
    if b"\r" in first and not first.endswith(b"\n"):
        return "\r"
    return "\n"


class DelimitedTable(RowsTable):
    """Rows of a delimited text file; a subclass sets ``delimiter`` and ``suffix``."""

    delimiter: ClassVar[str] = ","
    # rows are written back with the input's line ending (csv's own default is \r\n)
    line_ending: str = "\n"

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> DelimitedTable:
        rows, lines = [], []
        # a BOM is not part of the first field's name; fields may be longer than csv's default
        with open(path, newline="", encoding="utf-8-sig") as fh, _no_field_limit():
            reader = csv.DictReader(fh, delimiter=cls.delimiter)
            try:
                if not reader.fieldnames:
                    raise DataError(f"{path}: no header row")
                _check_header(f"{path}:1", reader.fieldnames)
                for row in reader:
                    if None in row:
                        raise DataError(f"{path}:{reader.line_num}: more values than header fields")
                    # DictReader fills a short row with None: those fields are missing
                    rows.append({k: v for k, v in row.items() if v is not None})
                    lines.append(reader.line_num)
            except csv.Error as e:
                raise DataError(
                    f"{path}:{reader.line_num}: malformed {cls.format.upper()} ({e})"
                ) from None
            names = list(reader.fieldnames)
        if not rows:
            raise DataError(f"{path}: no rows")
        table = cls(path, rows, lines, names)
        table.line_ending = _line_ending(path)
        return table

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        names = self.fieldnames + [k for k in extra if k not in self.fieldnames]
        with atomic_path(target) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(
                fh, fieldnames=names, delimiter=self.delimiter, lineterminator=self.line_ending
            )
            w.writeheader()
            w.writerows(self.rows_with(rows, extra))


@register_format("csv", suffixes=(".csv",), description="CSV")
class CsvTable(DelimitedTable):
    delimiter = ","
    suffix = ".csv"


@register_format("tsv", suffixes=(".tsv",), description="TSV")
class TsvTable(DelimitedTable):
    delimiter = "\t"
    suffix = ".tsv"
