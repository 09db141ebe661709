"""The built-in export formats: Label Studio tasks, Argilla records, CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from aflite.exports.registry import register_exporter
from aflite.exports.rows import ReviewRow


@register_exporter(
    "label-studio",
    suffix=".json",
    description="Label Studio tasks: a JSON list of {data: {...}, meta: {...}}",
)
def label_studio(rows: list[ReviewRow], fields: list[str], path: Path) -> None:
    # Label Studio's import format is a JSON list of tasks whose "data" holds what the labeling
    # config names ($hypothesis) and the Data Manager shows as columns; "meta" travels along.
    tasks = []
    for r in rows:
        meta = r.metadata()
        data = {"id": r.id, **r.texts}
        data |= {
            f"aflite_{k}": ("; ".join(v) if k == "why_removed" else v) for k, v in meta.items()
        }
        tasks.append({"data": data, "meta": {"source": "aflite", **meta}})
    path.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")


@register_exporter(
    "argilla",
    suffix=".json",
    description="Argilla records: a JSON list of {id, fields: {...}, metadata: {...}}",
)
def argilla(rows: list[ReviewRow], fields: list[str], path: Path) -> None:
    # rg.Record(id=..., fields=..., metadata=...) per record; metadata values are terms
    # (strings or lists of strings), integers or floats, as Argilla's metadata properties take
    records = [
        {
            "id": r.id,
            "fields": dict(r.texts) if r.texts else {"id": r.id},
            "metadata": r.metadata(),
        }
        for r in rows
    ]
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")


@register_exporter(
    "csv",
    suffix=".csv",
    description="CSV: id, label, split, phase, score, text fields, why_removed",
)
def csv_rows(rows: list[ReviewRow], fields: list[str], path: Path) -> None:
    header = ["id", "label", "split", "phase", "score", "review", *fields, "why_removed"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow(
                [
                    r.id,
                    r.label,
                    r.split,
                    "" if r.phase is None else r.phase,
                    "" if r.score is None else r.score,
                    r.review or "",
                    *[r.texts.get(f, "") for f in fields],
                    "; ".join(r.why_removed),
                ]
            )
