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
        text_fields=["premise", "hypothesis"],
        id_field="id",
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
    assert "<script" not in page.lower().replace("&lt;script", "")
    # both rows are among the least predictable kept examples, shown escaped
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt; nobody sleeps" in page
    assert "a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt; cat" in page
    assert "http://" not in page and "https://" not in page.replace("https://creativecommons", "")
    assert page.count("data:image/png;base64,") >= 5  # phases, histogram, labels, heatmaps
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


# --- what the report explains: why rows went, heatmaps, warnings, audits, parameters -------


def _minimal_run(tmp_path, summary=None, extra=None):
    """An output folder with just what render_report reads."""
    base = {
        "input": "x.jsonl",
        "counts": {"input": 4, "kept": 2, "removed": 2},
        "representation_bias": {"before": 0.5, "after": 0.4, "chance_after": 0.5},
    }
    (tmp_path / "summary.json").write_text(json.dumps(base | (summary or {})))
    (tmp_path / "result").mkdir(exist_ok=True)
    (tmp_path / "result" / "report_extra.json").write_text(json.dumps(extra or {}))
    return tmp_path


def test_why_removed_ranks_a_planted_token_first_with_its_counts():
    import numpy as np

    from aflite.reports.why import ngram_log_odds

    n = 200
    labels = np.array(["a"] * 100 + ["b"] * 100)
    texts = [f"a common sentence number {i % 7}" for i in range(n)]
    for i in list(range(20)) + [40, 41]:  # 20 removed rows of class a, 2 kept
        texts[i] += " zqxv"
    for i in range(100, 130):  # the token never marks class b's removed rows
        texts[i] += " other"
    removed = np.r_[np.arange(30), np.arange(100, 130)]
    kept = np.setdiff1d(np.arange(n), removed)
    hyp = {"hypothesis": texts}
    out = ngram_log_odds(hyp, labels, kept, removed)
    first = out["classes"]["a"]["rows"][0]
    assert first[:3] == ["zqxv", 20, 2]
    lo = np.log(20.5 / 10.5) - np.log(2.5 / 68.5)  # r=20 of 30 removed, k=2 of 70 kept
    assert first[3] == pytest.approx(lo, abs=1e-3)
    assert out["classes"]["a"]["header"][1:3] == [
        "removed rows with it (of 30)",
        "kept rows with it (of 70)",
    ]
    assert all(r[0] != "zqxv" for r in out["classes"]["b"]["rows"])
    assert out["classes"]["b"]["rows"][0][0] == "other"
    # with several fields each n-gram is named by its field
    two = ngram_log_odds({"premise": ["x y"] * n, **hyp}, labels, kept, removed)
    assert two["classes"]["a"]["rows"][0][0] == "hypothesis: zqxv"


@pytest.fixture(scope="module")
def dense_run():
    """12 classes of dense features with a planted indicator column per class."""
    import numpy as np
    from conftest import planted_data

    import aflite
    from aflite.reports.content import report_extra

    x, y, planted = planted_data(n=600, d=14, n_classes=12, share=0.4)
    result = aflite.filter(
        x, y, target_size=300, train_size=100, slice_size=60, n_partitions=8, threshold=0.5,
        progress=False,
    )  # fmt: skip
    return x, y, planted, result, report_extra(result, x, y, None, np.arange(len(y)))


def test_dense_features_explain_removal_by_nearest_removed_neighbours(dense_run, tmp_path):
    x, y, planted, result, extra = dense_run
    why = extra["why_removed"]
    assert why["kind"] == "neighbours" and len(why["classes"]) == 12
    # planted rows are removed together with their look-alikes of the same label
    assert why["same_label"]["removed"] > 0.9 > 0.3 > why["same_label"]["kept"]
    table = why["classes"]["0"]
    assert table["header"][:3] == ["id", "score", "neighbour 1 (label, distance)"]
    first = table["rows"][0]
    assert planted[int(first[0])] and y[int(first[0])] == 0
    assert first[2].split(" ")[1] == "(0,"  # its nearest removed row has its label
    page = render_report(_minimal_run(tmp_path, extra={"why_removed": why}))
    assert "<h2>Why removed</h2>" in page and "neighbour 1 (label, distance)" in page


def test_heatmaps_for_every_class_up_to_a_stated_cap(dense_run, tmp_path):
    *_, extra = dense_run
    assert extra["heatmap_classes"] == {"total": 12, "shown": 10, "skipped": {}}
    assert sorted(extra["heatmaps"], key=int) == [str(c) for c in range(10)]
    info = {
        "heatmap_classes": {"total": 25, "shown": 10, "skipped": {"z": "1 kept and 0 removed rows"}}
    }
    page = render_report(_minimal_run(tmp_path, extra=info))
    assert "Heatmaps: first 10 of 25 classes shown." in page
    assert "No heatmap for class z: 1 kept and 0 removed rows" in page


