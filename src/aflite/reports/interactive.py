"""The interactive part of a report: every row in a table (search, filters, sorting, pages) and
a score map with hover and click, drawn by one small script shipped in ``assets/review.js``.

The page stays one file that fetches nothing: the rows sit in a ``<script
type="application/json">`` element as columns (scores rounded to 3 decimals), escaped so that
no value can close the element; a Content-Security-Policy allows only that script (by its
hash), inline styles and ``data:`` images; the script writes data with ``textContent`` only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from aflite.reports.shorten import MAX_TEXT_CHARS, shorten

__all__ = [
    "json_script",
    "csp_meta",
    "review_section",
    "filter_rows_payload",
    "scores_rows_payload",
    "REVIEW_CSS",
]

REVIEW_CSS = """
.af-controls{display:flex;gap:.5em;flex-wrap:wrap;align-items:center;margin:.5em 0}
.af-controls input,.af-controls select,.af-controls button{font:inherit;padding:.2em .4em}
.af-range{display:inline-flex;gap:.4em;align-items:center;white-space:nowrap}
#af-search{min-width:16em}.af-num{width:6em}.af-chip{background:#ebf4ff;border:1px solid #90cdf4;
border-radius:1em}.af-scroll{overflow-x:auto}#af-table td.txt{min-width:18em;max-width:40em}
#af-table tbody tr{cursor:pointer}#af-table tbody tr:hover{background:#f7fafc}
button.af-sort{all:unset;cursor:pointer;font-weight:600}button.af-sort::after{content:attr(data-arrow)}
button.af-ngram{all:unset;cursor:pointer;color:#2b6cb0;text-decoration:underline}
.af-map{position:relative}#af-map{width:100%;height:440px;display:block;border:1px solid #eef}
#af-tip{position:absolute;max-width:300px;background:#fff;border:1px solid #889;padding:.3em .5em;
font-size:.85em;pointer-events:none;box-shadow:0 2px 6px #0002;white-space:pre-wrap;overflow-wrap:anywhere}
#af-detail{border:1px solid #dde;border-left:4px solid #2b6cb0;padding:.4em .8em;margin:.6em 0}
#af-detail dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:.3em 0}
#af-detail dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.af-key{margin-right:1em}.af-key i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
"""

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def json_script(element_id: str, payload: Any) -> str:
    """``payload`` as JSON inside a ``<script type="application/json">`` element. ``<``, ``>``,
    ``&`` and the JavaScript line separators are written as ``\\u`` escapes, so a value such as
    ``</script>`` cannot end the element; JSON.parse reads them back unchanged."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for ch, esc in _ESCAPES.items():
        text = text.replace(ch, esc)
    return f'<script type="application/json" id="{element_id}">{text}</script>'


@lru_cache(maxsize=1)
def _script() -> str:
    return resources.files("aflite.reports").joinpath("assets/review.js").read_text("utf-8")


def csp_meta(scripts: list[str]) -> str:
    """A Content-Security-Policy that allows nothing from outside: the given inline scripts
    (by hash), inline styles and ``data:`` images only."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
        for s in scripts
    )
    policy = (
        f"default-src 'none'; script-src {hashes or chr(39) + 'none' + chr(39)}; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def review_section(
    payload: dict[str, Any] | None, *, map_title: str, map_alt: str, ngrams: bool = False
) -> tuple[str, str]:
    """(the CSP meta tag for the head, the section's HTML). Without rows, no script at all.
    The payload's ``noun`` names what each row is ("item" on a multiple-choice run)."""
    if payload is None:
        return csp_meta([]), ""
    script = _script()
    noun = payload.get("noun", "row")
    body = []
    if payload.get("scatter"):
        body += [
            f"<h2>{_esc(map_title)}</h2>",
            f"<p class='muted'>Hover a point to read its {noun}; click it to pin the {noun} "
            "below. Grey points are outside the table's current filters.</p>",
            f"<div class='af-map'><canvas id='af-map' role='img' aria-label='{_esc(map_alt)}'>"
            f"</canvas><div id='af-tip' hidden></div></div>",
            "<p id='af-legend'></p>",
        ]
    body += [
        "<div id='af-detail' hidden></div>",
        f"<h2>All {noun}s</h2>",
        "<p class='muted'>Search the text, filter, sort by any column (click its name) and "
        f"click a {noun} to show it."
        + (
            f" A text longer than {MAX_TEXT_CHARS} characters is cut short here, with its "
            "length and the file that holds it whole; search reads the part shown."
            if payload.get("cut")
            else ""
        )
        + (
            " Click an n-gram under <i>Why removed</i> to list the rows that contain it."
            if ngrams
            else ""
        )
        + "</p>",
        "<div id='af-review'></div>",
        json_script("af-data", payload),
        f"<script>{script}</script>",
    ]
    return csp_meta([script]), "\n".join(body)


def _esc(v: Any) -> str:
    import html

    return html.escape(str(v), quote=True)


def _num(values: Any) -> list[float | None]:
    out = []
    for v in np.asarray(values, dtype=float).tolist():
        out.append(None if not math.isfinite(v) else round(v, 3))
    return out


def _cat(values: list[Any], order: list[str] | None = None) -> tuple[list[str], list[int | None]]:
    names = order if order is not None else sorted({str(v) for v in values if v is not None})
    code = {v: i for i, v in enumerate(names)}
    return names, [None if v is None else code[str(v)] for v in values]


def _texts(out_dir: Path, ids: list[str], where: list[str]) -> tuple[dict[str, list[Any]], bool]:
    """The saved text fields of every row, a long one shortened, naming the row's id and
    ``where`` it is whole; and whether any was."""
    path = out_dir / "result" / "texts.parquet"
    if not path.exists():
        return {}, False
    import pyarrow.parquet as pq

    texts = pq.read_table(path).to_pydict()
    cut = any(len(v or "") > MAX_TEXT_CHARS for values in texts.values() for v in values)
    if cut:
        texts = {
            f: [shorten(v, f"{w}, id {i}") for v, i, w in zip(values, ids, where)]
            for f, values in texts.items()
        }
    return texts, cut


def filter_rows_payload(
    out_dir: str | Path,
    n_phases: int,
    *,
    outputs: dict[str, str] | None = None,
    noun: str = "row",
) -> dict[str, Any] | None:
    """Every row of a filter run (kept, removed, warm-up) from ``scores.parquet`` and the saved
    text fields; None for a run written before the rows were saved for the report. A long text
    names the file of ``outputs`` (as ``summary.json`` lists them) that holds its row;
    ``noun``: what a row is ("item" on a multiple-choice run)."""
    import pyarrow.parquet as pq

    d = Path(out_dir)
    if not (d / "scores.parquet").exists():
        return None
    t = pq.read_table(d / "scores.parquet").to_pydict()
    n = len(t["id"])
    ids = [shorten(str(v)) for v in t["id"]]
    files = outputs or {}
    texts, cut = _texts(d, ids, [files.get(s) or f"the {s} {noun}s" for s in t["split"]])
    split_names = {"kept": "kept", "removed": "removed", "warmup": "warm-up"}
    splits, split_codes = _cat(
        [split_names.get(s, s) for s in t["split"]], ["kept", "removed", "warm-up"]
    )
    review = t.get("review") or [None] * n
    n_phases = max([n_phases] + [p + 1 for p in t["phase_removed"] if p is not None])
    phases = [str(p) for p in range(n_phases)] + ["kept", "warm-up", "review"]
    phase_of = []
    for p, s, r in zip(t["phase_removed"], t["split"], review):
        if p is not None:
            phase_of.append(str(p))
        elif r == "drop":
            phase_of.append("review")
        else:
            phase_of.append(split_names.get(s, s))
    labels, label_codes = _cat([shorten(str(v)) for v in t["label"]])
    columns = [
        {"key": "id", "title": "id", "kind": "text"},
        {"key": "label", "title": "label", "kind": "cat", "values": labels},
        {"key": "split", "title": "split", "kind": "cat", "values": splits},
        {"key": "phase", "title": "phase removed", "kind": "cat", "values": phases},
        {"key": "score", "title": "score", "kind": "num"},
    ]
    data: dict[str, Any] = {
        "id": ids,
        "label": label_codes,
        "split": split_codes,
        "phase": _cat(phase_of, phases)[1],
        "score": _num([np.nan if v is None else v for v in t["score"]]),
    }
    for f, values in texts.items():
        key = f"text:{f}"
        columns.append({"key": key, "title": f, "kind": "text", "search": True, "field": f})
        data[key] = values
    if not texts:  # nothing else to search in: the ids
        columns[0]["search"] = True
    return {
        "n": n,
        "noun": noun,
        "cut": cut,
        "columns": columns,
        "data": data,
        "filters": ["label", "split", "phase"],
        "range": "score",
        "scatter": {
            "x": "phase",
            "y": "score",
            "colour": "split",
            "xTitle": f"phase the {noun} was removed in (kept: the kept {noun}s' final scores)",
            "yTitle": "predictability score",
            "yUnit": True,
        },
    }


def scores_rows_payload(out_dir: str | Path, frame: Any, source: str = "") -> dict[str, Any]:
    """Every row of a scoring run: ids, labels, regions, every score and the text fields; a
    long text names its row's id in ``source`` (the input file)."""
    d = Path(out_dir)
    ids = [shorten(str(v)) for v in frame["id"]]
    texts, cut = _texts(d, ids, [source or "the input"] * len(ids))
    labels, label_codes = _cat([shorten(str(v)) for v in frame["label"]])
    columns: list[dict[str, Any]] = [
        {"key": "id", "title": "id", "kind": "text"},
        {"key": "label", "title": "label", "kind": "cat", "values": labels},
    ]
    data: dict[str, Any] = {"id": ids, "label": label_codes}
    filters = ["label"]
    if "region" in frame.columns:
        regions, codes = _cat([None if v is None else str(v) for v in frame["region"]])
        columns.append({"key": "region", "title": "region", "kind": "cat", "values": regions})
        data["region"] = codes
        filters.append("region")
    numeric = [c for c in frame.columns if c not in ("id", "label", "region")]
    for c in numeric:
        columns.append({"key": f"num:{c}", "title": c, "kind": "num"})
        data[f"num:{c}"] = _num(frame[c].to_numpy(dtype=float))
    for f, values in texts.items():
        columns.append({"key": f"text:{f}", "title": f, "kind": "text", "search": True})
        data[f"text:{f}"] = values
    if not texts:
        columns[0]["search"] = True
    payload: dict[str, Any] = {
        "n": len(frame),
        "cut": cut,
        "columns": columns,
        "data": data,
        "filters": filters,
        "range": f"num:{numeric[0]}" if numeric else None,
    }
    if {"confidence", "variability"} <= set(numeric):
        payload["scatter"] = {
            "x": "num:variability",
            "y": "num:confidence",
            "colour": "region" if "region" in data else "label",
            "xTitle": "variability (spread of the true label's probability over epochs)",
            "yTitle": "confidence (mean probability of the true label)",
            "yUnit": True,
        }
    return payload
