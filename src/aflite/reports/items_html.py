"""Multiple-choice items on the report page: each example item whole, its context and every
choice, the right one marked, with the item's predictability score."""

from __future__ import annotations

from aflite.reports.data import ItemExample, ItemExamples
from aflite.reports.markup import esc

__all__ = ["ITEMS_CSS", "RIGHT_MARK", "item_html", "items_html"]

RIGHT_MARK = "\u2713"  # ✓ before the right choice, which is also bold

ITEMS_CSS = """
.item{border:1px solid #dde;border-radius:6px;padding:.5em .9em;margin:.6em 0}
.item .ctx{margin:.2em 0}.item ol{margin:.2em 0;padding-left:1.6em}
.item li.right{font-weight:700;color:#1d5f2a}.item li .mark{display:inline-block;width:1.2em}
"""


def item_html(item: ItemExample) -> str:
    """One item: a line with its id and score, its context, then its choices in order, the
    right one bold and marked; every text escaped."""
    head = f"predictability score {item.score:.3f}"
    if item.id is not None:
        head = f"id {item.id} \u00b7 {head}"
    parts = [f"<div class='item'><div class='muted'>{esc(head)}</div>"]
    if item.context is not None:
        parts.append(f"<p class='ctx'>{esc(item.context)}</p>")
    choices = []
    for j, text in enumerate(item.choices):
        if j == item.answer:
            choices.append(
                f"<li class='right'><span class='mark' title='the right choice'>{RIGHT_MARK}"
                f"</span><b>{esc(text)}</b></li>"
            )
        else:
            choices.append(f"<li><span class='mark'></span>{esc(text)}</li>")
    parts.append(f"<ol>{''.join(choices)}</ol></div>")
    return "".join(parts)


def items_html(examples: ItemExamples | None) -> list[str]:
    """The sections of example items: the most predictable removed, the least predictable
    kept."""
    if examples is None:
        return []
    out = []
    for title, chosen in (
        ("Most predictable removed items", examples.removed),
        ("Least predictable kept items", examples.kept),
    ):
        if chosen:
            out.append(f"<h2>{title}</h2>")
            out.append(
                f"<p class='muted'>Each item with its context and every choice; the right "
                f"choice is marked {RIGHT_MARK} and bold.</p>"
            )
            out += [item_html(e) for e in chosen]
    return out
