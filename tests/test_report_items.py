"""The report of a run on multiple-choice items: example items shown whole (context, every
choice, the right one marked, escaped), and why items were removed as the words that mark
their right choices, from small in-memory items with a planted give-away word."""

from __future__ import annotations

import json
import math
import re
from types import SimpleNamespace

import numpy as np
import pytest

from aflite.io.labelled import read_labelled
from aflite.reports import render_report
from aflite.reports.content import item_examples
from aflite.reports.data import Heatmap, ItemExample, ItemExamples, ReportData
from aflite.reports.items_html import RIGHT_MARK, item_html
from aflite.reports.why import RIGHT_CHOICES, right_choice_words

WORDS = "cat dog ran sat blue red tree house car road sun moon".split()


def mc_rows(n=60, k=3, planted=30, seed=0):
    """``n`` items of ``k`` random three-word choices; the right choice of the first
    ``planted`` items ends in the give-away word ``zxq``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        opts = [" ".join(rng.choice(WORDS, 3)) for _ in range(k)]
        y = int(rng.integers(k))
        if i < planted:
            opts[y] += " zxq"
        rows.append({"id": f"q{i}", "ctx": f"context {i}", "endings": opts, "label": y})
    return rows


def choices_of(rows):
    return read_labelled(rows, label="label", choices="endings", context="ctx").choices


def test_the_planted_right_choice_word_leads_with_its_counts_and_pmi():
    items = choices_of(mc_rows())
    removed = np.arange(20)  # 20 removed items, each with zxq in its right choice
    kept = np.arange(20, 60)  # 10 kept items with it, 30 without
    why = right_choice_words(items, kept, removed)
    assert why["kind"] == "choice-words" and list(why["classes"]) == [RIGHT_CHOICES]
    table = why["classes"][RIGHT_CHOICES]
    assert table["header"][1] == "right choices with it (of 20 removed items)"
    first = table["rows"][0]
    # reference: add-1 smoothed p(right | zxq) over p(right) = 1/3 (three choices an item)
    assert first[:3] == ["zxq", 20, 20]
    assert first[3] == pytest.approx(math.log2((21 / 22) / (1 / 3)), abs=1e-3)
    assert first[4] == pytest.approx(math.log2((31 / 32) / (1 / 3)), abs=1e-3)  # all 60
    assert first[5] == pytest.approx(math.log2((11 / 12) / (1 / 3)), abs=1e-3)  # 40 kept
    assert all(r[3] > 0 for r in table["rows"])  # only words that mark the right choice
    assert [r[3] for r in table["rows"]] == sorted((r[3] for r in table["rows"]), reverse=True)


def test_a_word_absent_from_the_kept_items_has_no_pmi_there_and_no_removal_no_table():
    items = choices_of(mc_rows(n=40, planted=20))
    why = right_choice_words(items, np.arange(20, 40), np.arange(20))  # every zxq removed
    assert why["classes"][RIGHT_CHOICES]["rows"][0][0] == "zxq"
    assert why["classes"][RIGHT_CHOICES]["rows"][0][5] is None
    assert right_choice_words(items, np.arange(40), np.arange(0))["classes"] == {}


def test_a_two_word_give_away_is_listed_when_its_words_alone_mark_nothing():
    rows = mc_rows(n=30, planted=0)
    for r in rows[:20]:  # "gone home" ends the right choice, "home gone" every wrong one
        r["endings"] = [o + (" gone home" if j == r["label"] else " home gone")
                        for j, o in enumerate(r["endings"])]  # fmt: skip
    why = right_choice_words(choices_of(rows), np.arange(20, 30), np.arange(20))
    table = why["classes"][RIGHT_CHOICES]["rows"]
    assert table[0][:3] == ["gone home", 20, 20]
    assert "gone" not in [r[0] for r in table] and "home" not in [r[0] for r in table]


def test_example_items_are_whole_most_predictable_removed_and_least_predictable_kept():
    items = choices_of(mc_rows(n=6, planted=0))
    result = SimpleNamespace(
        removed=np.array([4, 1, 3]), removed_score=np.array([0.5, 0.9, 0.7]),
        kept=np.array([0, 2, 5]), kept_scores=np.array([0.4, 0.1, 0.3]),
    )  # fmt: skip
    got = item_examples(result, items, [f"q{i}" for i in range(6)], n_removed=2, n_kept=2)
    assert [e.id for e in got.removed] == ["q1", "q3"] and [e.score for e in got.removed] == [
        0.9,
        0.7,
    ]
    assert [e.id for e in got.kept] == ["q2", "q5"]
    first = got.removed[0]
    assert first.context == "context 1" and first.choices == items.options[1]
    assert first.answer == int(items.answers[1])
    # a kept item left unscored (NaN) is not shown as the least predictable
    result.kept_scores = np.array([0.4, np.nan, 0.3])
    got = item_examples(result, items, [f"q{i}" for i in range(6)], n_removed=2, n_kept=2)
    assert [e.id for e in got.kept] == ["q5", "q0"]


def _run_folder(tmp_path, extra):
    summary = {"input": "mc.jsonl", "counts": {"input": 4, "kept": 2, "removed": 2},
               "representation_bias": {"before": 0.6, "after": 0.4}}  # fmt: skip
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    (tmp_path / "result").mkdir()
    ReportData.from_json(extra).save(tmp_path)
    return tmp_path


def test_an_item_shows_its_context_and_every_choice_the_right_one_marked_and_escaped(tmp_path):
    item = ItemExample(0.875, "A <i>cup</i> fell & broke.", ["it <b>broke</b>", "it flew"], 1, "q7")
    html = item_html(item)
    assert "id q7 \u00b7 predictability score 0.875" in html
    assert "A &lt;i&gt;cup&lt;/i&gt; fell &amp; broke." in html
    assert "<li><span class='mark'></span>it &lt;b&gt;broke&lt;/b&gt;</li>" in html
    assert (
        f"<li class='right'><span class='mark' title='the right choice'>{RIGHT_MARK}</span>"
        "<b>it flew</b></li>" in html
    )
    assert "<b>broke</b>" not in html and "<i>" not in html
    extra = {"items": ItemExamples([item], []).to_json()}
    page = render_report(_run_folder(tmp_path, extra))
    assert "<h2>Most predictable removed items</h2>" in page and html in page
    assert "Least predictable kept items" not in page


def test_a_run_on_items_reports_removed_items_whole_and_the_planted_word(tmp_path):
    from aflite.jobs import FilterJob, run_filter_job

    rows = mc_rows(n=80, planted=40)
    rows[0]["endings"][(rows[0]["label"] + 1) % 3] += " <b>bold</b>"
    src = tmp_path / "mc.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(
        input=str(src), choices="endings", context=("ctx",), label="label",
        choice_context="none", features="ngrams:min_df=1", n_partitions=8, train_size=0.5,
        min_bias=None, target_size=50, slice_size=10, out_dir=str(tmp_path / "out"),
        cache_dir=None,
    )  # fmt: skip
    run_filter_job(job, progress=False)
    extra = ReportData.load(tmp_path / "out")
    assert extra.top_removed == {} and extra.top_kept == {}  # items, not rows per position
    # neighbours and heatmaps of items as one group, not per answer position
    assert {r[0] for r in extra.knn.rows} == {"items"} and list(extra.heatmaps) == ["items"]
    assert len(extra.items.removed) == 16 and len(extra.items.kept) == 4
    scores = [e.score for e in extra.items.removed]
    assert scores == sorted(scores, reverse=True)
    by_id = {r["id"]: r for r in rows}
    for e in extra.items.removed + extra.items.kept:  # each item whole, as in the input
        row = by_id[e.id]
        assert (e.context, e.choices, e.answer) == (row["ctx"], row["endings"], row["label"])
    why = extra.why_removed.classes[RIGHT_CHOICES].rows
    assert why[0][0] == "zxq" and why[0][1] == why[0][2]  # only ever in right choices
    page = (tmp_path / "out" / "report.html").read_text()
    shown = page[page.index("<h2>Most predictable removed items</h2>") :]
    first = by_id[extra.items.removed[0].id]
    block = shown[shown.index("<div class='item'>") : shown.index("</ol></div>")]
    assert f"<p class='ctx'>{first['ctx']}</p>" in block
    for j, choice in enumerate(first["endings"]):
        if j == first["label"]:
            assert f"{RIGHT_MARK}</span><b>{choice}</b></li>" in block
        else:
            assert f"<span class='mark'></span>{choice}</li>" in block
    assert "<b>bold</b>" not in page
    why_html = page[page.index("<h2>Why removed</h2>") :]
    assert "<h3>right choices</h3>" in why_html and "<td>zxq</td>" in why_html
    # the export names, for each removed item, the listed words its choices hold
    from aflite.exports.rows import load_review_rows

    listed = {r[0] for r in why}
    exported, _ = load_review_rows(tmp_path / "out")
    assert exported and all(r.split == "removed" for r in exported)
    for r in exported:
        grams = set()  # the words and two-word runs of each choice
        for choice in by_id[r.id]["endings"]:
            w = choice.lower().split()
            grams |= set(w) | {f"{a} {b}" for a, b in zip(w, w[1:])}
        assert set(r.why_removed) == listed & grams
    assert any("zxq" in r.why_removed for r in exported)


def _visible(page):
    """The words a reader sees or hears: text, alt texts and labels, not scripts or styles."""
    page = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    page = re.sub(r"src='data:[^']*'", "", page)
    return re.sub(r"<p><b>Stopped:</b>.*?</p>", "", page)  # the filter's own stop message


def test_a_page_on_items_says_items_where_a_page_on_rows_says_rows(tmp_path):
    from aflite.reports.data import BiasControl, KnnTable

    extra = ReportData(
        knn=KnnTable(["class", "neighbours", "set"], [["a", "same", "all (4)", 0.1]], 2),
        bias_control=BiasControl(2, 2, 0.6, 0.4, 0.5),
        heatmaps={"a": Heatmap([[1.0, 0.1], [0.1, 1.0]], 1)},
    ).to_json()
    (tmp_path / "rows").mkdir()
    (tmp_path / "items").mkdir()
    rows_page = render_report(_run_folder(tmp_path / "rows", extra))
    items_dir = _run_folder(tmp_path / "items", extra)
    summary = json.loads((items_dir / "summary.json").read_text())
    (items_dir / "summary.json").write_text(json.dumps(summary | {"items": {"n_choices": 3}}))
    items_page = render_report(items_dir)
    for said in ("rows in", "(2 rows), scored at the same t (2 training rows)",
                 "(held-out to training rows)", "sampled kept and removed rows of class a"):  # fmt: skip
        assert said in rows_page and said.replace("rows", "items") in items_page
    assert not re.search(r"\brows?\b", _visible(items_page))


def test_a_run_on_items_says_items_in_its_page_warnings_and_plots(tmp_path):
    from aflite.jobs import FilterJob, run_filter_job
    from aflite.reports.plots import heatmap_figure, label_figure, phase_figures
    from aflite.reports.warnings import run_warnings

    src = tmp_path / "mc.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in mc_rows(n=80, planted=40)))
    job = FilterJob(
        input=str(src), choices="endings", context=("ctx",), label="label",
        choice_context="none", features="ngrams:min_df=1", n_partitions=8, train_size=0.5,
        min_bias=None, target_size=50, slice_size=10, out_dir=str(tmp_path / "out"),
        cache_dir=None,
    )  # fmt: skip
    run_filter_job(job, progress=False)
    page = (tmp_path / "out" / "report.html").read_text()
    seen = _visible(page)
    assert "<h2>All items</h2>" in seen and "items in" in seen
    assert "the kept items&#x27; representation bias" in seen  # the warnings box
    assert not re.search(r"\brows?\b", seen), re.findall(r".{60}\brows?\b.{60}", seen)
    assert '"noun":"item"' in page  # the table's counts and pages say items
    assert ReportData.load(tmp_path / "out").knn.header[2] == "items"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary["representation_bias"] |= {"after": 0.1, "chance_after": 0.5}
    summary["parameters"]["train_size"] = 20  # under 10 an answer position
    found = " | ".join(run_warnings(summary, nouns="items"))
    assert "the kept items' representation bias 0.100" in found
    assert "trains on 20 of 80 items (--train-size)" in found and "rows" not in found
    assert "the kept rows' representation bias 0.100" in " ".join(run_warnings(summary))
    history = summary["history"]
    fig = phase_figures(history, "items")[0]
    assert fig.axes[0].get_ylabel() == "items" and fig.axes[0].get_title().startswith("Items")
    assert label_figure({"0": 3}, {"0": 2}, "items").axes[0].get_ylabel() == "items"
    assert heatmap_figure("a", [[1.0, 0.2], [0.2, 1.0]], 1, "items").axes[0].get_xlabel() == (
        "sampled items"
    )
