"""Audits run before and after filtering, paired into one table per audit: rows matched by
their text columns (label, word, model, ...), a before and an after column per number."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AuditPair",
    "PairedTable",
    "audit_base",
    "audit_tag",
    "pair_audits",
    "paired_table",
    "MISSING",
]

MISSING = "–"  # a row only one of the two runs has
# the set an audit's result was measured on, as its name ends: filter runs tag theirs
# "before" / "kept", ``aflite audit --compare`` "input" / "compare"
_TAG = re.compile(r"^(.*) \((before|kept|input|compare)\)$")


@dataclass
class AuditPair:
    """One audit's result before filtering and on the kept rows (either may be None)."""

    name: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


@dataclass
class PairedTable:
    """``keys``: the columns rows are matched on; ``metrics``: the columns shown twice;
    ``rows``: (key values, [(before, after) per metric])."""

    keys: list[str]
    metrics: list[str]
    rows: list[tuple[list[Any], list[tuple[Any, Any]]]] = field(default_factory=list)


def audit_tag(audit: dict[str, Any]) -> tuple[str, str | None]:
    """(name without its tag, 'before' | 'kept' | None)."""
    name, tag = str(audit.get("name", "")), audit.get("tag")
    if tag in ("before", "kept"):
        return name.removesuffix(f" ({tag})"), tag
    m = _TAG.match(name)  # a report_extra.json written before results carried their tag
    return (m.group(1), m.group(2)) if m and m.group(2) in ("before", "kept") else (name, None)


def audit_base(name: str) -> str:
    """An audit result's name without the set it was measured on: the same audit's results on
    two sets share it."""
    m = _TAG.match(name)
    return m.group(1) if m else name


def pair_audits(audits: list[dict[str, Any]]) -> list[AuditPair]:
    """Before / kept results of the same audit side by side, in the order audits ran; a
    result with neither tag stands alone (as ``before``)."""
    pairs: dict[str, AuditPair] = {}
    for audit in audits:
        base, tag = audit_tag(audit)
        pair = pairs.setdefault(base, AuditPair(base))
        slot = "after" if tag == "kept" else "before"
        if getattr(pair, slot) is not None:  # the same name twice: keep both, separately
            pair = pairs.setdefault(f"{base} #{len(pairs)}", AuditPair(base))
        setattr(pair, slot, audit)
    return list(pairs.values())


def _table(audit: dict[str, Any] | None) -> tuple[list[str], list[list[Any]]]:
    t = (audit or {}).get("table") or {}
    return list(t.get("header") or []), [list(r) for r in t.get("rows") or []]


def paired_table(pair: AuditPair) -> PairedTable | None:
    """The pair's rows matched up, or None when the two tables do not share a header."""
    hb, rb = _table(pair.before)
    ha, ra = _table(pair.after)
    if pair.before is not None and pair.after is not None and hb != ha:
        return None
    header = hb or ha
    rows_all = rb + ra
    if not header or not rows_all:
        return PairedTable([], [])
    # text columns identify a row; numbers are what before and after compare
    is_key = [
        all(isinstance(r[j], str) for r in rows_all if j < len(r)) for j in range(len(header))
    ]
    if not any(is_key):
        keys = ["row"]
        rb = [[str(i + 1), *r] for i, r in enumerate(rb)]
        ra = [[str(i + 1), *r] for i, r in enumerate(ra)]
        header, is_key = ["row", *header], [True] + [False] * len(header)
    else:
        keys = [h for h, k in zip(header, is_key) if k]
    kj = [j for j, k in enumerate(is_key) if k]
    mj = [j for j, k in enumerate(is_key) if not k]

    def key(r: list[Any]) -> tuple[Any, ...]:
        return tuple(r[j] for j in kj)

    before = {key(r): r for r in rb}
    after = {key(r): r for r in ra}
    order = list(dict.fromkeys([key(r) for r in rb] + [key(r) for r in ra]))
    group = {k[0]: i for i, k in reversed(list(enumerate(order)))}  # first place of each group
    order.sort(key=lambda k: group[k[0]])  # stable: after-only rows join their group's end
    out = PairedTable(keys, [header[j] for j in mj])
    for k in order:
        b, a = before.get(k), after.get(k)
        cells = [
            (b[j] if b is not None else MISSING, a[j] if a is not None else MISSING) for j in mj
        ]
        out.rows.append((list(k), cells))
    return out
