"""The export formats by name, and the one entry point that writes any of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aflite._internal.atomic import atomic_path
from aflite._internal.registry import Entry, Registry
from aflite.errors import DataError
from aflite.exports.rows import ROW_SETS, load_review_rows

__all__ = ["Exporter", "EXPORTERS", "register_exporter", "export_run", "default_export_names"]


@dataclass(frozen=True)
class Exporter(Entry):
    """A registered export format: ``target(rows, text field names, target file) -> None``
    (the file is written atomically around it) and the suffix of its files."""

    suffix: str = ""


EXPORTERS: Registry[Exporter] = Registry("exporter", what="format", entry=Exporter)
register_exporter = EXPORTERS.register
"""Register ``write(rows, fields, path)`` as an export format
(``@register_exporter("name", suffix=".json", description=...)``)."""


def export_run(
    out_dir: str | Path,
    to: str,
    *,
    rows: str = "removed",
    output: str | Path | None = None,
    fields: list[str] | str | None = None,
) -> tuple[Path, int]:
    """Write a filter run's removed (or all) rows in the format ``to``; returns the file and
    the number of rows written. Default file: ``OUT/export-<format>-<rows><suffix>``.
    ``fields``: the text fields to carry (a list, or one comma-separated string); by default
    those filtered on and then the input's other text columns, so a reviewer sees a
    hypothesis with its premise."""
    exporter = EXPORTERS.lookup(to, flag="--to")
    if rows not in ROW_SETS:
        raise DataError(f"--rows: must be one of {', '.join(ROW_SETS)}, got '{rows}'")
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",") if f.strip()]
    if fields is not None and not fields:
        raise DataError("--fields: no field named; leave the option out for the default fields")
    picked, fields = load_review_rows(out_dir, rows=rows, fields=fields)
    target = Path(output) if output is not None else Path(out_dir) / _default_name(exporter, rows)
    with atomic_path(target) as tmp:
        exporter.target(picked, fields, Path(tmp))
    return target, len(picked)


def _default_name(exporter: Exporter, rows: str) -> str:
    return f"export-{exporter.name}-{rows}{exporter.suffix}"


def default_export_names() -> set[str]:
    """The names ``aflite export`` gives its files in a run's folder when no ``--output`` is
    given (one per format and row set): outputs of that run, which ``--overwrite`` replaces."""
    return {_default_name(EXPORTERS[n], rows) for n in EXPORTERS.names() for rows in ROW_SETS}
