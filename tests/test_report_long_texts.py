"""Long texts in a report: cut to a few hundred characters with their length and the row file
and id that hold them whole, so that neither report.html nor report_extra.json grows with the
length of a text; example rows, items, tables and audits alike."""

from __future__ import annotations

import json

import numpy as np
import pytest

from aflite.reports import render_report
from aflite.reports.data import ItemExample, ItemExamples, KnnTable, ReportData, Table, WhyRemoved
from aflite.reports.shorten import MAX_TEXT_CHARS, shorten, shorten_all

BIG = 2_000_000


def _strings(v):
    """Every string in a JSON document, dict keys included."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)


def test_a_long_text_is_cut_to_the_limit_with_its_length_and_where_it_is_whole():
    short = "a" * MAX_TEXT_CHARS
    assert shorten(short, "removed.jsonl, id 7") is short and shorten(3.5) == 3.5
    text = "word " * 2_000_000
    got = shorten(text, "removed.jsonl, id 7")
    note = "\u2026 (10,000,000 characters; full text in removed.jsonl, id 7)"
    assert got == text[: MAX_TEXT_CHARS - len(note)] + note and len(got) == MAX_TEXT_CHARS
    assert shorten(got) == got  # already short: never cut twice, the pointer stays
    assert shorten(text).endswith("\u2026 (10,000,000 characters)")
    # a pointer as long as a text points at nothing useful: the length alone
    assert shorten(text, "x" * 400).endswith("\u2026 (10,000,000 characters)")
    doc = {"k" * 500: ["z" * 500, 1, {"n": "y" * 500}]}
    assert max(map(len, _strings(shorten_all(doc)))) == MAX_TEXT_CHARS


def test_report_data_is_shortened_when_written_and_when_read(tmp_path):
    long = "x" * 10_000
    data = ReportData(
        top_removed={"a": [{"score": 0.9, "id": "7", "text": long}]},
        items=ItemExamples([ItemExample(0.8, long, [long, "b"], 0, "q1")], []),
        why_removed=WhyRemoved("ngrams", classes={"a": Table(["n-gram"], [[long, 3]])}),
        knn=KnnTable(["class", "neighbours", "rows"], [[long, "same", "all (4)", 0.1]], 2),
        audits=[{"name": "pmi", "summary": "", "tag": "kept",
                 "table": {"header": ["word"], "rows": [[long]]}, "details": {long: 1.0}}],
        images={"removed": "data:image/png;base64," + "A" * 10_000},
    )  # fmt: skip
    data.save(tmp_path)
    doc = json.loads((tmp_path / "result" / "report_extra.json").read_text())
    assert doc["images"]["removed"].endswith("A" * 10_000)  # a picture, not a text
    del doc["images"]
    assert max(map(len, _strings(doc))) == MAX_TEXT_CHARS
    assert doc["knn"]["rows"][0][0].endswith("(10,000 characters)")
    # a file written before texts were cut is cut when read, so its page is small too
    old = {"top_kept": {"a": [{"score": 0.1, "text": long}]}}
    assert len(ReportData.from_json(old).top_kept["a"][0]["text"]) == MAX_TEXT_CHARS


def test_example_items_cut_a_long_context_or_choice_naming_the_item():
    from types import SimpleNamespace

    from aflite.io.labelled import read_labelled
    from aflite.reports.content import item_examples

    rows = [{"id": f"q{i}", "ctx": "c " * 5000 if i == 1 else "ctx", "label": 0,
             "endings": ["yes " * 100, "no"]} for i in range(3)]  # fmt: skip
    items = read_labelled(rows, label="label", choices="endings", context="ctx").choices
    result = SimpleNamespace(
        removed=np.array([1]), removed_score=np.array([0.9]),
        kept=np.array([0, 2]), kept_scores=np.array([0.2, 0.3]),
    )  # fmt: skip
    got = item_examples(result, items, ["q0", "q1", "q2"])
    first = got.removed[0]
    assert first.context.endswith(
        "\u2026 (10,000 characters; full text in the removed items, id q1)"
    )
    assert first.choices[0].endswith("(400 characters; full text in the removed items, id q1)")
    assert first.choices[1] == "no" and got.kept[0].context == "ctx"
    assert len(first.context) == MAX_TEXT_CHARS


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    from aflite.data import bundled_snli
    from aflite.jobs import FilterJob, run_filter_job

    d = tmp_path_factory.mktemp("long")
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:500]]
    for r in rows:  # every example's text is long, so each shown is cut
        r["hypothesis"] += " and so on" * 40
    rows[3]["hypothesis"] = ("nobody sleeps " * BIG)[:BIG]
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(
        input=str(src), text=["premise", "hypothesis"], id="id", target_size=250,
        train_size=150, slice_size=50, threshold=0.5, min_bias=None, n_partitions=8,
        out_dir=str(d / "out"), cache_dir=None,
    )  # fmt: skip
    run_filter_job(job, progress=False, log=lambda s: None)
    return d / "out", rows[3]["id"]


def test_a_long_text_leaves_the_page_and_its_data_small_and_points_at_the_row(long_run):
    import pyarrow.parquet as pq

    out, big_id = long_run
    page = (out / "report.html").read_text(encoding="utf-8")
    extra = (out / "result" / "report_extra.json").read_text()
    assert len(page) < BIG // 4 and len(extra) < BIG // 20
    doc = json.loads(extra)
    doc.pop("images", None)
    assert max(map(len, _strings(doc))) <= MAX_TEXT_CHARS
    # the table of every row names the row file that holds the text whole, by the row's id
    scores = pq.read_table(out / "scores.parquet").to_pydict()
    split = scores["split"][scores["id"].index(big_id)]
    file = json.loads((out / "summary.json").read_text())["outputs"][split]
    assert f"(2,000,000 characters; full text in {file}, id {big_id})" in page
    assert "cut short here" in page
    # each example row's text is cut too, naming its row file and row
    outputs = json.loads((out / "summary.json").read_text())["outputs"]
    for which, part in (("removed", "top_removed"), ("kept", "top_kept")):
        shown = [r for rows in doc[part].values() for r in rows]
        assert shown
        for r in shown:
            assert r["hypothesis"].endswith(f"full text in {outputs[which]}, id {r['id']})")
    assert render_report(out) == page  # rendering again reads the same, cut, data
