"""``report.html``: a self-contained page (inline PNG plots, one small inline script, no
network) that shows what a filtering run did, with every row to search, filter and sort
(:mod:`aflite.reports.interactive`)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite._internal.text import plural
from aflite.reports.audit_pairs import MISSING, pair_audits, paired_table
from aflite.reports.interactive import REVIEW_CSS, filter_rows_payload, review_section
from aflite.reports.plots import png_data_uri
from aflite.reports.warnings import DRIFT_WARNING, label_drift, run_warnings

__all__ = ["write_report", "render_report", "png_data_uri", "label_drift", "DRIFT_WARNING"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1d232a;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #dde;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}td,th{border:1px solid #dde;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f5f8}td.num{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:1em}
.grid img{width:100%;height:auto;border:1px solid #eef}.grid img.wide{grid-column:1/-1}.muted{color:#667}.big{font-size:1.25em;font-weight:600}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #dde;border-radius:6px;padding:.6em 1em;min-width:140px}
.warn{background:#fff5e6;border-left:4px solid #dd6b20;padding:.4em .8em;margin:.8em 0}.warn ul{margin:.2em 0}
"""


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _row(values: list[Any]) -> str:
    cells = []
    for v in values:
        cls = ' class="num"' if isinstance(v, (int, float, np.number)) else ""
        txt = f"{v:.3f}" if isinstance(v, (float, np.floating)) else v
        cells.append(f"<td{cls}>{_esc(txt)}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(_row(r) for r in rows)}</table>"


_PNG_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]+={0,2}")


def _is_png(src: Any) -> bool:
    """Only inline PNGs reach an ``src`` attribute (no other scheme, no quotes)."""
    return isinstance(src, str) and _PNG_URI.fullmatch(src) is not None


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{float(v):.3f}"


def _paired_html(keys: list[str], metrics: list[str], rows: list[Any]) -> str:
    """A table with a before and an after column under each metric."""
    top = "".join(f"<th rowspan='2'>{_esc(k)}</th>" for k in keys)
    top += "".join(f"<th colspan='2'>{_esc(m)}</th>" for m in metrics)
    sub = "<th>before</th><th>after</th>" * len(metrics)
    body = "".join(_row(list(key) + [v for pair in cells for v in pair]) for key, cells in rows)
    return f"<table><tr>{top}</tr><tr>{sub}</tr>{body}</table>"


