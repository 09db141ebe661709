"""Input texts as a report holds them: a long one cut short, with its length and where the whole
text is, so that neither ``report.html`` nor ``result/report_extra.json`` grows with the length
of what a data set's rows say."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_TEXT_CHARS", "shorten", "shorten_all"]

# A report copies input texts into the page and its data (example rows and items, every row of
# the table, n-grams, ids, labels): one 10 MB text would make a 10 MB page. A reader needs the
# start of a text to recognise it; the whole text stays in the run's row files (kept /
# removed), which the note after the cut points at by the row's id.
MAX_TEXT_CHARS = 300


def shorten(value: Any, where: str = "") -> Any:
    """``value`` as it is, unless it is a string longer than :data:`MAX_TEXT_CHARS`: then its
    start, an ellipsis, its length and ``where`` the whole text is, e.g.
    ``… (10,000,000 characters; full text in removed.jsonl, id 7)``, in
    :data:`MAX_TEXT_CHARS` characters in all."""
    if not isinstance(value, str) or len(value) <= MAX_TEXT_CHARS:
        return value
    note = f"\u2026 ({len(value):,} characters; full text in {where})"
    if not where or len(note) > MAX_TEXT_CHARS // 2:  # a pointer as long as the text says little
        note = f"\u2026 ({len(value):,} characters)"
    # the note counts against the limit, so a shortened text is never shortened again
    return value[: MAX_TEXT_CHARS - len(note)] + note


def shorten_all(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every long string in it, dict
    keys included, shortened without a pointer."""
    if isinstance(value, str):
        return shorten(value)
    if isinstance(value, dict):
        return {shorten(k): shorten_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shorten_all(v) for v in value]
    return value
