"""Audit results and PMI queries as text for the terminal.

Everything that comes from data (cells, summaries, sentences) is shown literally: rich markup
such as ``[red]`` is not interpreted, and control characters (escape sequences, carriage
returns, bidirectional overrides) are written as visible escapes, so a data set cannot restyle
or rewrite the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from aflite._internal.text import printable
from aflite.audits.base import AuditResult

if TYPE_CHECKING:  # scipy: not loaded before a command has read its data
    from aflite.audits.cooccurrence import Association, CooccurrenceCounts

__all__ = [
    "association_lines",
    "example_lines",
    "output_console",
    "print_audits",
    "print_table",
    "printable",
]


def output_console() -> Console:
    """A console on stdout that wraps lines at the terminal's width on a terminal only: in a
    file or a pipe a sentence stays on one line, so grep finds it whole."""
    console = Console()
    console.soft_wrap = not console.is_terminal
    return console


def print_table(
    title: str,
    header: Sequence[object],
    rows: Sequence[Sequence[object]],
    *,
    console: Console | None = None,
) -> None:
    """A table whose cells are never cut: a rich table on a terminal wide enough for every
    cell, aligned plain text when the output is not a terminal (a file, a pipe), and one
    ``header: value`` line per cell on a terminal too narrow for the columns.

    Cells are shown literally (:func:`printable`); floats with three decimals.
    """
    console = console or output_console()
    head = [printable(h) for h in header]
    body = [[_fmt(v) for v in r] for r in rows]
    widths = [
        max([cell_len(h)] + [cell_len(r[i]) for r in body if i < len(r)])
        for i, h in enumerate(head)
    ]
    title = printable(title)
    if not console.is_terminal:
        # no width to fit: columns as wide as their widest cell, lines as long as they get
        def line(cells: Sequence[str]) -> str:
            return "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(cells, widths)).rstrip()

        lines = [title] if title else []
        lines += [line(head), "  ".join("-" * w for w in widths)]
        lines += [line(r) for r in body]
        for line in lines:
            console.print(Text(line), soft_wrap=True)
        return
    if sum(widths) + 3 * len(widths) + 1 <= console.width:
        table = Table(title=Text(title), title_justify="left")
        for h, w in zip(head, widths):
            table.add_column(Text(h), min_width=w, overflow="fold")
        for r in body:
            table.add_row(*[Text(c) for c in r])
        console.print(table)
        return
    # too narrow for columns: one block per row, one "header: value" line per cell
    if title:
        console.print(Text(title), soft_wrap=True)
    for r in body:
        console.print()
        for h, c in zip(head, r):
            if c:
                console.print(Text(f"{h}: {c}"), soft_wrap=True)


def _fmt(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, float) else printable(v)


def print_audits(
    results: Sequence[AuditResult],
    compare: Sequence[AuditResult] | None = None,
    *,
    console: Console | None = None,
    max_rows: int = 30,
) -> None:
    """One table per audit; with ``compare``, the second data set's summary and table follow.
    A ``note`` in an audit's details is printed under its summary."""
    console = console or output_console()
    pairs = zip(results, compare) if compare is not None else ((r, None) for r in results)
    for before, after in pairs:
        for res, label in ((before, "input"), (after, "compare")):
            if res is None:
                continue
            if res.rows:  # an audit that measured nothing says why in its summary
                print_table(res.name, res.header, res.rows[:max_rows], console=console)
            if len(res.rows) > max_rows:
                console.print(
                    Text(f"({max_rows} of {len(res.rows)} rows shown; --json writes all)")
                )
            line = Text()
            if compare is not None:
                line.append(f"{label}: ", style="bold")
            line.append(printable(res.summary))
            console.print(line)
            note = res.details.get("note") if isinstance(res.details, dict) else None
            if note:
                console.print(Text(printable(note), style="dim"))
            console.print()


def association_lines(
    counts: CooccurrenceCounts,
    term: str,
    tables: Mapping[str, Sequence[Association]],
    *,
    min_count: int | None = None,
) -> list[str]:
    """A query's result as plain text: one header line, then one table per n-gram kind with
    PMI, joint count (sentences holding both) and the n-gram's own count."""
    m = counts.min_count if min_count is None else min_count
    t = printable(" ".join(term.lower().split()))
    lines = [
        f"'{t}' in {printable(counts.name)}: count {counts.count(term):,}; min count {m}; "
        f"{counts.n_sentences:,} sentences; N = {counts.n_tokens:,} tokens"
    ]
    for kind, rows in tables.items():
        lines.append("")
        lines.append(f"top {len(rows)} {kind} by PMI (ties: joint count, then alphabetical)")
        lines.append(f"{'pmi':>7}  {'joint':>6}  {'count':>6}  {kind[:-1]}")
        lines += [f"{a.pmi:7.3f}  {a.joint:6d}  {a.count:6d}  {printable(a.ngram)}" for a in rows]
        if not rows:
            lines.append(f"(no {kind} co-occur with '{t}' at min count {m})")
    return lines


def example_lines(term: str, other: str, n_both: int, sentences: Sequence[str]) -> list[str]:
    """Example sentences for one association, each on one line, shown literally."""
    t, o = (printable(" ".join(x.lower().split())) for x in (term, other))
    if not n_both:
        return ["", f"no sentence holds both '{t}' and '{o}'"]
    head = f"sentences holding '{t}' and '{o}': {n_both:,}"
    if len(sentences) < n_both:
        head += f" (first {len(sentences)})"
    return ["", head] + [f"  {printable(s)}" for s in sentences]
