"""Audit results as rich tables in the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from aflite.audits.base import AuditResult

__all__ = ["print_audits"]


def _fmt(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def print_audits(
    results: Sequence[AuditResult],
    compare: Sequence[AuditResult] | None = None,
    *,
    console: Console | None = None,
    max_rows: int = 30,
) -> None:
    """One table per audit; with ``compare``, the second data set's summary and table follow."""
    console = console or Console()
    pairs = zip(results, compare) if compare is not None else ((r, None) for r in results)
    for before, after in pairs:
        for res, label in ((before, "input"), (after, "compare")):
            if res is None:
                continue
            table = Table(title=f"{res.name}", title_justify="left", show_lines=False)
            for h in res.header:
                table.add_column(h)
            for row in res.rows[:max_rows]:
                table.add_row(*[_fmt(v) for v in row])
            console.print(table)
            prefix = f"[bold]{label}:[/bold] " if compare is not None else ""
            console.print(f"{prefix}{res.summary}\n", highlight=False, markup=True)
