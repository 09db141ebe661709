"""The report's typed data: the JSON of ``result/report_extra.json`` read and written back
unchanged, and files of other shapes read for the parts they have."""

from __future__ import annotations

import json

import numpy as np

from aflite.reports.data import (
    FILE,
    BiasControl,
    Heatmap,
    HeatmapClasses,
    ItemExample,
    KnnTable,
    ReportData,
    Table,
    WhyRemoved,
)

FULL = {
    "top_removed": {"a": [{"score": 0.9, "id": "3", "text": "x"}]},
    "top_kept": {"a": [{"score": 0.1, "id": "4", "text": "y"}]},
    "heatmaps": {"a": {"similarity": [[1.0, 0.5], [0.5, 1.0]], "n_kept": 1}},
    "items": {
        "removed": [{"score": 0.9, "context": "c", "choices": ["x", "y"], "answer": 1, "id": "3"}],
        "kept": [{"score": 0.1, "context": None, "choices": ["u", "v", "w"], "answer": 0}],
    },
    "heatmap_classes": {"total": 2, "shown": 1, "skipped": {"b": "1 kept and 0 removed rows"}},
    "why_removed": {
        "kind": "neighbours",
        "classes": {"a": {"header": ["id", "score"], "rows": [["3", 0.9]]}},
        "skipped": {},
        "same_label": {"removed": 1.0},
        "note": "why",
    },
    "images": {"removed": "data:image/png;base64,AAAA"},
    "knn": {"header": ["class"], "rows": [["a"]], "control_size": 5},
    "bias_control": {
        "train_size": 2,
        "size": 5,
        "before": 0.6,
        "kept": 0.4,
        "random": None,
        "note": "t = 2 leaves none",
    },  # fmt: skip
    "audits": [{"name": "pmi (before)", "tag": "before", "summary": "", "table": {}}],
}


def test_a_full_document_reads_into_types_and_writes_back_byte_for_byte(tmp_path):
    data = ReportData.from_json(FULL)
    assert data.heatmaps["a"] == Heatmap([[1.0, 0.5], [0.5, 1.0]], 1)
    assert data.heatmap_classes == HeatmapClasses(2, 1, {"b": "1 kept and 0 removed rows"})
    assert data.why_removed.kind == "neighbours" and data.why_removed.same_label == {"removed": 1.0}
    assert data.why_removed.classes["a"] == Table(["id", "score"], [["3", 0.9]])
    assert data.items.removed == [ItemExample(0.9, "c", ["x", "y"], 1, "3")]
    assert data.items.kept == [ItemExample(0.1, None, ["u", "v", "w"], 0)]
    assert data.knn == KnnTable(["class"], [["a"]], 5)
    assert data.bias_control == BiasControl(2, 5, 0.6, 0.4, None, "t = 2 leaves none")
    assert data.to_json() == FULL
    path = data.save(tmp_path)
    assert path == tmp_path / FILE
    assert path.read_text() == json.dumps(FULL)  # the order of keys too
    assert ReportData.load(tmp_path) == data


def test_an_ngram_explanation_keeps_its_key_order_and_has_no_same_label():
    why = {"kind": "ngrams", "classes": {}, "skipped": {"b": "none"}, "note": "n"}
    parsed = WhyRemoved.from_json(why)
    assert parsed.same_label is None
    assert json.dumps(parsed.to_json()) == json.dumps(why)


def test_numpy_numbers_are_written_as_json_numbers(tmp_path):
    data = ReportData(top_removed={"a": [{"score": np.float32(0.5), "id": "1"}]})
    back = json.loads(data.save(tmp_path).read_text())
    assert back["top_removed"]["a"][0]["score"] == 0.5


def test_missing_or_misshapen_parts_are_left_out(tmp_path):
    assert ReportData.load(tmp_path) == ReportData()  # a run without the file
    odd = {
        "images": ["not", "a", "mapping"],
        "heatmaps": {"a": {"similarity": []}, "b": "x"},
        "why_removed": "text",
        "bias_control": [],
        "audits": [{"name": "kept"}, "junk"],
        "top_kept": None,
        "items": {
            "removed": [
                {"choices": "x y", "answer": 0, "score": 1},
                {"choices": ["a"]},
                {"choices": ["a", "b"], "answer": 1, "score": 0.5},
            ],
            "kept": 3,
        },
    }
    data = ReportData.from_json(odd)
    assert data.images is None and data.heatmaps == {} and data.why_removed is None
    assert data.bias_control is None and data.top_kept == {}
    assert data.audits == [{"name": "kept"}]
    assert data.items.removed == [ItemExample(0.5, None, ["a", "b"], 1)] and data.items.kept == []
    assert ReportData.from_json(["a list"]) == ReportData()
