"""``report.html``: a self-contained page (inline PNG plots, one small inline script, no
network) that shows what a filtering run did, with every row to search, filter and sort
(:mod:`aflite.reports.interactive`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aflite._internal.text import plural
from aflite.reports.audit_pairs import MISSING, pair_audits, paired_table
from aflite.reports.data import ReportData, WhyRemoved
from aflite.reports.interactive import REVIEW_CSS, filter_rows_payload, review_section
from aflite.reports.items_html import ITEMS_CSS, items_html
from aflite.reports.markup import CSS, esc, is_png, page_end, row_html, table_html, write_page
from aflite.reports.plots import png_data_uri
from aflite.reports.warnings import DRIFT_WARNING, label_drift, run_warnings

__all__ = ["write_report", "render_report", "png_data_uri", "label_drift", "DRIFT_WARNING"]


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{float(v):.3f}"


def _paired_html(keys: list[str], metrics: list[str], rows: list[Any]) -> str:
    """A table with a before and an after column under each metric."""
    top = "".join(f"<th rowspan='2'>{esc(k)}</th>" for k in keys)
    top += "".join(f"<th colspan='2'>{esc(m)}</th>" for m in metrics)
    sub = "<th>before</th><th>after</th>" * len(metrics)
    body = "".join(row_html(list(key) + [v for pair in cells for v in pair]) for key, cells in rows)
    return f"<table><tr>{top}</tr><tr>{sub}</tr>{body}</table>"


def _warnings_html(summary: dict[str, Any], report: ReportData, nouns: str) -> list[str]:
    found = run_warnings(summary, report, nouns=nouns)
    if not found:
        return []
    items = "".join(f"<li>{esc(w)}</li>" for w in found)
    return [f"<div class='warn'><b>Warnings</b><ul>{items}</ul></div>"]


def _plots(summary: dict[str, Any], report: ReportData, nouns: str = "rows") -> list[str]:
    from aflite.reports.plots import heatmap_figure, label_figure, phase_figures

    counts = summary["counts"]
    history = summary.get("history", [])
    figs = phase_figures(history, nouns)
    alts = []
    if history:
        picks = sorted({history[i]["phase"] for i in (0, len(history) // 2, len(history) - 1)})
        alts = [
            f"Bar and line chart: {nouns} removed and {nouns} left in each of {len(history)} "
            "phases, with the representation bias and the chance level",
            "Histograms of the predictability scores in phases " + ", ".join(map(str, picks)),
        ]
    figs.append(label_figure(counts.get("labels_before", {}), counts.get("labels_kept", {}), nouns))
    alts.append(f"Bar chart: {nouns} per label before filtering and kept")
    for cls, block in report.heatmaps.items():
        figs.append(heatmap_figure(cls, block.similarity, block.n_kept, nouns))
        alts.append(
            f"Heatmap: cosine similarity of sampled kept and removed {nouns} of class {cls}"
        )
    imgs = list(zip((png_data_uri(f) for f in figs), alts))
    images = report.images or {}
    imgs.extend((v, f"Image grid: {k} images per class") for k, v in images.items() if is_png(v))
    out = ["<h2>Plots</h2>"]
    info = report.heatmap_classes
    total, shown = (info.total, info.shown) if info else (None, None)
    note = []
    if total and shown is not None and shown < total:
        note.append(f"Heatmaps: first {shown} of {total} classes shown.")
    if info and info.none:
        note.append(f"No similarity heatmaps: {info.none}.")
    for cls, why in (info.skipped if info else {}).items():
        note.append(f"No heatmap for class {cls}: {why}.")
    if note:
        out.append(f"<p class='muted'>{esc(' '.join(note))}</p>")
    out.append("<div class='grid'>")
    out += [f"<img alt='{esc(alt)}' src='{esc(src)}'>" for src, alt in imgs if is_png(src)]
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


def _parameters_html(summary: dict[str, Any], noun: str = "row") -> list[str]:
    """What the run read (features, fields, split) and the filter's parameters."""
    opts = summary.get("options") or {}
    fields = summary.get("fields") or {
        # older summaries name the options by their flags
        "label": opts.get("label", opts.get("label_field")),
        "text": opts.get("text", opts.get("text_fields")),
        "id": opts.get("id", opts.get("id_field")),
        "group": opts.get("group", opts.get("group_field")),
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
                [f"--{kind}-ids", f"{review[f'{kind}_ids']}: {plural(review[count], noun)}"]
            )
    rows += [[k, v] for k, v in (summary.get("parameters") or {}).items()]
    return ["<h2>Parameters</h2>", table_html(["parameter", "value"], rows)]


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
            f"<button type='button' class='af-ngram' data-ngram='{esc(gram)}' "
            f"data-field='{esc(field)}' title='show the rows that contain it'>"
            f"{esc(row[0])}</button>"
        )
        body.append(row_html(row).replace(f"<td>{esc(row[0])}</td>", f"<td>{button}</td>", 1))
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _why_removed_html(why: WhyRemoved | None, fields: list[str] | None = None) -> list[str]:
    fields = fields or []
    if why is None:
        return []
    note = why.note
    if why.kind == "ngrams":
        note += " Click an n-gram to list the rows that contain it."
    out = ["<h2>Why removed</h2>", f"<p class='muted'>{esc(note)}</p>"]
    same = why.same_label or {}
    if "removed" in same:
        kept = f"; kept rows, among kept rows: {same['kept']:.3f}" if "kept" in same else ""
        removed = f"{same['removed']:.3f}"
        out.append(
            "<p>Share of rows whose nearest neighbour has their label: removed rows, among "
            f"removed rows: {esc(removed)}{esc(kept)}.</p>"
        )
    for cls, table in why.classes.items():
        out.append(f"<h3>{esc(cls)}</h3>")
        if table.rows and why.kind == "ngrams":
            out.append(_ngram_table(table.header, table.rows, fields))
        elif table.rows:
            # a word counted too rarely in a set to have a PMI there: n/a
            rows = [["n/a" if v is None else v for v in r] for r in table.rows]
            out.append(table_html(table.header, rows))
        else:
            what = "items" if why.kind == "choice-words" else "rows"
            out.append(f"<p class='muted'>Nothing over-represented among the removed {what}.</p>")
    for cls, reason in why.skipped.items():
        out.append(f"<p class='muted'>Class {esc(cls)} not shown: {esc(reason)}.</p>")
    return out


