"""aflite.filter_dataset / featurize / audit on the data types users hold."""

from __future__ import annotations

import json

import numpy as np
import pytest

import aflite
from aflite.errors import DataError


def _rows(n=300):
    # "nobody" gives the label away on a third of the rows: the artifact to remove
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        y = int(rng.integers(0, 2))
        words = " ".join(f"w{k}" for k in rng.integers(0, 30, 5))
        text = ("nobody " + words) if (y == 1 and i % 2 == 0) else words
        rows.append({"id": f"r{i}", "text": text, "label": y})
    return rows


OPTS = dict(target_size=200, train_size=100, slice_size=20, n_partitions=16, seed=0)


def test_list_of_dicts_in_lists_out_with_fields_picked():
    rows = _rows()
    out = aflite.filter_dataset(rows, label="label", **OPTS)
    assert isinstance(out.kept, list) and isinstance(out.kept[0], dict)
    ids = [r["id"] for r in out.kept] + [r["id"] for r in out.removed]
    assert sorted(ids) == sorted(r["id"] for r in rows)  # every row exactly once
    assert out.fields["text"] == ["text"] and out.fields["id"] == "id"
    assert set(out.fields["auto"]) == {"text", "id"}
    assert list(out.scores["id"]) == [r["id"] for r in rows]
    removed = set(out.scores.loc[out.scores["split"] == "removed", "id"])
    assert removed == {r["id"] for r in out.removed}
    # the planted rows go first: far more of them among the removed than among all rows (the
    # rows of label 0 are as easy to predict: a row without the word is most likely a 0)
    planted = {r["id"] for r in rows if r["text"].startswith("nobody")}
    assert len(removed & planted) / len(removed) > 1.5 * len(planted) / len(rows)
    assert "DatasetFilterResult(kept=" in repr(out) and len(repr(out)) < 200


def test_same_seed_same_result_and_dataframe_keeps_its_index():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_rows()).set_index(np.arange(1000, 1300))
    a = aflite.filter_dataset(df, label="label", text="text", **OPTS)
    b = aflite.filter_dataset(df, label="label", text="text", **OPTS)
    assert isinstance(a.kept, pd.DataFrame) and a.kept.index.min() >= 1000
    assert a.kept.index.equals(b.kept.index)
    assert len(a.kept) + len(a.removed) == len(df)
    assert str(a.scores["phase_removed"].dtype) == "Int64"


