"""A filter run's rows as the exports see them: id, label, split, phase, scores, text fields
(those filtered on, then the input's other text columns, such as a premise beside the
hypothesis filtered on: a reviewer needs both to judge a row) and the why-removed n-grams of its class that the row contains (for multiple-choice items, the
words that mark right choices that its choices contain)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aflite._internal.text import did_you_mean
from aflite.errors import DataError
from aflite.reports.data import ReportData

__all__ = ["ReviewRow", "load_review_rows", "ROW_SETS", "ngrams_in"]

ROW_SETS = ("removed", "all")


@dataclass
class ReviewRow:
    id: str
    label: str
    split: str  # kept | removed | warmup
    phase: int | None  # the phase that removed the row; None if kept, warm-up or dropped
    score: float | None  # removal score of a removed row, final score of a kept one
    review: str | None  # a reviewer's earlier decision: keep | drop | None
    texts: dict[str, str] = field(default_factory=dict)
    why_removed: list[str] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        """The aflite values of the row, without its text (absent values left out)."""
        out: dict[str, Any] = {"label": self.label, "split": self.split}
        if self.phase is not None:
            out["phase"] = self.phase
        if self.score is not None:
            out["score"] = self.score
        if self.review is not None:
            out["review"] = self.review
        out["why_removed"] = list(self.why_removed)
        return out


def _why(texts: dict[str, str], grams: list[str], fields: list[str], *, items: bool) -> list[str]:
    """The listed n-grams a removed row holds; for an item, looked for in each choice apart (a
    field holding a list of choices is stored joined), so no n-gram spans two."""
    from aflite.io.choices import CHOICE_SEPARATOR

    if not items:
        return ngrams_in(texts, grams, fields)
    parts = {
        f"{f}#{j}": c
        for f in fields
        for j, c in enumerate(str(texts.get(f, "")).split(CHOICE_SEPARATOR))
    }
    return ngrams_in(parts, grams, list(parts))


def ngrams_in(texts: dict[str, str], grams: list[str], fields: list[str]) -> list[str]:
    """The n-grams of ``grams`` (names as the report writes them: ``field: n-gram`` with
    several fields) that occur in a row, tokenised as the report counted them."""
    from aflite.audits.text import get_tokenizer

    tok = get_tokenizer("regex")
    seqs = {f: " " + " ".join(tok(str(texts.get(f, "")).lower())) + " " for f in fields}
    found = []
    for g in grams:
        where, gram = fields, g
        for f in fields:
            if len(fields) > 1 and g.startswith(f + ": "):
                where, gram = [f], g[len(f) + 2 :]
                break
        if any(f" {gram} " in seqs[f] for f in where):
            found.append(g)
    return found


def _number(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), 6)


def load_review_rows(
    out_dir: str | Path, *, rows: str = "removed", fields: list[str] | None = None
) -> tuple[list[ReviewRow], list[str]]:
    """The removed (``rows="removed"``) or all rows of a filter run's output folder, in input
    order, and the names of the text fields they carry: ``fields``, or by default the fields
    filtered on and then the input's other text columns."""
    import pyarrow.parquet as pq

    d = Path(out_dir)
    summary_path = d / "summary.json"
    if not summary_path.exists():
        raise DataError(f"{d}: no summary.json here; is it an aflite filter output folder?")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except ValueError:
        raise DataError(f"{summary_path}: not an aflite summary (unreadable JSON)") from None
    if summary.get("kind") == "scores" or not (d / "scores.parquet").exists():
        raise DataError(f"{d}: not a filter run's output folder (no removed rows to export)")
    t = pq.read_table(d / "scores.parquet").to_pydict()
    texts, context = _texts(d / "result" / "texts.parquet")
    features = [f for f in texts if f not in context]
    chosen = list(texts) if fields is None else _chosen(fields, list(texts), d)
    why = ReportData.load(d).why_removed
    grams: dict[str, list[str]] = {}
    why_fields = features
    is_items = why is not None and why.kind == "choice-words"
    if why is not None and why.kind == "ngrams":
        grams = {cls: [str(r[0]) for r in table.rows] for cls, table in why.classes.items()}
    elif why is not None and why.kind == "choice-words":
        # multiple-choice items: the words that mark right choices, whatever the answer's
        # position, looked for in the choices (not the context)
        words = [str(r[0]) for table in why.classes.values() for r in table.rows]
        grams = {str(label): words for label in set(t["label"])}
        why_fields = [f for f in (summary.get("items") or {}).get("choices", []) if f in texts]
    out = []
    review = t.get("review") or [None] * len(t["id"])
    for i, split in enumerate(t["split"]):
        if rows == "removed" and split != "removed":
            continue
        row_texts = {f: texts[f][i] for f in features}
        label = str(t["label"][i])
        out.append(
            ReviewRow(
                id=str(t["id"][i]),
                label=label,
                split=split,
                phase=t["phase_removed"][i],
                score=_number(t["score"][i]),
                review=review[i],
                texts={f: texts[f][i] or "" for f in chosen},
                why_removed=_why(row_texts, grams.get(label, []), why_fields, items=is_items)
                if split == "removed" and features
                else [],
            )
        )
    return out, chosen


def _texts(path: Path) -> tuple[dict[str, list[Any]], list[str]]:
    """The saved text columns of every row, and which of them are context (not filtered on)."""
    import pyarrow.parquet as pq

    if not path.exists():
        return {}, []
    table = pq.read_table(path)
    meta = json.loads((table.schema.metadata or {}).get(b"aflite", b"{}"))
    return table.to_pydict(), list(meta.get("context", []))


def _chosen(fields: list[str], available: list[str], d: Path) -> list[str]:
    unknown = [f for f in fields if f not in available]
    if unknown:
        have = ", ".join(available) if available else "none: the run saved no text"
        hint = did_you_mean(unknown[0], available)
        raise DataError(f"--fields: no text field '{unknown[0]}' in {d} (it has {have}){hint}")
    return list(dict.fromkeys(fields))
