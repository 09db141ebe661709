"""What the report explains beyond the numbers: why rows were removed (n-grams or nearest
neighbours), heatmaps for every class, legends that hide nothing, the warnings box and the
parameters; each from small inputs, plus one whole run with a planted token."""

from __future__ import annotations

import json

import pytest

from aflite.jobs import FilterJob, run_filter_job
from aflite.reports import render_report


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
    from aflite.reports.content import report_data

    x, y, planted = planted_data(n=600, d=14, n_classes=12, share=0.4)
    result = aflite.filter(
        x, y, target_size=300, train_size=100, slice_size=60, n_partitions=8, threshold=0.5,
        progress=False,
    )  # fmt: skip
    return x, y, planted, result, report_data(result, x, y, np.arange(len(y))).to_json()


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
    cells = [v for hm in extra["heatmaps"].values() for row in hm["similarity"] for v in row]
    assert cells and all(round(v, 3) == v for v in cells)  # no float32 digits in the JSON
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
    assert ax.get_title() == r"Cosine similarity (centred features), class \$x\$"


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
    from aflite.reports.data import ReportData
    from aflite.reports.warnings import run_warnings

    below = {"representation_bias": {"after": 0.30, "chance_after": 0.34}}
    found = run_warnings(below)
    assert len(found) == 1 and found[0].startswith(
        "the kept rows' representation bias 0.300 is 0.040 below chance (0.340): models trained "
        "on them pick the wrong label more often than the majority rate, a new artifact"
    )
    assert run_warnings({"representation_bias": {"after": 0.325, "chance_after": 0.34}}) == []
    # items: the choice-wise model has no position term, so between its guess (mean 1/K) and
    # a skewed answer position's share is no artifact; below the guess still is
    items = {"representation_bias": {"after": 0.485, "chance_after": 0.52}, "items": {"guess": 0.5}}
    assert run_warnings(items) == []  # 0.035 under the position share, 0.015 under the guess
    items["representation_bias"]["after"] = 0.45
    assert run_warnings(items)[0].startswith(
        "the kept rows' representation bias 0.450 is 0.050 below chance (0.500, a guess among "
        "each item's choices): models trained on them pick the wrong choice more often than a "
        "guess, a new artifact"
    )
    audits = [
        {"name": "baseline (kept)", "tag": "kept", "summary": "",
         "table": {"header": ["model", "accuracy", "majority class"], "rows": [["lr", 0.2, 0.5]]}},
        {"name": "baseline (before)", "tag": "before", "summary": "",
         "table": {"header": ["model", "accuracy", "majority class"], "rows": [["lr", 0.2, 0.5]]}},
    ]  # fmt: skip
    # the input was as far below: filtering did not put the kept rows there
    assert run_warnings({}, ReportData(audits=audits)) == []
    audits[1]["table"]["rows"] = [["lr", 0.5, 0.5]]
    assert run_warnings({}, ReportData(audits=audits)) == [
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


def _baseline(tag: str, *rows: list) -> dict:
    return {
        "name": f"baseline ({tag})",
        "summary": "",
        "table": {"header": ["model", "accuracy", "majority class"], "rows": list(rows)},
    }


def test_compare_set_below_chance_is_news_only_where_input_is_not_as_far_below():
    from aflite.reports.warnings import audit_warnings

    def warned(compare: list, reference: list | None) -> list[str]:
        return audit_warnings(compare, rows="the compare set", reference=reference)

    compare = [_baseline("compare", ["lr", 0.047, 0.336])]
    flagged = [
        "baseline (compare): accuracy 0.047 is 0.289 below the majority class (0.336) on the "
        "compare set"
    ]
    assert warned(compare, None) == flagged
    # INPUT further below (0.318) or as far: nothing new on the compare set
    assert warned(compare, [_baseline("input", ["lr", 0.015, 0.333])]) == []
    assert warned(compare, [_baseline("input", ["lr", 0.044, 0.333])]) == []
    # INPUT less far below, at chance, or another audit's or row's figure: still flagged
    for reference in (
        [_baseline("input", ["lr", 0.30, 0.333])],
        [_baseline("input", ["lr", 0.5, 0.333])],
        [{**_baseline("input", ["lr", 0.015, 0.333]), "name": "other (input)"}],
        [_baseline("input", ["knn", 0.015, 0.333])],
    ):
        assert warned(compare, reference) == flagged, reference
    # rows matched by their text cells, each on its own
    two = [_baseline("compare", ["lr", 0.1, 0.5], ["mlp", 0.1, 0.5])]
    found = warned(two, [_baseline("input", ["mlp", 0.1, 0.5], ["lr", 0.4, 0.5])])
    assert found == [
        "baseline (compare): accuracy 0.100 is 0.400 below the majority class (0.500) on the "
        "compare set"
    ]


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
        input=str(src), text=["hypothesis"], target_size=0.5, train_size=0.3,
        slice_size=40, threshold=0.5, min_bias=None, n_partitions=16, out_dir=str(d / "out"),
        cache_dir=None,
    )  # fmt: skip
    outcome = run_filter_job(job, progress=False)
    extra = json.loads((d / "out" / "result" / "report_extra.json").read_text())
    first = extra["why_removed"]["classes"]["contradiction"]["rows"][0]
    # mostly removed rows hold it (23 to 27 of the 40 across seeds and families)
    assert first[0] == "zqxv" and first[1] > first[2]
    page = (d / "out" / "report.html").read_text()
    why = page[page.index("<h2>Why removed</h2>") : page.index("<h2>Nearest-neighbour")]
    # the n-gram is a link that filters the table of rows to those that contain it
    assert "data-ngram='zqxv' data-field=''" in why and ">zqxv</button></td>" in why
    # the run went below chance: the summary text and the report say so
    assert any("warning: the kept rows' representation bias" in n for n in outcome.notices)
    assert "below chance" in page[: page.index("<div class='cards'>")]


def test_parameters_mark_picked_fields_and_show_the_split(tmp_path):
    fields = {"label": "label", "text": ["hypothesis"], "id": "id", "group": None,
              "split": "train", "picked": ["text", "id"]}  # fmt: skip
    page = render_report(_minimal_run(tmp_path, {"fields": fields}))
    assert "<td>text fields</td><td>hypothesis (picked: the only text column)</td>" in page
    assert "<td>id field</td><td>id (picked: a column named id)</td>" in page
    assert "<td>split</td><td>train</td>" in page
