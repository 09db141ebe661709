"""The export formats by name, and the one entry point that writes any of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aflite._internal.atomic import atomic_path
from aflite._internal.registry import Entry, Registry
from aflite.errors import DataError
from aflite.exports.rows import ROW_SETS, load_review_rows

__all__ = ["Exporter", "EXPORTERS", "register_exporter", "export_run"]


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
    out_dir: str | Path, to: str, *, rows: str = "removed", output: str | Path | None = None
) -> tuple[Path, int]:
    """Write a filter run's removed (or all) rows in the format ``to``; returns the file and
    the number of rows written. Default file: ``OUT/export-<format>-<rows><suffix>``."""
    exporter = EXPORTERS.lookup(to, flag="--to")
    if rows not in ROW_SETS:
        raise DataError(f"--rows: must be one of {', '.join(ROW_SETS)}, got '{rows}'")
    picked, fields = load_review_rows(out_dir, rows=rows)
    target = (
        Path(output)
        if output is not None
        else Path(out_dir) / f"export-{to}-{rows}{exporter.suffix}"
    )
    with atomic_path(target) as tmp:
        exporter.target(picked, fields, Path(tmp))
    return target, len(picked)
