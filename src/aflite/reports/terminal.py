"""Audit results and PMI queries as text for the terminal.

Everything that comes from data (cells, summaries, sentences) is shown literally: rich markup
such as ``[red]`` is not interpreted, and control characters (escape sequences, carriage
returns, bidirectional overrides) are written as visible escapes, so a data set cannot restyle
or rewrite the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aflite._internal.text import printable
from aflite.audits.base import AuditResult
from aflite.audits.cooccurrence import Association, CooccurrenceCounts

__all__ = ["association_lines", "example_lines", "print_audits", "printable"]


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
    console = console or Console()
    pairs = zip(results, compare) if compare is not None else ((r, None) for r in results)
    for before, after in pairs:
        for res, label in ((before, "input"), (after, "compare")):
            if res is None:
                continue
            table = Table(title=Text(printable(res.name)), title_justify="left", show_lines=False)
            for h in res.header:
                table.add_column(Text(printable(h)))
            for row in res.rows[:max_rows]:
                table.add_row(*[Text(_fmt(v)) for v in row])
            console.print(table)
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
