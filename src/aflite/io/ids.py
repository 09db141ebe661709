"""Row ids: one scalar per row, unique, and unique once written as text.

Outputs (``scores.parquet``, precomputed features aligned by id) hold ids as text, so ``2``
and ``"2"`` would become the same id there; such a file is refused as ambiguous.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from aflite.errors import DataError

__all__ = ["ID_COLUMN", "NO_ID", "check_ids", "read_groups_and_ids", "read_ids"]

NO_ID = "none"  # id "none": number the rows, even where a column is named id
ID_COLUMN = "id"


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


def read_groups_and_ids(
    table: Any, label: str | None, id_field: str | None, group: str | None, pick: bool
) -> tuple[np.ndarray | None, str | None, list[Any], list[str]]:
    """The groups (as text), the id field (a column named ``id`` picked where none was named,
    with ``pick``), the checked ids (row numbers for no field, or ``"none"``), and ``["id"]``
    when it was picked."""
    # object, not fixed-width text: numpy would make every row as wide as the longest value
    # (one 1 MB premise among 6,000 rows: 22 GiB)
    groups = np.asarray([str(v) for v in table.column(group)], dtype=object) if group else None
    picked: list[str] = []
    if id_field is None and pick and ID_COLUMN in table.columns and ID_COLUMN != label:
        id_field, picked = ID_COLUMN, ["id"]
    if not id_field or id_field == NO_ID:
        return groups, id_field, list(range(len(table))), picked
    try:
        ids = check_ids(table.column(id_field), id_field, table.where)  # NaN, 2 vs "2"
    except DataError as e:
        if not picked:
            raise
        raise DataError(
            f"{e} (a column named id is used as the id field; id 'none' numbers the rows "
            "instead: --id-field none / id='none')"
        ) from None
    return groups, id_field, ids, picked


def _short(v: Any, limit: int = 40) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."
