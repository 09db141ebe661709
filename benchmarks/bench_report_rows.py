"""The interactive report at 100,000 rows: the page's size, and how long a filter change and a
sort take in headless Chromium (the page's own handlers, timed with performance.now()).

    taskset -c 0 python benchmarks/bench_report_rows.py [N]
    python benchmarks/bench_report_rows.py --smoke     # 300 rows: checks it runs

Needs Chromium (/usr/bin/chromium; ``--smoke`` without it writes the page and says so). The rows are synthetic: a run folder with
``scores.parquet`` and 8-word texts, as a filter run writes them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _browser import CHROMIUM, Browser  # noqa: E402
from test_report_browser import _synthetic_run  # noqa: E402

from aflite.reports.html import write_report  # noqa: E402

TIMED = "(() => {{ const t = performance.now(); {0}; return performance.now() - t; }})()"


def main(n: int = 100_000, smoke: bool = False) -> None:
    if CHROMIUM is None and not smoke:
        raise SystemExit("needs Chromium (apt-get install chromium)")
    d = Path(tempfile.mkdtemp())
    try:
        _synthetic_run(d, n)
        page = write_report(d)
        print(f"{n:,} rows: report.html {page.stat().st_size / 1e6:.1f} MB")
        if CHROMIUM is None:
            print("skipped the timings in the browser: no Chromium")
            return
        time_page(d, page)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def time_page(d: Path, page: Path) -> None:
    b = Browser(d / "profile")
    try:
        b.open(page.as_uri())
        b.wait_for("document.getElementById('af-body').children.length === 50", timeout=120)
        split = TIMED.format(
            "const s = document.getElementById('af-f-split'); s.value = '1'; "
            "s.dispatchEvent(new Event('change'))"
        )
        sort = TIMED.format("document.querySelector('button.af-sort[data-key=\"score\"]').click()")
        page_on = TIMED.format("document.getElementById('af-next').click()")
        for name, js in (
            ("filter by split", split),
            ("sort by score", sort),
            ("next page", page_on),
        ):
            print(f"{name}: {b.js(js):.0f} ms")
    finally:
        b.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, help="rows (default 100,000; 300 with --smoke)")
    ap.add_argument("--smoke", action="store_true", help="300 rows: checks it runs")
    args = ap.parse_args()
    main(args.n or (300 if args.smoke else 100_000), args.smoke)
