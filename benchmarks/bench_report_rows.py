"""The interactive report at 100,000 rows: the page's size, and how long a filter change and a
sort take in headless Chromium (the page's own handlers, timed with performance.now()).

    taskset -c 0 python benchmarks/bench_report_rows.py [N]

Needs Chromium (/usr/bin/chromium). The rows are synthetic: a run folder with
``scores.parquet`` and 8-word texts, as a filter run writes them.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _browser import CHROMIUM, Browser  # noqa: E402
from test_report_browser import _synthetic_run  # noqa: E402

from aflite.reports.html import write_report  # noqa: E402

TIMED = "(() => {{ const t = performance.now(); {0}; return performance.now() - t; }})()"


def main(n: int = 100_000) -> None:
    if CHROMIUM is None:
        raise SystemExit("needs Chromium (apt-get install chromium)")
    d = Path(tempfile.mkdtemp())
    _synthetic_run(d, n)
    page = write_report(d)
    print(f"{n:,} rows: report.html {page.stat().st_size / 1e6:.1f} MB")
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
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