def _audits_html(audits: list[dict[str, Any]]) -> list[str]:
    out = []
    for pair in pair_audits(audits):
        out.append(f"<h2>Audit: {esc(pair.name)}</h2>")
        for tag, audit in (("before", pair.before), ("after", pair.after)):
            if audit is not None:
                label = f"<b>{tag}:</b> " if pair.before and pair.after else ""
                out.append(f"<p>{label}{esc(audit['summary'])}</p>")
        note = ((pair.before or pair.after or {}).get("details") or {}).get("note")
        if note:
            out.append(f"<p class='muted'>{esc(note)}</p>")
        table = paired_table(pair)
        if table is None:  # different columns: one table each
            for audit in (pair.before, pair.after):
                out.append(table_html(audit["table"]["header"], audit["table"]["rows"]))
        elif table.rows and pair.before is not None and pair.after is not None:
            out.append(_paired_html(table.keys, table.metrics, table.rows))
            if any(MISSING in pair for _, cells in table.rows for pair in cells):
                out.append(
                    f"<p class='muted'>{MISSING}: not among that run's rows (for a ranked "
                    "table, outside its top).</p>"
                )
        elif table.rows:
            audit = pair.before or pair.after
            out.append(table_html(audit["table"]["header"], audit["table"]["rows"]))
    return out


