"""``report.html``: a self-contained page (inline PNG plots, no scripts, no network) that shows
what a filtering run did."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite._internal.text import plot_text

__all__ = ["write_report", "render_report", "png_data_uri", "label_drift", "DRIFT_WARNING"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1d232a;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #dde;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}td,th{border:1px solid #dde;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f5f8}td.num{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:1em}
.grid img{width:100%;height:auto;border:1px solid #eef}.muted{color:#667}.big{font-size:1.25em;font-weight:600}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #dde;border-radius:6px;padding:.6em 1em;min-width:140px}
.warn{background:#fff5e6;border-left:4px solid #dd6b20;padding:.4em .8em}
"""


def png_data_uri(fig: Any) -> str:
    """A matplotlib figure as an inline PNG (``data:`` URI); the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = []
        for v in r:
            cls = ' class="num"' if isinstance(v, (int, float, np.number)) else ""
            txt = f"{v:.3f}" if isinstance(v, (float, np.floating)) else v
            cells.append(f"<td{cls}>{_esc(txt)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _phase_plots(history: list[dict[str, Any]]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    if not history:
        return out
    phases = [h["phase"] for h in history]
    sizes = [h["size_before"] - h["n_removed"] for h in history]
    bias = [h["representation_bias"] for h in history]
    chance = [h.get("chance") for h in history]
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    ax.plot(phases, sizes, color="#2b6cb0", marker=".")
    ax.set_xlabel("phase")
    ax.set_ylabel("rows left", color="#2b6cb0")
    ax2 = ax.twinx()
    ax2.plot(phases, bias, color="#c05621", marker=".", label="representation bias")
    if all(c is not None for c in chance):
        ax2.plot(phases, chance, color="#718096", ls="--", label="chance (majority rate)")
        ax2.legend(loc="upper right", fontsize=7)
    ax2.set_ylabel("representation bias", color="#c05621")
    ax.set_title("Size and representation bias per phase")
    out.append(png_data_uri(fig))

    picks = sorted({0, len(history) // 2, len(history) - 1})
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    edges = np.linspace(0, 1, len(history[0]["score_histogram"]) + 1)
    for i in picks:
        hist = np.asarray(history[i]["score_histogram"], dtype=float)
        if hist.sum():
            ax.stairs(hist / hist.sum(), edges, label=f"phase {history[i]['phase']}", linewidth=1.6)
    ax.set_xlabel("predictability score")
    ax.set_ylabel("share of rows")
    ax.set_title("Predictability per phase")
    ax.legend()
    out.append(png_data_uri(fig))
    return out


DRIFT_WARNING = 0.05


def label_drift(before: dict[str, int], after: dict[str, int]) -> tuple[str, float]:
    """The label whose share moved most between two count tables, and by how much (0-1)."""
    nb, na = sum(before.values()) or 1, sum(after.values()) or 1
    moves = {k: abs(after.get(k, 0) / na - before.get(k, 0) / nb) for k in set(before) | set(after)}
    if not moves:
        return "", 0.0
    label = max(sorted(moves), key=lambda k: moves[k])
    return label, moves[label]


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{float(v):.3f}"


def _label_plot(before: dict[str, int], after: dict[str, int]) -> str:
    import matplotlib.pyplot as plt

    labels = sorted(set(before) | set(after))
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    ax.bar(x - 0.2, [before.get(k, 0) for k in labels], 0.4, label="before")
    ax.bar(x + 0.2, [after.get(k, 0) for k in labels], 0.4, label="kept")
    ax.set_xticks(x, [plot_text(k) for k in labels], rotation=20)
    ax.set_title("Labels before and after")
    ax.legend()
    return png_data_uri(fig)


def _heatmap_plots(extra: dict[str, Any]) -> list[str]:
    import matplotlib.pyplot as plt

    out = []
    for cls, block in extra.get("heatmaps", {}).items():
        sim = np.asarray(block["similarity"])
        n_kept = block["n_kept"]
        fig, ax = plt.subplots(figsize=(4.2, 3.8))
        im = ax.imshow(sim, cmap="viridis", vmin=-1, vmax=1)
        ax.axhline(n_kept - 0.5, color="w", lw=1)
        ax.axvline(n_kept - 0.5, color="w", lw=1)
        ax.set_title(f"cosine similarity, class {plot_text(cls)}\nkept (first {n_kept}) vs removed")
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(im, ax=ax, fraction=0.046)
        out.append(png_data_uri(fig))
    images = extra.get("images") or {}
    out.extend(v for v in (images.values() if isinstance(images, dict) else []) if _is_png(v))
    return out


_PNG_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]+={0,2}")


def _is_png(src: Any) -> bool:
    """Only inline PNGs reach an ``src`` attribute (no other scheme, no quotes)."""
    return isinstance(src, str) and _PNG_URI.fullmatch(src) is not None


def render_report(out_dir: str | Path) -> str:
    """Build the report's HTML from the files of a filter run's output folder."""
    d = Path(out_dir)
    summary = json.loads((d / "summary.json").read_text())
    extra_path = d / "result" / "report_extra.json"
    extra = json.loads(extra_path.read_text()) if extra_path.exists() else {}
    history = summary.get("history", [])
    counts = summary["counts"]
    rb = summary.get("representation_bias", {})

    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>aflite report: {_esc(Path(summary['input']).name)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>aflite report</h1><p class='muted'>{_esc(summary['input'])} "
        f"({_esc(summary.get('input_format', ''))}, fingerprint {_esc(summary.get('input_fingerprint', ''))})</p>",
        "<div class='cards'>",
    ]
    for title, value in [
        ("rows in", counts["input"]),
        ("kept", counts["kept"]),
        ("removed", counts["removed"]),
        ("warm-up", counts.get("warmup", 0)),
        ("bias before", f"{rb.get('before', float('nan')):.3f}"),
        ("bias after", f"{rb.get('after', float('nan')):.3f}"),
        ("chance before", _fmt(rb.get("chance_before"))),
        ("chance after", _fmt(rb.get("chance_after"))),
    ]:
        parts.append(
            f"<div class='card'><div class='muted'>{_esc(title)}</div><div class='big'>{_esc(value)}</div></div>"
        )
    parts.append("</div>")
    parts.append(f"<p><b>Stopped:</b> {_esc(summary.get('stop_message', ''))}</p>")
    drift = label_drift(counts.get("labels_before", {}), counts.get("labels_kept", {}))
    balanced = summary.get("parameters", {}).get("balance") == "classes"
    if drift[1] > DRIFT_WARNING and not balanced:
        parts.append(
            f"<p class='warn'><b>Warning:</b> the share of label {_esc(drift[0])} moved by "
            f"{100 * drift[1]:.1f} points; filter with --balance classes to keep the label "
            "distribution.</p>"
        )

    imgs = _phase_plots(history)
    imgs.append(_label_plot(counts.get("labels_before", {}), counts.get("labels_kept", {})))
    imgs += _heatmap_plots(extra)
    parts.append("<h2>Plots</h2><div class='grid'>")
    parts += [f"<img alt='plot' src='{_esc(src)}'>" for src in imgs if _is_png(src)]
    parts.append("</div>")

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
    if extra.get("knn"):
        parts.append("<h2>Nearest-neighbour cosine distances (held-out to training rows)</h2>")
        parts.append(
            "<p class='muted'>Larger distances after filtering mean held-out rows have fewer "
            "near-duplicates in training. Fewer rows alone make neighbours farther: compare the "
            "kept rows with the random subset of the same size.</p>"
        )
        parts.append(_table(extra["knn"]["header"], extra["knn"]["rows"]))

    params = summary.get("parameters", {})
    parts.append("<h2>Parameters</h2>")
    parts.append(_table(["parameter", "value"], [[k, v] for k, v in params.items()]))
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

    for audit in extra.get("audits", []):
        parts.append(f"<h2>Audit: {_esc(audit['name'])}</h2><p>{_esc(audit['summary'])}</p>")
        note = (audit.get("details") or {}).get("note")
        if note:
            parts.append(f"<p class='muted'>{_esc(note)}</p>")
        if audit.get("table"):
            parts.append(_table(audit["table"]["header"], audit["table"]["rows"]))

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
