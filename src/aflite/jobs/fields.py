"""Fields a job picks by itself when the command line leaves them out: the only text column
as ``--text-fields``, and a column named ``id`` as ``--id-field``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aflite.errors import DataError

if TYPE_CHECKING:
    from aflite.io.tables import Table
    from aflite.jobs.config import FilterJob

__all__ = ["pick_id_field", "pick_text_field", "picked_note", "text_columns", "NO_ID", "ID_COLUMN"]

NO_ID = "none"  # --id-field none: number the rows, even where a column is named id
ID_COLUMN = "id"
_SAMPLE = 1000  # rows looked at per column; the picked column is read and checked in full


def _values(table: Table, name: str) -> list[Any] | None:
    """Raw values of a column, None where some row lacks it."""
    try:
        values = getattr(table, "values", None)
        return list(values(name) if values is not None else table.column(name))
    except DataError:
        return None


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def text_columns(table: Table, exclude: set[str]) -> list[str]:
    """Columns (outside ``exclude``) of strings that are not all numbers: CSV keeps every value
    as a string, so a column of digits there is not text."""
    out = []
    for name in table.columns:
        if name in exclude:
            continue
        values = _values(table, name)
        if values is None:
            out.append(name)  # rows lack it: a candidate, so a pick is never a guess
            continue
        sample = [v for v in values[:_SAMPLE] if v is not None and v == v]
        if sample and all(isinstance(v, str) for v in sample):
            if not all(_is_number(v) for v in sample):
                out.append(name)
    return out


def pick_id_field(job: FilterJob, table: Table) -> str | None:
    """A column named ``id`` where ``job.id_field`` was left out, else None."""
    if job.id_field is None and ID_COLUMN in table.columns and ID_COLUMN != job.label_field:
        return ID_COLUMN
    return None


def pick_text_field(job: FilterJob, table: Table) -> tuple[str, ...] | None:
    """The only text column outside the label, id and group fields where
    ``job.text_fields`` was left out, else None. No such column, or several, is a
    DataError listing them."""
    if job.text_fields:
        return None
    skip = {job.label_field, job.id_field, job.group_field, ID_COLUMN} - {None}
    found = text_columns(table, skip)  # type: ignore[arg-type]
    if len(found) == 1:
        return tuple(found)
    if found:
        raise DataError(
            f"{job.input}: several text columns ({', '.join(found)}); name the ones to use "
            f"with --text-fields, e.g. --text-fields {','.join(found[:2])}"
        )
    raise DataError(
        f"{job.input}: no text column besides the label, id and group fields (columns: "
        f"{', '.join(map(str, table.columns))}); name one with --text-fields"
    )


def picked_note(job: FilterJob, picked: list[str]) -> str:
    """One line for the run's summary text, or "" when nothing was picked."""
    parts = []
    if "text" in picked:
        parts.append(f"text field {', '.join(job.text_fields)} (the only text column)")
    if "id" in picked:
        parts.append(f"id field {job.id_field} (a column named {ID_COLUMN})")
    if not parts:
        return ""
    return "picked " + " and ".join(parts) + "; name others with --text-fields / --id-field"
