"""Row ids: one scalar per row, unique, and unique once written as text.

Outputs (``scores.parquet``, precomputed features aligned by id) hold ids as text, so ``2``
and ``"2"`` would become the same id there; such a file is refused as ambiguous.
"""

from __future__ import annotations

from typing import Any, Protocol

from aflite.errors import DataError

__all__ = ["read_ids", "check_ids"]


class _Rows(Protocol):
    def column(self, name: str) -> list[Any]: ...

    def where(self, i: int) -> str: ...


def _kind(v: Any) -> str | None:
    """Why ``v`` is not an id, or None when it is one."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (str, int)):
        return None
    if isinstance(v, float):
        return None if v == v and abs(v) != float("inf") else "not a number"
    if isinstance(v, (list, tuple)):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return f"a {type(v).__name__}"


def check_ids(values: list[Any], field: str, where: Any) -> list[Any]:
    """Check ``values`` (``where(i)`` names row i) and return them unchanged.

    Every problem is a one-line :class:`DataError` naming the row and the field.
    """
    first: dict[str, int] = {}
    for i, v in enumerate(values):
        bad = _kind(v)
        if bad is not None:
            raise DataError(f"{where(i)}: field '{field}' is not an id ({bad}: {_short(v)})")
        key = str(v)
        j = first.get(key)
        if j is None:
            first[key] = i
            continue
        at = where(j)
        at = at.split(":", 1)[1].strip() if ":" in at else at
        if values[j] == v and type(values[j]) is type(v):
            raise DataError(f"{where(i)}: field '{field}' duplicates id {v!r} (first at {at})")
        raise DataError(
            f"{where(i)}: field '{field}' has ambiguous ids {v!r} and {values[j]!r} "
            f"(first at {at}); they are the same id as text"
        )
    return values


def read_ids(table: _Rows, field: str) -> list[Any]:
    """The id column of a data set (any :class:`~aflite.io.base.Table`)."""
    return check_ids(table.column(field), field, table.where)


def _short(v: Any, limit: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."
