"""Data shown as plain text: control and format characters become visible escapes."""

from __future__ import annotations

import unicodedata

__all__ = ["printable", "one_line", "plot_text", "plural", "word_list"]

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


def word_list(words: list[str], width: int = 60) -> str:
    """``words`` joined by ``, `` up to about ``width`` characters, ending at a whole word
    (``, ...`` says more were left out); the first word is always shown whole."""
    shown: list[str] = []
    length = 0
    for w in words:
        extra = len(w) + (2 if shown else 0)
        if shown and length + extra > width:
            return ", ".join(shown) + ", ..."
        shown.append(w)
        length += extra
    return ", ".join(shown)
