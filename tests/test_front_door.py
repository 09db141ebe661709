"""Every bad input gives the same one-line error through every door: ``aflite filter`` and
``aflite score`` on a file, :func:`aflite.filter_dataset` / :func:`aflite.score_dataset` on
the same file, on a DataFrame and on a list of dicts. The words are the same; only where the
input is named differs (``file:LINE``, ``DataFrame: row N``, ``data: row N``)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import run_in_process

import aflite
from aflite.errors import DataError
from aflite.io.labelled import read_labelled

pd = pytest.importorskip("pandas")

BAD_ROW = 3  # 0-based: the row each case spoils
FIRST = 1  # 0-based: the row a duplicate id first appears at


def _rows(n: int = 8) -> list[dict]:
    return [
        {"id": f"r{i}", "text": f"word{i % 3} other{i % 2}", "label": "ab"[i % 2]} for i in range(n)
    ]


def _spoil(**at_bad: object):
    def make() -> list[dict]:
        rows = _rows()
        rows[BAD_ROW].update(at_bad)
        return rows

    return make


def _numbers_as_text() -> list[dict]:
    return [dict(r, text=i) for i, r in enumerate(_rows())]


def _one_class() -> list[dict]:
    return [dict(r, label="a") for r in _rows()]


def _two_text_columns() -> list[dict]:
    return [dict(r, other=r["text"] + " more") for r in _rows()]


def _duplicate_id() -> list[dict]:
    rows = _rows()
    rows[BAD_ROW]["id"] = rows[FIRST]["id"]
    return rows


ID_NOTE = (
    " (a column named id is used as the id field; id 'none' numbers the rows instead: "
    "--id-field none / id='none')"
)
COLUMNS = "columns: id, text, label"
HINT = "name the text fields to use (--text-fields / text=)"

# name: (rows, keyword arguments, expected message with {at} {data} {missing} {first})
CASES = {
    "empty label": (_spoil(label=None), {}, "{at}: field 'label' is empty"),
    "NaN label": (_spoil(label=math.nan), {}, "{at}: field 'label' is empty"),
    "blank label": (_spoil(label=""), {}, "{at}: field 'label' is empty"),
    "list label": (_spoil(label=["a"]), {}, "{at}: field 'label' is not a class label (['a'])"),
    "one class": (_one_class, {}, "{data}: field 'label' has fewer than two classes"),
    "duplicate id": (
        _duplicate_id,
        {},
        "{at}: field 'id' duplicates id 'r1' (first at {first})" + ID_NOTE,
    ),
    "NaN id": (_spoil(id=math.nan), {}, "{at}: field 'id' is empty" + ID_NOTE),
    "duplicate named id": (
        _duplicate_id,
        {"id": "id"},
        "{at}: field 'id' duplicates id 'r1' (first at {first})",
    ),
    "numbers as text": (_numbers_as_text, {"text": "text"}, "{at0}: field 'text' is not text (0)"),
    "a number in text": (_spoil(text=5), {"text": "text"}, "{at}: field 'text' is not text (5)"),
    "a list in text": (
        _spoil(text=["a b"]),
        {"text": "text"},
        "{at}: field 'text' is not text (['a b'])",
    ),
    "blank text": (_spoil(text="  "), {"text": "text"}, "{at}: field 'text' is empty"),
    "missing label field": (
        _rows,
        {"label": "lable"},
        "{missing}: field 'lable' is missing (" + COLUMNS + "; did you mean 'label'?)",
    ),
    "missing text field": (
        _rows,
        {"text": "txt"},
        "{missing}: field 'txt' is missing (" + COLUMNS + "; did you mean 'text'?)",
    ),
    "missing id field": (
        _rows,
        {"id": "ident"},
        "{missing}: field 'ident' is missing (" + COLUMNS + ")",
    ),
    "missing group field": (
        _rows,
        {"group": "grp"},
        "{missing}: field 'grp' is missing (" + COLUMNS + ")",
    ),
    "several text columns": (
        _two_text_columns,
        {},
        "{data}: several text columns (text, other); " + HINT + ", e.g. text,other",
    ),
    "no text column": (
        _numbers_as_text,
        {},
        "{data}: no text column besides the label, id and group fields (" + COLUMNS + "); " + HINT,
    ),
}

FLAGS = {"label": "--label-field", "text": "--text-fields", "id": "--id-field",
         "group": "--group-field"}  # fmt: skip


def _where(door: str, path: str) -> dict[str, str]:
    if door == "file":
        return {"at": f"{path}:{BAD_ROW + 1}", "at0": f"{path}:1", "data": path,
                "missing": f"{path}:1", "first": str(FIRST + 1)}  # fmt: skip
    if door == "frame":  # named by the index label, which df.loc finds
        return {"at": f"DataFrame: row {BAD_ROW}", "at0": "DataFrame: row 0", "data": "DataFrame",
                "missing": "DataFrame", "first": f"row {FIRST}"}  # fmt: skip
    return {"at": f"data: row {BAD_ROW + 1}", "at0": "data: row 1", "data": "data",
            "missing": "data", "first": f"row {FIRST + 1}"}  # fmt: skip


def _api_error(fn, data, kwargs: dict) -> str:
    kw = {"label": "label"} | kwargs
    with pytest.raises(DataError) as e:
        fn(data, device="cpu", **kw)
    return str(e.value)


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_error_through_every_door(case, tmp_path):
    make, kwargs, template = CASES[case]
    rows = make()
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # NaN as JSON's NaN
    args = [a for k, v in kwargs.items() for a in (FLAGS[k], str(v))]
    expected = template.format(**_where("file", str(path)))
    for command in ("filter", "score"):
        r = run_in_process(command, str(path), *args, "--out-dir", str(tmp_path / command))
        assert (r.returncode, r.stderr) == (2, f"aflite: error: {expected}\n"), command
    assert not (tmp_path / "filter").exists() and not (tmp_path / "score").exists()
    for fn in (aflite.filter_dataset, aflite.score_dataset):
        assert _api_error(fn, str(path), kwargs) == expected
        assert _api_error(fn, pd.DataFrame(make()), kwargs) == template.format(
            **_where("frame", "")
        )
        assert _api_error(fn, make(), kwargs) == template.format(**_where("rows", ""))


def test_a_dataframe_column_of_nan_labels_is_refused_not_a_class():
    df = pd.DataFrame(_rows())
    df["label"] = [0, 1, math.nan, 1, 0, 1, 0, 1]  # a float column, as pandas makes it
    with pytest.raises(DataError, match=r"^DataFrame: row 2: field 'label' is empty$"):
        aflite.filter_dataset(df, label="label")


def test_a_dataframe_row_is_named_by_its_index_label():
    rows = _rows()
    rows[4]["label"] = None
    df = pd.DataFrame(rows).set_index(pd.Index([f"r{i}" for i in range(8)]))
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(df, label="label")
    assert str(e.value) == "DataFrame: row 'r4' (position 4): field 'label' is empty"
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(df.reset_index(drop=True), label="label")
    assert str(e.value) == "DataFrame: row 4: field 'label' is empty"
    shifted = df.set_index(pd.Index(range(100, 108)))
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(shifted, label="label")
    assert str(e.value) == "DataFrame: row 104 (position 4): field 'label' is empty"


def test_picks_are_returned_and_subsets_keep_the_input_type(tmp_path):
    rows = _rows()
    df = pd.DataFrame(rows).set_index(pd.Index(range(100, 108)))
    for data in (rows, df):
        got = read_labelled(data)
        assert got.fields.text == ("text",) and got.fields.id == "id"
        assert got.picked == ["text", "id"]
        assert got.labels.tolist() == [r["label"] for r in rows]
    assert read_labelled(rows).subset([2, 0]) == [rows[2], rows[0]]
    sub = read_labelled(df).subset([2, 0])
    assert isinstance(sub, pd.DataFrame) and sub.index.tolist() == [102, 100]
    assert read_labelled(rows, id="none").ids == list(range(8))
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_labelled(str(path)).subset([1]) == [rows[1]]


def test_a_hf_dataset_reads_like_the_others():
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(_spoil(label="")())
    with pytest.raises(DataError) as e:
        read_labelled(ds)
    assert str(e.value) == "Dataset: row 4: field 'label' is empty"
    good = read_labelled(datasets.DatasetDict({"train": datasets.Dataset.from_list(_rows())}),
                         split="train")  # fmt: skip
    assert good.where == "Dataset" and isinstance(good.subset([0, 1]), datasets.Dataset)
    with pytest.raises(DataError, match=r"^DatasetDict: no split 'tran' .*did you mean 'train'"):
        read_labelled(datasets.DatasetDict({"train": datasets.Dataset.from_list(_rows())}),
                      split="tran")  # fmt: skip


def test_a_missing_extra_fails_before_the_data_is_read(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    for data in (3, _rows()):  # 3 is not data: the extra is named first all the same
        with pytest.raises(aflite.errors.MissingExtraError, match=r"pip install 'aflite\[text\]'"):
            aflite.filter_dataset(data, label="label", features="sentence-transformers:m")


def test_a_column_of_numbers_is_not_text_in_a_csv_a_dataframe_or_a_list(tmp_path):
    rows = [{"id": i, "score": i * 0.5, "review": f"good film {i}", "label": "ab"[i % 2]}
            for i in range(6)]  # fmt: skip
    csv = tmp_path / "in.csv"
    csv.write_text("id,score,review,label\n" + "".join(
        f"{r['id']},{r['score']},{r['review']},{r['label']}\n" for r in rows))  # fmt: skip
    for data in (str(csv), pd.DataFrame(rows), rows):
        got = read_labelled(data)
        assert got.fields.text == ("review",) and got.picked == ["text", "id"], data