def _warnings_html(summary: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    found = run_warnings(summary, extra)
    if not found:
        return []
    items = "".join(f"<li>{_esc(w)}</li>" for w in found)
    return [f"<div class='warn'><b>Warnings</b><ul>{items}</ul></div>"]


def _plots(summary: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    from aflite.reports.plots import heatmap_figure, label_figure, phase_figures

    counts = summary["counts"]
    history = summary.get("history", [])
    figs = phase_figures(history)
    alts = []
    if history:
        picks = sorted({history[i]["phase"] for i in (0, len(history) // 2, len(history) - 1)})
        alts = [
            f"Bar and line chart: rows removed and rows left in each of {len(history)} phases, "
            "with the representation bias and the chance level",
            "Histograms of the predictability scores in phases " + ", ".join(map(str, picks)),
        ]
    figs.append(label_figure(counts.get("labels_before", {}), counts.get("labels_kept", {})))
    alts.append("Bar chart: rows per label before filtering and kept")
    for cls, block in extra.get("heatmaps", {}).items():
        figs.append(heatmap_figure(cls, block["similarity"], block["n_kept"]))
        alts.append(f"Heatmap: cosine similarity of sampled kept and removed rows of class {cls}")
    imgs = list(zip((png_data_uri(f) for f in figs), alts))
    images = extra.get("images") or {}
    if isinstance(images, dict):
        imgs.extend(
            (v, f"Image grid: {k} images per class") for k, v in images.items() if _is_png(v)
        )
    out = ["<h2>Plots</h2>"]
    info = extra.get("heatmap_classes") or {}
    total, shown = info.get("total"), info.get("shown")
    note = []
    if total and shown is not None and shown < total:
        note.append(f"Heatmaps: first {shown} of {total} classes shown.")
    for cls, why in (info.get("skipped") or {}).items():
        note.append(f"No heatmap for class {cls}: {why}.")
    if note:
        out.append(f"<p class='muted'>{_esc(' '.join(note))}</p>")
    out.append("<div class='grid'>")
    out += [f"<img alt='{_esc(alt)}' src='{_esc(src)}'>" for src, alt in imgs if _is_png(src)]
    out.append("</div>")
    return out


_FIELD_ROWS = (
    ("features", "features"),
    ("label", "label field"),
    ("text", "text fields"),
    ("id", "id field"),
    ("group", "group field"),
    ("split", "split"),
)


def _parameters_html(summary: dict[str, Any]) -> list[str]:
    """What the run read (features, fields, split) and the filter's parameters."""
    opts = summary.get("options") or {}
    fields = summary.get("fields") or {
        "label": opts.get("label_field"),
        "text": opts.get("text_fields"),
        "id": opts.get("id_field"),
        "group": opts.get("group_field"),
        "split": opts.get("split"),
    }
    picked = set(fields.get("picked") or [])
    rows: list[list[Any]] = []
    for key, title in _FIELD_ROWS:
        value = opts.get("features") if key == "features" else fields.get(key)
        if key == "split" and value is None:
            continue
        if isinstance(value, list):
            value = ", ".join(map(str, value)) or "none"
        text = "none" if value is None else str(value)
        if key in picked:
            text += " (picked: " + (
                "the only text column)" if key == "text" else "a column named id)"
            )
        rows.append([title, text])
    for key in ("input_format", "warmup_fraction", "audits"):
        if opts.get(key) not in (None, [], ""):
            value = opts[key]
            rows.append(
                [key.replace("_", " "), ", ".join(value) if isinstance(value, list) else value]
            )
    review = summary.get("review") or {}
    for kind, count in (("keep", "protected"), ("drop", "dropped")):
        if f"{kind}_ids" in review:
            rows.append(
                [f"--{kind}-ids", f"{review[f'{kind}_ids']}: {plural(review[count], 'row')}"]
            )
    rows += [[k, v] for k, v in (summary.get("parameters") or {}).items()]
    return ["<h2>Parameters</h2>", _table(["parameter", "value"], rows)]


def _ngram_table(header: list[str], rows: list[list[Any]], fields: list[str]) -> str:
    """The why-removed table, each n-gram a button that filters the rows table to it."""
    body = []
    for row in rows:
        gram, field = str(row[0]), ""
        for f in fields:  # with several fields the n-gram is named "field: n-gram"
            if gram.startswith(f + ": "):
                gram, field = gram[len(f) + 2 :], f
                break
        button = (
            f"<button type='button' class='af-ngram' data-ngram='{_esc(gram)}' "
            f"data-field='{_esc(field)}' title='show the rows that contain it'>"
            f"{_esc(row[0])}</button>"
        )
        body.append(_row(row).replace(f"<td>{_esc(row[0])}</td>", f"<td>{button}</td>", 1))
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _why_removed_html(extra: dict[str, Any], fields: list[str] | None = None) -> list[str]:
    fields = fields or []
    why = extra.get("why_removed")
    if not why:
        return []
    note = why.get("note", "")
    if why.get("kind") == "ngrams":
        note += " Click an n-gram to list the rows that contain it."
    out = ["<h2>Why removed</h2>", f"<p class='muted'>{_esc(note)}</p>"]
    same = why.get("same_label") or {}
    if "removed" in same:
        kept = f"; kept rows, among kept rows: {same['kept']:.3f}" if "kept" in same else ""
        removed = f"{same['removed']:.3f}"
        out.append(
            "<p>Share of rows whose nearest neighbour has their label: removed rows, among "
            f"removed rows: {_esc(removed)}{_esc(kept)}.</p>"
        )
    for cls, table in (why.get("classes") or {}).items():
        out.append(f"<h3>{_esc(cls)}</h3>")
        if table["rows"] and why.get("kind") == "ngrams":
            out.append(_ngram_table(table["header"], table["rows"], fields))
        elif table["rows"]:
            out.append(_table(table["header"], table["rows"]))
        else:
            out.append("<p class='muted'>Nothing over-represented among the removed rows.</p>")
    for cls, reason in (why.get("skipped") or {}).items():
        out.append(f"<p class='muted'>Class {_esc(cls)} not shown: {_esc(reason)}.</p>")
    return out


def _audits_html(audits: list[dict[str, Any]]) -> list[str]:
    out = []
    for pair in pair_audits(audits):
        out.append(f"<h2>Audit: {_esc(pair.name)}</h2>")
        for tag, audit in (("before", pair.before), ("after", pair.after)):
            if audit is not None:
                label = f"<b>{tag}:</b> " if pair.before and pair.after else ""
                out.append(f"<p>{label}{_esc(audit['summary'])}</p>")
        note = ((pair.before or pair.after or {}).get("details") or {}).get("note")
        if note:
            out.append(f"<p class='muted'>{_esc(note)}</p>")
        table = paired_table(pair)
        if table is None:  # different columns: one table each
            for audit in (pair.before, pair.after):
                out.append(_table(audit["table"]["header"], audit["table"]["rows"]))
        elif table.rows and pair.before is not None and pair.after is not None:
            out.append(_paired_html(table.keys, table.metrics, table.rows))
            if any(MISSING in pair for _, cells in table.rows for pair in cells):
                out.append(
                    f"<p class='muted'>{MISSING}: not among that run's rows (for a ranked "
                    "table, outside its top).</p>"
                )
        elif table.rows:
            audit = pair.before or pair.after
            out.append(_table(audit["table"]["header"], audit["table"]["rows"]))
    return out


def render_report(out_dir: str | Path) -> str:
    """Build the report's HTML from the files of a filter run's output folder."""
    d = Path(out_dir)
    summary = json.loads((d / "summary.json").read_text())
    extra_path = d / "result" / "report_extra.json"
    extra = json.loads(extra_path.read_text()) if extra_path.exists() else {}
    history = summary.get("history", [])
    counts = summary["counts"]
    rb = summary.get("representation_bias", {})

    payload = filter_rows_payload(d, len(history))
    csp, review = review_section(
        payload,
        map_title="Score map: every scored row",
        map_alt="Scatter plot: each row's predictability score against the phase that "
        "removed it (kept rows at the right, their final scores), coloured kept or removed",
        ngrams=(extra.get("why_removed") or {}).get("kind") == "ngrams",
    )
    fields = [c["field"] for c in (payload or {}).get("columns", []) if "field" in c]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        csp,
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>aflite report: {_esc(Path(summary['input']).name)}</title>",
        f"<style>{_CSS}{REVIEW_CSS}</style></head><body>",
        f"<h1>aflite report</h1><p class='muted'>{_esc(summary['input'])} "
        f"({_esc(summary.get('input_format', ''))}, fingerprint "
        f"{_esc(summary.get('input_fingerprint', ''))})</p>",
    ]
    parts += _warnings_html(summary, extra)
    parts.append("<div class='cards'>")
    for title, value in [
        ("rows in", counts["input"]),
        ("kept", counts["kept"]),
        ("removed", counts["removed"]),
        ("warm-up", counts.get("warmup", 0)),
        ("bias before", _fmt(rb.get("before"))),
        ("bias after", _fmt(rb.get("after"))),
        ("chance before", _fmt(rb.get("chance_before"))),
        ("chance after", _fmt(rb.get("chance_after"))),
    ]:
        parts.append(
            f"<div class='card'><div class='muted'>{_esc(title)}</div>"
            f"<div class='big'>{_esc(value)}</div></div>"
        )
    parts.append("</div>")
    parts.append(f"<p><b>Stopped:</b> {_esc(summary.get('stop_message', ''))}</p>")
    parts += _plots(summary, extra)
    if review:
        parts.append(review)

    control = extra.get("bias_control")
    if control:
        random_bias = control.get("random")
        random_text = "not measured" if random_bias is None else _fmt(random_bias)
        parts.append(
            f"<p><b>Control:</b> a random subset of the kept size ({_esc(control['size'])} "
            f"rows), scored at the same t ({_esc(control['train_size'])} training rows), has "
            f"representation bias {_esc(random_text)}; the kept rows "
            f"{_esc(_fmt(control.get('kept')))}.</p>"
        )
    parts += _why_removed_html(extra, fields)
    if extra.get("knn"):
        parts.append("<h2>Nearest-neighbour cosine distances (held-out to training rows)</h2>")
        parts.append(
            "<p class='muted'>Larger distances after filtering mean held-out rows have fewer "
            "near-duplicates in training. Fewer rows alone make neighbours farther: compare the "
            "kept rows with the random subset of the same size.</p>"
        )
        parts.append(_table(extra["knn"]["header"], extra["knn"]["rows"]))

    parts += _parameters_html(summary)
    parts.append(
        _table(
            ["phase", "size before", "removed", "at or above tau", "bias", "seconds"],
            [
                [
                    h["phase"],
                    h["size_before"],
                    h["n_removed"],
                    h["n_eligible"],
                    float(h["representation_bias"]) if h["representation_bias"] is not None else "",
                    float(h["seconds"]),
                ]
                for h in history[:200]
            ],
        )
    )

    for section, key in (
        ("Most predictable removed examples", "top_removed"),
        ("Least predictable kept examples", "top_kept"),
    ):
        if extra.get(key):
            parts.append(f"<h2>{section}</h2>")
            for cls, rows in extra[key].items():
                parts.append(f"<h3>{_esc(cls)}</h3>")
                header = ["score"] + [k for k in rows[0] if k != "score"] if rows else ["score"]
                parts.append(
                    _table(header, [[r["score"]] + [r[k] for k in header[1:]] for r in rows])
                )

    parts += _audits_html(extra.get("audits", []))
    versions = summary.get("versions", {})
    parts.append(
        "<p class='muted'>"
        + ", ".join(f"{_esc(k)} {_esc(v)}" for k, v in versions.items())
        + "</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out_dir: str | Path) -> Path:
    """(Re)write ``report.html`` in a filter run's output folder."""
    d = Path(out_dir)
    page = render_report(d)
    with atomic_path(d / "report.html") as tmp:
        tmp.write_text(page, encoding="utf-8")
    return d / "report.html"
