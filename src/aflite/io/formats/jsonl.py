"""JSON Lines: one JSON object per line; rows are written back as they were read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.base import RowsTable
from aflite.io.registry import ReadOptions, register_format

__all__ = ["JsonLinesTable"]


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return obj


def _dumps(row: dict[str, Any]) -> bytes:
    line = json.dumps(row, ensure_ascii=False) + "\n"
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate (valid as a JSON escape) has no UTF-8 form: keep it escaped
        return (json.dumps(row) + "\n").encode("ascii")


@register_format("jsonl", suffixes=(".jsonl", ".json", ".ndjson"), description="JSON Lines")
class JsonLinesTable(RowsTable):
    """Rows of a JSON Lines file; ``where(i)`` is ``file:LINE``."""

    suffix = ".jsonl"

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> JsonLinesTable:
        rows, lines, names = [], [], {}
        with open(path, encoding="utf-8-sig") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    # without its newline: a line cut short fails at its end, not at "column 1"
                    # of the next line the newline would start
                    obj = json.loads(line.rstrip("\r\n"), object_pairs_hook=_unique_keys)
                except json.JSONDecodeError as e:
                    raise DataError(
                        f"{path}:{lineno}: malformed JSON ({e.msg}, column {e.pos + 1})"
                    ) from None
                except _DuplicateKey as e:
                    raise DataError(f"{path}:{lineno}: field '{e.args[0]}' appears twice") from None
                if not isinstance(obj, dict):
                    raise DataError(
                        f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}"
                    )
                rows.append(obj)
                lines.append(lineno)
                names.update(dict.fromkeys(obj))
        if not rows:
            raise DataError(f"{path}: no rows")
        return cls(path, rows, lines, list(names))

    def missing_where(self) -> str:
        # no header: a field no row has is missing from the first row
        return self.where(0)

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        with atomic_path(target) as tmp, tmp.open("wb") as fh:
            for row in self.rows_with(rows, extra):
                fh.write(_dumps(row))
