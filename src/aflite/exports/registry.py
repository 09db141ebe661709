"""The export formats by name, and the one entry point that writes any of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.exports.rows import ROW_SETS, ReviewRow, load_review_rows

__all__ = ["Exporter", "EXPORTERS", "register_exporter", "export_run"]


@dataclass(frozen=True)
class Exporter:
    name: str
    suffix: str
    description: str
    # (rows, text field names, target file) -> None; the file is written atomically around it
    write: Callable[[list[ReviewRow], list[str], Path], None]


EXPORTERS: dict[str, Exporter] = {}


def register_exporter(name: str, *, suffix: str, description: str) -> Callable:
    """Register ``write(rows, fields, path)`` as the export format ``name``."""

    def wrap(fn: Callable[[list[ReviewRow], list[str], Path], None]) -> Callable:
        EXPORTERS[name] = Exporter(name, suffix, description, fn)
        return fn

    return wrap


def export_run(
    out_dir: str | Path, to: str, *, rows: str = "removed", output: str | Path | None = None
) -> tuple[Path, int]:
    """Write a filter run's removed (or all) rows in the format ``to``; returns the file and
    the number of rows written. Default file: ``OUT/export-<format>-<rows><suffix>``."""
    if to not in EXPORTERS:
        raise DataError(f"--to: unknown format '{to}'; choose one of {', '.join(EXPORTERS)}")
    if rows not in ROW_SETS:
        raise DataError(f"--rows: must be one of {', '.join(ROW_SETS)}, got '{rows}'")
    exporter = EXPORTERS[to]
    picked, fields = load_review_rows(out_dir, rows=rows)
    target = (
        Path(output)
        if output is not None
        else Path(out_dir) / f"export-{to}-{rows}{exporter.suffix}"
    )
    with atomic_path(target) as tmp:
        exporter.write(picked, fields, Path(tmp))
    return target, len(picked)