def test_heatmap_axes_are_labelled():
    import numpy as np

    from aflite.reports.plots import heatmap_figure

    fig = heatmap_figure("$x$", np.eye(5).tolist(), 2)
    ax = fig.axes[0]
    assert ax.get_xlabel() == ax.get_ylabel() == "sampled rows"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["kept (2)", "removed (3)"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["kept (2)", "removed (3)"]
    assert fig.axes[1].get_ylabel().startswith("cosine similarity")
    assert ax.get_title() == r"Cosine similarity, class \$x\$"


def test_legends_cover_no_bar_or_line():
    import matplotlib.pyplot as plt

    from aflite.reports.plots import label_figure, phase_figures

    hist = [0] * 19 + [5]
    history = [
        {"phase": p, "size_before": 900 - 60 * p, "n_removed": 60, "representation_bias": 0.5,
         "chance": 0.34, "score_histogram": hist}
        for p in range(4)
    ]  # fmt: skip
    # equal, tall bars fill the axes: a legend inside would hide one
    figs = [label_figure({"a": 300, "b": 300, "c": 300}, {"a": 290, "b": 295, "c": 299})]
    figs += phase_figures(history)
    for fig in figs:
        renderer = fig.canvas.get_renderer()
        legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        assert legends, "no legend"
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                assert not box.overlaps(ax.get_tightbbox(renderer))
        plt.close(fig)


def test_warnings_box_on_top_for_drift_and_below_chance(tmp_path):
    from aflite.reports.warnings import run_warnings

    below = {"representation_bias": {"after": 0.30, "chance_after": 0.34}}
    found = run_warnings(below)
    assert len(found) == 1 and found[0].startswith(
        "the kept rows' representation bias 0.300 is 0.040 below chance (0.340)"
    )
    assert run_warnings({"representation_bias": {"after": 0.325, "chance_after": 0.34}}) == []
    audits = [
        {"name": "baseline (kept)", "tag": "kept", "summary": "",
         "table": {"header": ["model", "accuracy", "majority class"], "rows": [["lr", 0.2, 0.5]]}},
        {"name": "baseline (before)", "tag": "before", "summary": "",
         "table": {"header": ["model", "accuracy", "majority class"], "rows": [["lr", 0.2, 0.5]]}},
    ]  # fmt: skip
    assert run_warnings({}, {"audits": audits}) == [
        "baseline (kept): accuracy 0.200 is 0.300 below the majority class (0.500) on the kept rows"
    ]
    counts = {
        "input": 300,
        "kept": 230,
        "removed": 70,
        "labels_before": {"a": 100, "b": 100, "c": 100},
        "labels_kept": {"a": 30, "b": 100, "c": 100},
    }
    page = render_report(_minimal_run(tmp_path, {"counts": counts} | below))
    box = page[page.index("<div class='warn'>") : page.index("<div class='cards'>")]
    assert "share of label a moved by 20.3 points (33.3% -&gt; 13.0%)" in box
    assert "below chance" in box and box.count("<li>") == 2


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


def test_parameters_name_the_features_and_fields(run_dir, tmp_path):
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
    fields = {"label": "label", "text": ["hypothesis"], "id": "id", "group": None,
              "split": "train", "picked": ["text", "id"]}  # fmt: skip
    page = render_report(_minimal_run(tmp_path, {"fields": fields}))
    assert "<td>text fields</td><td>hypothesis (picked: the only text column)</td>" in page
    assert "<td>id field</td><td>id (picked: a column named id)</td>" in page
    assert "<td>split</td><td>train</td>" in page


@pytest.mark.slow
def test_a_planted_token_leads_why_removed_in_a_whole_run(tmp_path_factory):
    from aflite.data import bundled_snli

    d = tmp_path_factory.mktemp("planted")
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:600]]
    planted = [i for i, r in enumerate(rows) if r["label"] == "contradiction"][:40]
    for i in planted:
        rows[i]["hypothesis"] += " zqxv"
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(
        input=str(src), text_fields=["hypothesis"], target_size=0.5, train_size=0.3,
        slice_size=40, threshold=0.5, min_bias=None, n_partitions=16, out_dir=str(d / "out"),
        cache_dir=None,
    )  # fmt: skip
    outcome = run_filter_job(job, progress=False)
    extra = json.loads((d / "out" / "result" / "report_extra.json").read_text())
    first = extra["why_removed"]["classes"]["contradiction"]["rows"][0]
    assert first[0] == "zqxv" and first[1] > 2 * first[2]  # mostly removed rows hold it
    page = (d / "out" / "report.html").read_text()
    why = page[page.index("<h2>Why removed</h2>") : page.index("<h2>Nearest-neighbour")]
    assert "<td>zqxv</td>" in why
    # the run went below chance: the summary text and the report say so
    assert "warning: the kept rows' representation bias" in outcome.summary_text
    assert "below chance" in page[: page.index("<div class='cards'>")]
