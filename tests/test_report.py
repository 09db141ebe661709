"""Reports: the HTML page (self-contained, escaped, loads in a real headless browser) and the
terminal tables (data shown literally)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess

import pytest
from rich.console import Console

from aflite.audits import AuditResult
from aflite.jobs import FilterJob, run_filter_job
from aflite.reports import render_report
from aflite.reports.terminal import print_audits

CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from aflite.data import bundled_snli

    d = tmp_path_factory.mktemp("report")
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:900]]
    rows[0]["hypothesis"] = "<script>document.title='pwned'</script> nobody sleeps"
    rows[1]["hypothesis"] = 'a "quoted" & <b>bold</b> cat'
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(
        input=str(src),
        text=["premise", "hypothesis"],
        id="id",
        target_size=450,
        train_size=300,
        slice_size=60,
        threshold=0.5,
        min_bias=None,
        n_partitions=32,
        out_dir=str(d / "out"),
        cache_dir=None,
        audits=["pmi", "partial"],
    )
    run_filter_job(job, progress=False)
    return d / "out"


@pytest.mark.slow
def test_report_shows_chance_and_warns_on_label_drift(run_dir, tmp_path):
    from aflite.reports.html import label_drift

    assert label_drift({"a": 50, "b": 50}, {"a": 20, "b": 30}) == ("a", pytest.approx(0.1))
    page = (run_dir / "report.html").read_text()
    assert "chance before" in page and "chance (majority rate)" not in page  # drawn, not text
    copy = tmp_path / "out"
    shutil.copytree(run_dir, copy)
    summary = json.loads((copy / "summary.json").read_text())
    counts = summary["counts"]
    before = counts["labels_before"]
    first = sorted(before)[0]
    # the kept set lost most of one label: a drift of far more than 5 points
    counts["labels_kept"] = {k: (v // 10 if k == first else v) for k, v in before.items()}
    (copy / "summary.json").write_text(json.dumps(summary))
    assert "share of label" in render_report(copy)
    summary["parameters"]["balance"] = "classes"
    (copy / "summary.json").write_text(json.dumps(summary))
    assert "share of label" not in render_report(copy)
    counts["labels_kept"] = before
    summary["parameters"]["balance"] = None
    (copy / "summary.json").write_text(json.dumps(summary))
    assert "share of label" not in render_report(copy)


def test_report_is_self_contained_and_escapes_text(run_dir):
    page = (run_dir / "report.html").read_text()
    # the report's own code and its JSON data are the only script elements
    assert page.lower().replace("&lt;script", "").count("<script") == 2
    assert "<script>document.title" not in page
    # both rows sit in the page's row data with every markup character escaped (and in the
    # examples, escaped as HTML, when they are among the least predictable kept rows)
    assert "\\u003cscript\\u003edocument.title='pwned'\\u003c/script\\u003e nobody sleeps" in page
    assert 'a \\"quoted\\" \\u0026 \\u003cb\\u003ebold\\u003c/b\\u003e cat' in page
    assert "<b>bold</b>" not in page
    assert "http://" not in page and "https://" not in page.replace("https://creativecommons", "")
    # phases, histogram, labels; n-gram features get no cosine heatmaps, and the page says why
    assert page.count("data:image/png;base64,") >= 3
    assert "No similarity heatmaps: the features are mostly zeros" in page
    for section in (
        "Parameters",
        "Most predictable removed examples",
        "Least predictable kept",
        "Nearest-neighbour cosine distances",
        "Audit: word-label PMI",
    ):
        assert section in page, section


def test_escaping_of_a_removed_script_row(run_dir, tmp_path):
    extra_path = run_dir / "result" / "report_extra.json"
    extra = json.loads(extra_path.read_text())
    cls = next(iter(extra["top_removed"]))
    extra["top_removed"][cls].insert(
        0, {"score": 1.0, "id": "x", "hypothesis": "<script>alert(1)</script>"}
    )
    out = tmp_path / "copy"
    shutil.copytree(run_dir, out)
    (out / "result" / "report_extra.json").write_text(json.dumps(extra))
    page = render_report(out)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.slow
def test_report_cli_rebuilds(run_dir):
    import sys

    (run_dir / "report.html").unlink()
    r = subprocess.run(
        [sys.executable, "-m", "aflite", "report", str(run_dir)], capture_output=True, text=True
    )
    assert r.returncode == 0 and (run_dir / "report.html").exists()
    bad = subprocess.run(
        [sys.executable, "-m", "aflite", "report", str(run_dir / "nope")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "no summary.json" in bad.stderr


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_report_loads_in_headless_chromium_without_console_errors(run_dir, tmp_path):
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    shot = tmp_path / "shot.png"
    url = (run_dir / "report.html").as_uri()
    r = subprocess.run(
        [CHROMIUM, *flags, "--window-size=1280,2000", f"--screenshot={shot}", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 50_000, r.stderr[-2000:]
    console_errors = [
        line for line in r.stderr.splitlines() if "CONSOLE" in line and "ERROR" in line.upper()
    ]
    assert not console_errors, console_errors
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120
    )
    assert "<title>aflite report" in dom.stdout
    assert "pwned" not in dom.stdout.split("<title>")[1].split("</title>")[0]


def test_terminal_and_html_show_data_literally(tmp_path):
    def hostile(where):
        return f"[bold red]{where}[/bold red] \x1b[2J\r<script>{where}</script>"

    res = AuditResult(
        hostile("name"),
        hostile("summary"),
        ["word", hostile("header")],
        [[hostile("cell"), 1.5]],
        {"note": hostile("note")},
    )
    buf = io.StringIO()
    print_audits([res], console=Console(file=buf, width=400, force_terminal=True))
    text = buf.getvalue()
    for where in ("name", "summary", "header", "cell", "note"):
        assert f"[bold red]{where}[/bold red] \\x1b[2J\\r<script>" in text, where
    assert "\x1b[2J" not in text and "\r" not in text
    (tmp_path / "summary.json").write_text(
        json.dumps({"input": "x.jsonl", "counts": {"input": 1, "kept": 1, "removed": 0}})
    )
    (tmp_path / "result").mkdir()
    (tmp_path / "result" / "report_extra.json").write_text(json.dumps({"audits": [res.to_dict()]}))
    page = render_report(tmp_path)
    assert "<script>" not in page
    for where in ("name", "summary", "header", "cell", "note"):
        assert f"&lt;script&gt;{where}&lt;/script&gt;" in page, where


# --- the report's audits and parameters -----------------------------------------------


def test_audits_before_and_after_in_one_table(run_dir):
    from aflite.reports.audit_pairs import pair_audits, paired_table

    extra = json.loads((run_dir / "result" / "report_extra.json").read_text())
    pairs = pair_audits(extra["audits"])
    assert [p.name for p in pairs] == ["word-label PMI (hypothesis)", "hypothesis-only baseline"]
    table = paired_table(pairs[1])
    assert table.keys == ["model"] and table.metrics == ["accuracy", "majority class", "gap"]
    ((key, cells),) = table.rows
    before, after = (a["table"]["rows"][0] for a in (pairs[1].before, pairs[1].after))
    assert cells[0] == (before[1], after[1])
    pmi = paired_table(pairs[0])
    assert pmi.keys == ["label", "word"] and pmi.metrics[:2] == ["rank", "pmi"]
    page = (run_dir / "report.html").read_text()
    section = page[page.index("<h2>Audit: hypothesis-only baseline</h2>") :]
    assert "<th colspan='2'>accuracy</th>" in section
    assert "<th>before</th><th>after</th>" in section
    assert page.count("<h2>Audit: ") == 2  # one section per audit, not per run


def test_parameters_name_the_features_and_fields(run_dir):
    page = (run_dir / "report.html").read_text()
    params = page[page.index("<h2>Parameters</h2>") :]
    for row in (
        "<td>features</td><td>ngrams</td>",
        "<td>label field</td><td>label</td>",
        "<td>text fields</td><td>premise, hypothesis</td>",
        "<td>id field</td><td>id</td>",
        "<td>group field</td><td>none</td>",
    ):
        assert row in params, row
    assert "<td>split</td>" not in params