def test_hf_dataset_and_datasetdict_split(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(_rows())
    out = aflite.filter_dataset(ds, label="label", **OPTS)
    assert isinstance(out.kept, datasets.Dataset) and len(out.kept) + len(out.removed) == 300
    dd = datasets.DatasetDict({"train": ds})
    with pytest.raises(DataError, match="split.*train"):
        aflite.filter_dataset(dd, label="label", **OPTS)
    assert len(aflite.filter_dataset(dd, label="label", split="train", **OPTS).kept) == len(
        out.kept
    )


def test_a_path_and_precomputed_features(tmp_path):
    import pandas as pd

    rows = _rows()
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = aflite.filter_dataset(path, label="label", **OPTS)
    assert isinstance(out.kept, pd.DataFrame) and list(out.kept.columns) == list(rows[0])
    x = aflite.featurize(rows, text="text")
    same = aflite.filter_dataset(rows, label="label", features=x, **OPTS)
    assert [r["id"] for r in same.kept] == list(out.kept["id"])
    two = [dict(r, other=r["text"]) for r in rows]  # no text field needed with a matrix
    assert len(aflite.filter_dataset(two, label="label", features=x, **OPTS).kept) == len(out.kept)
    with pytest.raises(DataError, match=r"expected an \(300, d\) matrix"):
        aflite.filter_dataset(rows, label="label", features=x[:10], **OPTS)


def test_mistakes_are_one_line_errors():
    rows = _rows()
    with pytest.raises(DataError, match="'lable' is missing.*did you mean 'label'"):
        aflite.filter_dataset(rows, label="lable")
    two = [dict(r, other=r["text"]) for r in rows]
    with pytest.raises(DataError, match=r"data: several text columns \(text, other\); .*text="):
        aflite.filter_dataset(two, label="label")
    with pytest.raises(TypeError, match="treshold; did you mean 'threshold'"):
        aflite.filter_dataset(rows, label="label", treshold=0.5)
    with pytest.raises(TypeError, match="choise; did you mean 'choices'"):  # a named argument
        aflite.filter_dataset(rows, label="label", choise="options")
    with pytest.raises(DataError, match="cannot read a int"):
        aflite.filter_dataset(3, label="label")
    bad = [dict(r) for r in rows]
    bad[7]["text"] = 5
    with pytest.raises(DataError, match=r"^data: row 8: field 'text' is not text \(5\)$"):
        aflite.filter_dataset(bad, label="label", text="text")


def test_audit_on_rows_finds_the_planted_word():
    results = aflite.audit(_rows(), label="label", audits=["pmi"], min_count=5)
    top = {row[0]: row[2] for row in results[0].rows if row[1] == 1}  # class -> rank-1 word
    assert top["1"] == "nobody"


def test_api_rough_edges_are_smoothed(tmp_path):
    import pandas as pd
    import scipy.sparse as sp

    rows = _rows()
    # a string where a list is taken
    one = aflite.audit(rows, label="label", text="text", audits="pmi")
    both = aflite.audit(rows, label="label", text="text", audits="pmi,zstats")
    assert one and {r.name for r in both} > {r.name for r in one}
    # scikit-learn's sparse TF-IDF output is taken as its rows
    x = aflite.featurize(rows, text="text")
    y = np.array([r["label"] for r in rows])
    dense = aflite.filter(x, y, train_size=60, slice_size=20, n_partitions=8, seed=0)
    sparse = aflite.filter(
        sp.csr_matrix(x), y, train_size=60, slice_size=20, n_partitions=8, seed=0
    )  # and target_size defaults to half the rows
    np.testing.assert_array_equal(dense.kept, sparse.kept)
    assert len(dense.kept) >= 150 and dense.params["target_size"] == 150
    # a None among the labels is named, not a numpy TypeError
    bad = y.astype(object)
    bad[7] = None
    with pytest.raises(ValueError, match="labels: row 7 is None"):
        aflite.filter(x, bad, train_size=60)
    # a file's rows come back as DataFrames, as a DataFrame's do
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = aflite.filter_dataset(str(path), label="label", **OPTS)
    assert isinstance(out.kept, pd.DataFrame) and isinstance(out.removed, pd.DataFrame)
    assert len(out.kept) + len(out.removed) == len(rows) and "text" in out.kept.columns


def test_class_label_names_come_back_as_names():
    datasets = pytest.importorskip("datasets")
    rows = _rows(120)
    ds = datasets.Dataset.from_list(rows).cast_column(
        "label", datasets.ClassLabel(names=["no", "yes"])
    )
    out = aflite.filter_dataset(
        ds, label="label", target_size=80, train_size=40, slice_size=10, n_partitions=8, seed=0
    )
    assert set(out.scores["label"]) == {"no", "yes"}


def test_filter_dataset_takes_sparse_features_as_aflite_filter_does():
    import scipy.sparse as sp

    rows = _rows()
    x = aflite.featurize(rows, text="text")
    dense = aflite.filter_dataset(rows, label="label", features=x, **OPTS)
    sparse = aflite.filter_dataset(rows, label="label", features=sp.csr_matrix(x), **OPTS)
    assert dense.fingerprint == sparse.fingerprint


def test_the_data_keywords_of_every_door_are_the_data_fields():
    # the data keywords are declared once, as DataFields; each door takes them by those names
    import dataclasses
    import inspect

    from aflite.config.fields import DataFields

    names = {f.name for f in dataclasses.fields(DataFields)}
    for fn in (aflite.filter_dataset, aflite.score_dataset, aflite.audit):
        assert names <= set(inspect.signature(fn).parameters), fn.__name__
