"""What a filter run's report shows beyond ``summary.json``, as typed data: computed when the
run finishes (:func:`aflite.reports.content.report_data`), saved as
``result/report_extra.json`` and read back by the page, the warnings and ``aflite export``.

Reading is lenient: a file from an older run, or one with parts missing or of the wrong shape,
gives the parts it has, so a report can always be rebuilt. Written or read, every string from
the data (texts, n-grams, ids, labels) is at most
:data:`~aflite.reports.shorten.MAX_TEXT_CHARS` long.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.reports.shorten import shorten_all

__all__ = [
    "FILE",
    "BiasControl",
    "Heatmap",
    "HeatmapClasses",
    "ItemExample",
    "ItemExamples",
    "KnnTable",
    "ReportData",
    "Table",
    "WhyRemoved",
]

FILE = Path("result") / "report_extra.json"  # in a run's output folder


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _shortened(doc: dict[str, Any]) -> dict[str, Any]:
    """A report data document with its long strings shortened; the image grids are PNG data
    URIs, not text from the data, and stay whole."""
    return {k: v if k == "images" else shorten_all(v) for k, v in doc.items()}


@dataclass
class Table:
    """A table as the page shows it: column names and rows."""

    header: list[str]
    rows: list[list[Any]]

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "rows": self.rows}

    @classmethod
    def from_json(cls, d: Any) -> Table:
        d = _dict(d)
        return cls(list(d.get("header") or []), list(d.get("rows") or []))


@dataclass
class Heatmap:
    """Cosine similarities of sampled rows of one class, the first ``n_kept`` of them kept."""

    similarity: list[list[float]]
    n_kept: int

    def to_json(self) -> dict[str, Any]:
        return {"similarity": self.similarity, "n_kept": self.n_kept}


@dataclass
class HeatmapClasses:
    """How many classes there are, how many have a heatmap, and why the others have none."""

    total: int | None = None
    shown: int | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    none: str = ""  # why no class has one (features on which cosines say nothing)

    def to_json(self) -> dict[str, Any]:
        out = {"total": self.total, "shown": self.shown, "skipped": self.skipped}
        return out | ({"none": self.none} if self.none else {})


@dataclass
class WhyRemoved:
    """Why rows were removed, per class: over-represented n-grams (``kind`` "ngrams") or each
    removed row's nearest removed neighbours ("neighbours", with ``same_label``: the share
    of rows whose nearest neighbour has their label)."""

    kind: str
    note: str = ""
    classes: dict[str, Table] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    same_label: dict[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "classes": {c: t.to_json() for c, t in self.classes.items()},
            "skipped": self.skipped,
        }
        if self.same_label is not None:
            out["same_label"] = self.same_label
        out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, d: Any) -> WhyRemoved | None:
        if not isinstance(d, dict) or not d:
            return None
        same = d.get("same_label")
        return cls(
            kind=str(d.get("kind", "")),
            note=str(d.get("note", "")),
            classes={str(c): Table.from_json(t) for c, t in _dict(d.get("classes")).items()},
            skipped={str(c): str(r) for c, r in _dict(d.get("skipped")).items()},
            same_label=same if isinstance(same, dict) else None,
        )


@dataclass
class ItemExample:
    """One multiple-choice item as the report shows it: its predictability ``score``, its
    ``context`` (None without one), every one of its ``choices`` and the right one's
    position ``answer`` (0-based)."""

    score: float
    context: str | None
    choices: list[str]
    answer: int
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "score": self.score,
            "context": self.context,
            "choices": self.choices,
            "answer": self.answer,
        }
        return out | ({"id": self.id} if self.id is not None else {})

    @classmethod
    def from_json(cls, d: Any) -> ItemExample | None:
        if not isinstance(d, dict) or not isinstance(d.get("choices"), list):
            return None
        try:
            answer, score = int(d.get("answer")), float(d.get("score"))
        except (TypeError, ValueError):
            return None
        ctx, ident = d.get("context"), d.get("id")
        return cls(
            score,
            None if ctx is None else str(ctx),
            [str(c) for c in d["choices"]],
            answer,
            None if ident is None else str(ident),
        )


@dataclass
class ItemExamples:
    """Example multiple-choice items: the most predictable ``removed`` ones (most predictable
    first) and the least predictable ``kept`` ones (least first)."""

    removed: list[ItemExample] = field(default_factory=list)
    kept: list[ItemExample] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "removed": [e.to_json() for e in self.removed],
            "kept": [e.to_json() for e in self.kept],
        }

    @classmethod
    def from_json(cls, d: Any) -> ItemExamples | None:
        if not isinstance(d, dict):
            return None

        def read(v: Any) -> list[ItemExample]:
            got = [ItemExample.from_json(e) for e in (v if isinstance(v, list) else [])]
            return [e for e in got if e is not None]

        return cls(read(d.get("removed")), read(d.get("kept")))


@dataclass
class KnnTable(Table):
    """Nearest-neighbour distances of all rows, a random subset of the kept size (its size:
    ``control_size``) and the kept rows."""

    control_size: int = 0

    def to_json(self) -> dict[str, Any]:
        return super().to_json() | {"control_size": self.control_size}

    @classmethod
    def from_json(cls, d: Any) -> KnnTable:
        d = _dict(d)
        return cls(
            list(d.get("header") or []), list(d.get("rows") or []), int(d.get("control_size") or 0)
        )


@dataclass
class BiasControl:
    """The representation bias before, of the kept rows, and of a random subset of the kept
    size (``size`` rows) scored at the same t (``train_size``); ``random`` is None with a
    ``note`` when that t leaves no row held out."""

    train_size: int
    size: int
    before: float | None
    kept: float | None
    random: float | None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "train_size": self.train_size,
            "size": self.size,
            "before": self.before,
            "kept": self.kept,
            "random": self.random,
        }
        return out | ({"note": self.note} if self.note is not None else {})

    @classmethod
    def from_json(cls, d: Any) -> BiasControl | None:
        if not isinstance(d, dict) or not d:
            return None
        return cls(
            d.get("train_size"),
            d.get("size"),
            d.get("before"),
            d.get("kept"),
            d.get("random"),
            d.get("note"),
        )


@dataclass
class ReportData:
    """Everything the report reads besides ``summary.json``.

    ``top_removed`` / ``top_kept``: per class, example rows (``score``, ``id``, text fields);
    for multiple-choice items they are empty and ``items`` holds example items instead;
    ``heatmaps`` per class; ``images``: PNG data URIs of image grids by name; ``audits``: the
    registered audits before filtering and on the kept rows, each an
    :meth:`~aflite.audits.AuditResult.to_dict` with its ``tag`` ("before" or "kept").
    """

    top_removed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    top_kept: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    items: ItemExamples | None = None
    heatmaps: dict[str, Heatmap] = field(default_factory=dict)
    heatmap_classes: HeatmapClasses | None = None
    why_removed: WhyRemoved | None = None
    images: dict[str, Any] | None = None
    knn: KnnTable | None = None
    bias_control: BiasControl | None = None
    audits: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``result/report_extra.json`` (parts that are None left out)."""
        out: dict[str, Any] = {
            "top_removed": self.top_removed,
            "top_kept": self.top_kept,
            "heatmaps": {c: h.to_json() for c, h in self.heatmaps.items()},
        }
        parts = {
            "items": self.items,
            "heatmap_classes": self.heatmap_classes,
            "why_removed": self.why_removed,
            "images": self.images,
            "knn": self.knn,
            "bias_control": self.bias_control,
        }
        for key, part in parts.items():
            if part is not None:
                out[key] = part if key == "images" else part.to_json()
        if self.audits is not None:
            out["audits"] = self.audits
        return _shortened(out)

    @classmethod
    def from_json(cls, d: Any) -> ReportData:
        """The parts of a ``report_extra.json`` document that have their shape."""
        d = _shortened(_dict(d))  # a file written before texts were shortened
        hc = d.get("heatmap_classes")
        heatmaps = {
            str(c): Heatmap(h["similarity"], h["n_kept"])
            for c, h in _dict(d.get("heatmaps")).items()
            if isinstance(h, dict) and "similarity" in h and "n_kept" in h
        }
        return cls(
            top_removed=_dict(d.get("top_removed")),
            top_kept=_dict(d.get("top_kept")),
            items=ItemExamples.from_json(d.get("items")),
            heatmaps=heatmaps,
            heatmap_classes=HeatmapClasses(
                hc.get("total"),
                hc.get("shown"),
                _dict(hc.get("skipped")),
                str(hc.get("none") or ""),
            )
            if isinstance(hc, dict)
            else None,
            why_removed=WhyRemoved.from_json(d.get("why_removed")),
            images=d["images"] if isinstance(d.get("images"), dict) else None,
            knn=KnnTable.from_json(d["knn"]) if d.get("knn") else None,
            bias_control=BiasControl.from_json(d.get("bias_control")),
            audits=[a for a in d["audits"] if isinstance(a, dict)]
            if isinstance(d.get("audits"), list)
            else None,
        )

    def save(self, out_dir: str | Path) -> Path:
        """Write ``result/report_extra.json`` in ``out_dir`` (atomically)."""
        path = Path(out_dir) / FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(self.to_json(), default=_json_default))
        return path

    @classmethod
    def load(cls, out_dir: str | Path) -> ReportData:
        """The report data of the run in ``out_dir``; empty when it has none."""
        path = Path(out_dir) / FILE
        return cls.from_json(json.loads(path.read_text())) if path.exists() else cls()


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    return str(o)
