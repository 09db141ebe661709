"""``report.html`` of a scoring run (``aflite score``): the data map (hover a point to read its
row), per-class histograms of every score, their rank correlations, example rows per region and
a table of every row. One self-contained page built from ``summary.json``, ``scores.parquet``
and the saved text fields; every value from the data is escaped or written as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.text import plot_text
from aflite.reports.interactive import REVIEW_CSS, review_section, scores_rows_payload
from aflite.reports.markup import CSS, esc, is_png, page_end, table_html, write_page
from aflite.reports.plots import png_data_uri
from aflite.reports.shorten import shorten

__all__ = ["render_scores_report", "write_scores_report"]

_MAX_POINTS = 25_000  # cartography's plots subsample to 25,000 rows as well


def _data_map(frame: Any, seed: int) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = np.arange(len(frame))
    if len(rows) > _MAX_POINTS:
        rows = np.sort(np.random.default_rng(seed).choice(rows, _MAX_POINTS, replace=False))
    sub = frame.iloc[rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    pts = ax.scatter(
        sub["variability"],
        sub["confidence"],
        c=sub["correctness"],
        cmap="coolwarm_r",
        vmin=0,
        vmax=1,
        s=6,
        alpha=0.6,
        linewidths=0,
    )
    fig.colorbar(pts, ax=ax, label="correctness")
    ax.set_xlabel("variability")
    ax.set_ylabel("confidence")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Data map ({len(sub)} of {len(frame)} rows, out of fold)")
    return png_data_uri(fig)


def _histograms(frame: Any, columns: list[str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted(frame["label"].astype(str).unique())
    # shown full width (about 1,050 px): at most 3 panels a row, fonts of 10-12 px there
    ncol = min(3, len(columns))
    nrow = -(-len(columns) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.5 * nrow), squeeze=False)
    for ax, col in zip(axes.ravel(), columns):
        values = frame[col].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if not len(finite):
            ax.set_visible(False)
            continue
        edges = np.histogram_bin_edges(finite, bins=30)
        for lab in labels[:12]:
            v = values[(frame["label"].astype(str) == lab).to_numpy()]
            v = v[np.isfinite(v)]
            if len(v):
                hist, _ = np.histogram(v, bins=edges)
                ax.stairs(hist / len(v), edges, label=plot_text(lab), linewidth=1.3)
        ax.set_title(plot_text(col), fontsize=11)
        ax.tick_params(labelsize=9)
    for ax in axes.ravel()[len(columns) :]:
        ax.set_visible(False)
    axes.ravel()[0].legend(fontsize=9)
    fig.suptitle("Scores per class (share of the class's rows)", fontsize=12)
    fig.tight_layout()
    return png_data_uri(fig)


def render_scores_report(out_dir: str | Path) -> str:
    """The report's HTML from a scoring run's ``summary.json`` and ``scores.parquet``."""
    import pandas as pd

    d = Path(out_dir)
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    # multiple-choice items: the answer plays the class label's part
    frame = pd.read_parquet(d / "scores.parquet").rename(columns={"answer": "label"})
    numeric = [c for c in frame.columns if c not in ("id", "label", "region")]
    source = Path(summary["input"]).name
    payload = scores_rows_payload(d, frame, source)
    csp, review = review_section(
        payload,
        map_title="Data map: hover a point to read its row",
        map_alt="Scatter plot: confidence against variability of every row, coloured by region",
    )
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        csp,
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>aflite scores: {esc(Path(summary['input']).name)}</title>",
        f"<style>{CSS}{REVIEW_CSS}</style></head><body>",
        f"<h1>aflite per-example scores</h1><p class='muted'>{esc(summary['input'])}; "
        f"features {esc(summary.get('features', ''))}; {esc(summary['n_folds'])}-fold "
        f"cross-fit x {esc(summary['repeats'])}, seed {esc(summary['seed'])}</p>",
        "<div class='cards'>",
    ]
    cards = [("rows", summary["rows"]), ("classes", len(summary["labels"]))]
    cards += [(k, v) for k, v in summary.get("regions", {}).items()]
    cards.append(("seconds", summary["seconds"]["total"]))
    for title, value in cards:
        parts.append(
            f"<div class='card'><div class='muted'>{esc(title)}</div>"
            f"<div class='big'>{esc(value)}</div></div>"
        )
    parts.append("</div>")
    parts.append(
        "<p class='muted'>Every score of a row comes from models that never trained on it "
        "(K-fold cross-fitting; predictability from AFLITE's random partitions).</p>"
    )
    imgs = []
    if {"confidence", "variability", "correctness"} <= set(frame.columns):
        alt = "Data map: confidence against variability, coloured by correctness"
        imgs.append((_data_map(frame, summary["seed"]), alt, ""))
    if numeric:
        alt = "Histograms, one panel per score (" + ", ".join(numeric) + "), one line per class"
        imgs.append((_histograms(frame, numeric), alt, " class='wide'"))
    parts.append("<h2>Plots</h2><div class='grid'>")
    parts += [
        f"<img alt='{esc(alt)}'{cls} src='{esc(src)}'>" for src, alt, cls in imgs if is_png(src)
    ]
    parts.append("</div>")
    parts.append(review)

    corr = summary["correlation"]
    parts.append("<h2>Spearman rank correlation</h2>")
    rows = [
        [name] + ["n/a" if v is None else float(v) for v in row]
        for name, row in zip(corr["columns"], corr["matrix"])
    ]
    parts.append(table_html(["", *corr["columns"]], rows))
    means = summary.get("means_by_label", {})
    if means:
        parts.append("<h2>Mean score per class</h2>")
        cols = list(next(iter(means.values())))
        parts.append(
            table_html(
                ["label", *cols],
                [
                    [k] + ["n/a" if v[c] is None else float(v[c]) for c in cols]
                    for k, v in means.items()
                ],
            )
        )
    for section, rows in summary.get("examples", {}).items():
        parts.append(f"<h2>Examples: {esc(section)}</h2>")
        if not rows:
            parts.append("<p class='muted'>no rows</p>")
            continue
        header = list(rows[0])
        cells = [
            [
                "n/a" if r[k] is None else shorten(r[k], f"{source}, id {r.get('id')}")
                for k in header
            ]
            for r in rows
        ]
        parts.append(table_html(header, cells))
    parts.append("<h2>Options</h2>")
    opts = summary.get("options", {}) | {"scorers": ", ".join(summary["scorers"])}
    parts.append(table_html(["option", "value"], [[k, str(v)] for k, v in opts.items()]))
    seconds = summary["seconds"]["scorers"]
    parts.append(table_html(["scorer", "seconds"], [[k, float(v)] for k, v in seconds.items()]))
    parts += page_end(summary)
    return "\n".join(parts)


def write_scores_report(out_dir: str | Path) -> Path:
    """(Re)write ``report.html`` in a scoring run's output folder."""
    return write_page(out_dir, render_scores_report(Path(out_dir)))
