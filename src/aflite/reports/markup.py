"""The building blocks of aflite's HTML pages: the style sheet, escaped text, tables, the
check that only inline PNGs reach an image's ``src``, and a page's end and its writing."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path

__all__ = ["CSS", "esc", "is_png", "page_end", "row_html", "table_html", "write_page"]

CSS = """
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


def esc(v: Any) -> str:
    """``v`` as text safe inside an element or a quoted attribute."""
    return html.escape(str(v), quote=True)


def row_html(values: list[Any]) -> str:
    """One table row: numbers right-aligned, floats to three decimals."""
    cells = []
    for v in values:
        cls = ' class="num"' if isinstance(v, (int, float, np.number)) else ""
        txt = f"{v:.3f}" if isinstance(v, (float, np.floating)) else v
        cells.append(f"<td{cls}>{esc(txt)}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def table_html(header: list[str], rows: list[list[Any]]) -> str:
    """A table with a header row."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return f"<table><tr>{head}</tr>{''.join(row_html(r) for r in rows)}</table>"


_PNG_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]+={0,2}")


def is_png(src: Any) -> bool:
    """Only inline PNGs reach an ``src`` attribute (no other scheme, no quotes)."""
    return isinstance(src, str) and _PNG_URI.fullmatch(src) is not None


def page_end(summary: dict[str, Any]) -> list[str]:
    """The end of a report page: the versions its run was made with (``summary.json``'s),
    then the closing tags."""
    versions = summary.get("versions", {})
    shown = ", ".join(f"{esc(k)} {esc(v)}" for k, v in versions.items())
    return [f"<p class='muted'>{shown}</p>", "</body></html>"]


def write_page(out_dir: str | Path, page: str) -> Path:
    """``page`` as the ``report.html`` of a run's output folder, written atomically."""
    path = Path(out_dir) / "report.html"
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path