def render_report(out_dir: str | Path) -> str:
    """Build the report's HTML from the files of a filter run's output folder."""
    d = Path(out_dir)
    summary = json.loads((d / "summary.json").read_text())
    report = ReportData.load(d)
    history = summary.get("history", [])
    counts = summary["counts"]
    rb = summary.get("representation_bias", {})
    # a multiple-choice run filters items: each is kept or removed whole
    noun = "item" if summary.get("items") or report.items is not None else "row"
    nouns = noun + "s"

    payload = filter_rows_payload(d, len(history), outputs=summary.get("outputs"), noun=noun)
    csp, review = review_section(
        payload,
        map_title=f"Score map: every scored {noun}",
        map_alt=f"Scatter plot: each {noun}'s predictability score against the phase that "
        f"removed it (kept {nouns} at the right, their final scores), coloured kept or removed",
        ngrams=report.why_removed is not None and report.why_removed.kind == "ngrams",
    )
    fields = [c["field"] for c in (payload or {}).get("columns", []) if "field" in c]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        csp,
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>aflite report: {esc(Path(summary['input']).name)}</title>",
        f"<style>{CSS}{REVIEW_CSS}{ITEMS_CSS}</style></head><body>",
        f"<h1>aflite report</h1><p class='muted'>{esc(summary['input'])} "
        f"({esc(summary.get('input_format', ''))}, fingerprint "
        f"{esc(summary.get('input_fingerprint', ''))})</p>",
    ]
    parts += _warnings_html(summary, report, nouns)
    parts.append("<div class='cards'>")
    for title, value in [
        (f"{nouns} in", counts["input"]),
        ("kept", counts["kept"]),
        ("removed", counts["removed"]),
        ("warm-up", counts.get("warmup", 0)),
        ("bias before", _fmt(rb.get("before"))),
        ("bias after", _fmt(rb.get("after"))),
        ("chance before", _fmt(rb.get("chance_before"))),
        ("chance after", _fmt(rb.get("chance_after"))),
    ]:
        parts.append(
            f"<div class='card'><div class='muted'>{esc(title)}</div>"
            f"<div class='big'>{esc(value)}</div></div>"
        )
    parts.append("</div>")
    parts.append(f"<p><b>Stopped:</b> {esc(summary.get('stop_message', ''))}</p>")
    if summary.get("kept_fingerprint"):
        check = summary.get("seed_check")
        settled = (
            ""
            if not check
            else f" A run with seed {esc(str(check['seed']))} removed {check['removed']:,} "
            f"{nouns}, {check['removed_by_both']:,} of them also removed by this run: removed-set Jaccard "
            f"{esc(_fmt(check['jaccard']))}. Each {noun}'s standard error and distance to its "
            "phase's cut are in scores.parquet."
        )
        parts.append(
            f"<p><b>Kept set fingerprint:</b> <code>{esc(summary['kept_fingerprint'])}</code> "
            "(the first 12 hex digits of the SHA-256 of the kept ids, sorted: the same command "
            f"on the same data gives it on any machine).{settled}</p>"
        )
    parts += _plots(summary, report, nouns)
    if review:
        parts.append(review)

    control = report.bias_control
    if control:
        random_text = "not measured" if control.random is None else _fmt(control.random)
        parts.append(
            f"<p><b>Control:</b> a random subset of the kept size ({esc(control.size)} "
            f"{nouns}), scored at the same t ({esc(control.train_size)} training {nouns}), has "
            f"representation bias {esc(random_text)}; the kept {nouns} "
            f"{esc(_fmt(control.kept))}.</p>"
        )
    parts += _why_removed_html(report.why_removed, fields)
    if report.knn:
        parts.append(f"<h2>Nearest-neighbour cosine distances (held-out to training {nouns})</h2>")
        parts.append(
            f"<p class='muted'>Larger distances after filtering mean held-out {nouns} have fewer "
            f"near-duplicates in training. Fewer {nouns} alone make neighbours farther: compare "
            f"the kept {nouns} with the random subset of the same size.</p>"
        )
        parts.append(table_html(report.knn.header, report.knn.rows))

    parts += _parameters_html(summary, noun)
    parts.append(
        table_html(
            [
                "phase",
                "size before",
                "removed",
                "at or above tau",
                "bias",
                "cut",
                "in contest",
                "seconds",
            ],
            [
                [
                    h["phase"],
                    h["size_before"],
                    h["n_removed"],
                    h["n_eligible"],
                    float(h["representation_bias"]) if h["representation_bias"] is not None else "",
                    "" if h.get("cut") is None else float(h["cut"]),
                    "" if h.get("contested") is None else float(h["contested"]),
                    float(h["seconds"]),
                ]
                for h in history[:200]
            ],
        )
    )

    for section, examples in (
        ("Most predictable removed examples", report.top_removed),
        ("Least predictable kept examples", report.top_kept),
    ):
        if examples:
            parts.append(f"<h2>{section}</h2>")
            for cls, rows in examples.items():
                parts.append(f"<h3>{esc(cls)}</h3>")
                header = ["score"] + [k for k in rows[0] if k != "score"] if rows else ["score"]
                parts.append(
                    table_html(header, [[r["score"]] + [r[k] for k in header[1:]] for r in rows])
                )
    parts += items_html(report.items)

    parts += _audits_html(report.audits or [])
    parts += page_end(summary)
    return "\n".join(parts)


def write_report(out_dir: str | Path) -> Path:
    """(Re)write ``report.html`` in a filter run's output folder."""
    return write_page(out_dir, render_report(Path(out_dir)))
