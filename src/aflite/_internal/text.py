"""Data shown as plain text: control and format characters become visible escapes."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence

__all__ = ["did_you_mean", "is_number", "printable", "one_line", "plot_text", "plural", "word_list"]

_UNSAFE = {"Cc", "Cf", "Zl", "Zp"}


def printable(value: object) -> str:
    """``str(value)`` with control and format characters replaced by ``\\x..`` escapes."""
    s = str(value)
    if s.isprintable():
        return s
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in _UNSAFE else ch
        for ch in s
    )


def one_line(value: object) -> str:
    """:func:`printable` with line breaks shown as spaces (for one-line messages)."""
    return printable(" ".join(str(value).splitlines()))


def plot_text(value: object) -> str:
    """A data value as a matplotlib label: one line, and ``$`` escaped so that it is drawn as
    written, never parsed as mathtext."""
    return one_line(value).replace("$", r"\$")


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 phase``, ``2 phases``; ``nouns`` for an irregular plural."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def word_list(words: list[str], limit: int = 60) -> str:
    """Words joined by ", ", as many whole words as fit in ``limit`` characters (at least one);
    the rest counted, never cut mid-word: ``nobody, sleeping (+3 more)``."""
    out: list[str] = []
    size = 0
    for w in words:
        extra = len(w) + (2 if out else 0)
        if out and size + extra > limit:
            break
        out.append(w)
        size += extra
    left = len(words) - len(out)
    return ", ".join(out) + (f" (+{left} more)" if left else "")


def did_you_mean(name: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or ``""``."""
    names = [str(c) for c in choices]
    folded = {c.casefold(): c for c in names}
    match = folded.get(name.casefold())
    if match is None:
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        match = close[0] if close else None
    return f"; did you mean '{match}'?" if match is not None else ""


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a number (``"3"``, ``"0.5"``, ``"nan"``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
