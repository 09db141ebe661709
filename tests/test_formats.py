"""Data formats: every registered format reads, writes subsets that read back untouched, and
names missing fields with the columns there are; the registry finds formats by suffix or
detector, and a format registered here is read like a built-in one."""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np
import pytest

from aflite.errors import DataError
from aflite.io import (
    FORMATS,
    ImageTable,
    RowsTable,
    Table,
    detect_format,
    formats_help,
    read_images,
    read_table,
    register_format,
)

ODD_TEXT = [
    'a "quoted", comma',
    "line\nbreak and\r\nCRLF",
    "tab\there",
    "  padded  ",
    "",
    "café ünïcode 日本語 🙂 \u200f",
    "NaN",
    "007",
    "=1+1",
    "back\\slash",
]


def _values(table, names):
    """Every row as a tuple of its values (read through the public table API)."""
    cols = [table.values(n) for n in names]
    return list(zip(*cols))


# --- round trips ------------------------------------------------------------------------------


def test_jsonl_round_trip_keeps_rows_untouched(tmp_path):
    rows = [
        {"id": i, "text": t, "label": "ab"[i % 2], "n": None, "nest": {"x": [1, {"y": t}]}}
        for i, t in enumerate(ODD_TEXT)
    ]
    rows[0]["big"] = 2**70
    rows[1]["tiny"] = 1e-300
    rows[2]["flag"] = False
    rows[3]["lone"] = "\ud800"  # valid as a JSON escape, has no UTF-8 form
    src = tmp_path / "d.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    t = read_table(src)
    order = [3, 0, 9, 1, 2]
    out = t.write_subset(tmp_path / t.output_name("kept"), order, {"aflite_score": [0.5] * 5})
    assert out.name == "kept.jsonl"
    back = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert back == [dict(rows[i], aflite_score=0.5) for i in order]
    again = read_table(out)
    assert again.column("text") == [ODD_TEXT[i] for i in order]
    assert again.where(1) == f"{out}:2"


@pytest.mark.parametrize("fmt, delim", [("csv", ","), ("tsv", "\t")])
def test_delimited_round_trip_keeps_values_untouched(tmp_path, fmt, delim):
    src = tmp_path / f"d.{fmt}"
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=delim)
        w.writerow(["id", "text col", "label"])
        w.writerows([str(i), t, "ab"[i % 2]] for i, t in enumerate(ODD_TEXT))
    t = read_table(src)
    assert t.format == fmt and t.columns == ["id", "text col", "label"]
    order = [9, 1, 4, 0]
    out = t.write_subset(tmp_path / t.output_name("kept"), order, {"aflite_phase": [1, 2, 3, 4]})
    again = read_table(out)
    assert out.suffix == f".{fmt}" and again.columns == t.columns + ["aflite_phase"]
    expect = [(str(i), ODD_TEXT[i], "ab"[i % 2]) for i in order]
    assert _values(again, t.columns) == expect
    assert again.column("aflite_phase") == ["1", "2", "3", "4"]


def test_parquet_round_trip_keeps_types_and_metadata(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(ODD_TEXT)
    tbl = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "text": ODD_TEXT,
            "label": pa.array(["ab"[i % 2] for i in range(n)]).dictionary_encode(),
            "x": [float("nan"), None] + [1.5] * (n - 2),
            "tags": [[i, i + 1] for i in range(n)],
            "meta": [{"k": t} for t in ODD_TEXT],
            "aflite_score": [9.0] * n,  # replaced by the written column of the same name
        }
    ).replace_schema_metadata({b"origin": b"test"})
    pq.write_table(tbl, tmp_path / "d.parquet")
    t = read_table(tmp_path / "d.parquet")
    order = np.array([5, 2, 7])
    out = t.write_subset(tmp_path / t.output_name("kept"), order, {"aflite_score": [0.1, 0.2, 0.3]})
    back = pq.read_table(out)
    assert back.schema.metadata[b"origin"] == b"test"
    assert back.drop_columns(["aflite_score"]).equals(
        tbl.drop_columns(["aflite_score"]).take(order)
    )
    assert back.column("aflite_score").to_pylist() == [0.1, 0.2, 0.3]
    assert read_table(out).column("text") == [ODD_TEXT[i] for i in order]


def test_hf_dataset_folder_round_trip(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = [{"id": i, "text": t, "label": "ab"[i % 2]} for i, t in enumerate(ODD_TEXT)]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "ds"))
    t = read_table(tmp_path / "ds")
    assert t.format == "hf" and t.output_name("kept") == "kept"
    out = t.write_subset(tmp_path / "kept", [8, 0, 3], {"aflite_phase": [0, 1, 2]})
    assert datasets.load_from_disk(str(out)).to_list() == [
        dict(rows[i], aflite_phase=p) for p, i in enumerate([8, 0, 3])
    ]
    assert read_table(out).column("text") == [ODD_TEXT[i] for i in (8, 0, 3)]
    # a run that removes nothing writes an empty subset, which still loads
    empty = t.write_subset(tmp_path / "removed", [], {"aflite_phase": []})
    assert datasets.load_from_disk(str(empty)).column_names == [
        "id",
        "text",
        "label",
        "aflite_phase",
    ]


def test_image_npz_round_trip_keeps_arrays_and_dtypes(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 4, 5, 3), dtype=np.uint8)
    labels = np.array([3, 1, 3, 1, 2, 2], dtype=np.int16)
    np.savez(tmp_path / "img.npz", images=images, labels=labels, ids=np.array(list("abcdef")))
    t = read_table(tmp_path / "img.npz")
    assert isinstance(t, ImageTable) and t.images.shape == (6, 4, 5, 3)
    assert t.column("label") == ["3", "1", "3", "1", "2", "2"] and t.columns == ["id", "label"]
    out = t.write_subset(tmp_path / t.output_name("kept"), [4, 1], {"aflite_score": [0.5, 1.0]})
    with np.load(out) as z:
        np.testing.assert_array_equal(z["images"], images[[4, 1]])
        assert z["labels"].dtype == np.int16 and z["labels"].tolist() == [2, 1]
        assert z["ids"].tolist() == ["e", "b"] and z["aflite_score"].tolist() == [0.5, 1.0]
    again = read_images(out)
    assert again.column("id") == ["e", "b"] and again.column("label") == ["2", "1"]


def _image_folder(root, n_per_class=3):
    from PIL import Image

    rng = np.random.default_rng(1)
    for label in ("cat", "dög"):
        (root / label).mkdir(parents=True)
        for k in range(n_per_class):
            pixels = rng.integers(0, 256, (5, 5, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / label / f"{k}.png")
    return root


def test_image_folder_subset_lists_the_images(tmp_path):
    root = _image_folder(tmp_path / "imgs")
    t = read_table(root)
    assert t.format == "image-folder" and len(t) == 6 and isinstance(t, ImageTable)
    assert t.columns == ["id", "label", "path"] and t.where(0) == str(root / "cat" / "0.png")
    out = t.write_subset(tmp_path / t.output_name("kept"), [5, 0], {"aflite_phase": [1, 2]})
    back = read_table(out)
    assert back.format == "jsonl"
    assert _values(back, ["id", "path", "label", "aflite_phase"]) == [
        ("dög/2.png", "dög/2.png", "dög", 1),
        ("cat/0.png", "cat/0.png", "cat", 2),
    ]
    assert all((root / p).exists() for p in back.column("path"))


def test_every_builtin_table_follows_the_protocol(tmp_path):
    (tmp_path / "d.csv").write_text("id,label\n1,a\n")
    np.savez(tmp_path / "i.npz", images=np.zeros((2, 3, 3)), labels=np.array([0, 1]))
    text, image = read_table(tmp_path / "d.csv"), read_table(tmp_path / "i.npz")
    assert isinstance(text, Table) and not isinstance(text, ImageTable)
    assert isinstance(image, Table) and isinstance(image, ImageTable)
    assert {"jsonl", "csv", "tsv", "parquet", "hf", "image-folder", "image-npz"} <= set(FORMATS)


# --- the registry ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("a.jsonl", "jsonl"),
        ("a.JSON", "jsonl"),
        ("a.ndjson", "jsonl"),
        ("a.Csv", "csv"),
        ("a.tsv", "tsv"),
        ("a.parquet", "parquet"),
        ("a.pq", "parquet"),
        ("a.npz", "image-npz"),
        ("hf:snli:train", "hf"),
        ("hf:glue:mnli:validation_matched", "hf"),
    ],
)
def test_format_by_suffix_or_detector(name, fmt):
    assert detect_format(name).name == fmt


def test_folders_are_told_apart_by_their_detectors(tmp_path):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list([{"a": 1}]).save_to_disk(str(tmp_path / "ds"))
    assert detect_format(tmp_path / "ds").name == "hf"
    assert detect_format(_image_folder(tmp_path / "imgs")).name == "image-folder"
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    with pytest.raises(DataError, match=r"plain: a folder, but not one aflite reads \("):
        read_table(tmp_path / "plain")


def test_unknown_suffix_missing_file_and_unknown_format(tmp_path):
    (tmp_path / "d.xlsx").write_text("x")
    with pytest.raises(DataError) as e:
        read_table(tmp_path / "d.xlsx")
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'd.xlsx'}: unknown file type '.xlsx' (aflite reads ")
    assert "CSV (.csv)" in msg and "Parquet (.parquet, .pq)" in msg and "\n" not in msg
    with pytest.raises(DataError, match=r"nope.csv: no such file$"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match=r"nope.xlsx: no such file$"):
        read_table(tmp_path / "nope.xlsx")
    with pytest.raises(
        DataError, match=r"unknown format 'jsn' \(choose from .*did you mean 'jsonl'"
    ):
        read_table(tmp_path / "d.xlsx", "jsn")


def test_format_given_by_name_overrides_the_suffix(tmp_path):
    (tmp_path / "d.txt").write_text("id\tlabel\n1\ta\n")
    t = read_table(tmp_path / "d.txt", "tsv")
    assert t.format == "tsv" and t.column("label") == ["a"]


@pytest.fixture
def lines_format():
    """A format registered by a test: ``LABEL<TAB>TEXT`` a line (suffix .lines)."""

    @register_format("lines", suffixes=(".lines",), description="labelled lines")
    class LinesTable(RowsTable):
        suffix = ".lines"

        @classmethod
        def read(cls, path, options):
            with open(path, encoding="utf-8") as fh:
                pairs = [line.rstrip("\n").split("\t", 1) for line in fh]
            rows = [{"label": a, "text": b} for a, b in pairs]
            return cls(path, rows, list(range(1, len(rows) + 1)), ["label", "text"])

        def write_subset(self, target, indices, extra=None):
            with open(target, "w", encoding="utf-8") as fh:
                for row in self.rows_with(np.asarray(indices), dict(extra or {})):
                    fh.write(f"{row['label']}\t{row['text']}\n")
            return target

    yield LinesTable
    FORMATS.unregister("lines")


def test_a_registered_format_is_read_like_a_builtin(tmp_path, lines_format):
    src = tmp_path / "d.lines"
    src.write_text("pos\tgood film\nneg\tbad film\n", encoding="utf-8")
    t = read_table(src)
    assert type(t) is lines_format and t.format == "lines"
    assert t.column("label") == ["pos", "neg"] and t.where(1) == f"{src}:2"
    assert "labelled lines (.lines)" in formats_help()
    t.write_subset(tmp_path / t.output_name("kept"), [1])
    assert read_table(tmp_path / "kept.lines").column("text") == ["bad film"]
    with pytest.raises(DataError, match=r"field 'txt' is missing .*did you mean 'text'"):
        t.column("txt")
    with pytest.raises(
        DataError, match=r"split 'train' given \(--split / split=\), but labelled lines"
    ):
        read_table(src, split="train")


def test_a_later_format_takes_precedence(tmp_path):
    @register_format("semicolon-csv", suffixes=(".csv",))
    class SemicolonCsv(RowsTable):
        @classmethod
        def read(cls, path, options):
            return cls(path, [{"a": "1"}], [1], ["a"])

    try:
        (tmp_path / "d.csv").write_text("a,b\n1,2\n")
        assert read_table(tmp_path / "d.csv").format == "semicolon-csv"
    finally:
        FORMATS.unregister("semicolon-csv")
    assert read_table(tmp_path / "d.csv").format == "csv"


# --- helpful fields -------------------------------------------------------------------------


def test_unknown_field_lists_columns_and_the_closest(tmp_path):
    src = tmp_path / "data.csv"
    src.write_text("id,text,sentiment\n1,good,pos\n")
    t = read_table(src)
    with pytest.raises(DataError) as e:
        t.column("sentimnt")
    assert str(e.value) == (
        f"{src}: field 'sentimnt' is missing (columns: id, text, sentiment; "
        "did you mean 'sentiment'?)"
    )
    with pytest.raises(DataError, match=r"did you mean 'text'\?\)$"):
        t.text_column("Text")
    with pytest.raises(DataError) as e:
        t.column("zzz")
    assert str(e.value).endswith("(columns: id, text, sentiment)")


def test_field_missing_in_json_lines_and_wide_tables(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "d.jsonl"
    src.write_text('{"id": 1, "label": "a"}\n{"id": 2}\n')
    t = read_table(src)
    with pytest.raises(
        DataError,
        match=rf"^{src}:1: field 'lable' is missing \(columns: id, label; did you mean 'label'\?\)$",
    ):
        t.column("lable")
    # a field some rows have: the row without it
    with pytest.raises(DataError, match=rf"^{src}:2: field 'label' is missing$"):
        t.column("label")
    pq.write_table(pa.table({f"c{i}": [i] for i in range(40)}), tmp_path / "w.parquet")
    with pytest.raises(DataError) as e:
        read_table(tmp_path / "w.parquet").column("c7x")
    assert "c29, ... (10 more); did you mean 'c7'?)" in str(e.value)


def test_image_tables_name_their_fields(tmp_path):
    np.savez(tmp_path / "i.npz", images=np.zeros((2, 3, 3)), labels=np.array(["a", "b"]))
    with pytest.raises(
        DataError, match=r"field 'lable' is missing \(columns: id, label; did you mean 'label'"
    ):
        read_table(tmp_path / "i.npz").column("lable")
    np.savez(tmp_path / "f.npz", features=np.zeros((2, 3)))
    with pytest.raises(
        DataError, match=r"f.npz: an image .npz needs arrays 'images' and 'labels' \(has features\)"
    ):
        read_table(tmp_path / "f.npz")
    (tmp_path / "d.csv").write_text("id,label\n1,a\n")
    with pytest.raises(DataError, match=r"d.csv: not image data"):
        read_images(tmp_path / "d.csv")


# --- fingerprints ---------------------------------------------------------------------------


def test_npz_fingerprint_includes_labels_and_every_image(tmp_path):
    images = np.arange(200 * 4 * 4, dtype=np.uint8).reshape(200, 4, 4)
    labels = np.array(["a", "b"] * 100)

    def fp(images, labels):
        np.savez(tmp_path / "i.npz", images=images, labels=labels)
        return read_table(tmp_path / "i.npz").fingerprint()

    base = fp(images, labels)
    assert fp(images, labels) == base  # same content, same fingerprint
    relabelled = labels.copy()
    relabelled[6] = "b"
    assert fp(images, relabelled) != base
    changed = images.copy()
    changed[1, 0, 0] += 1  # not one of every 64th image
    assert fp(changed, labels) != base


# --- DatasetDict splits -----------------------------------------------------------------------


@pytest.fixture
def dataset_dict(tmp_path):
    datasets = pytest.importorskip("datasets")
    from aflite.data import bundled_snli

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:260]]
    path = tmp_path / "dd"
    datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_list(rows[:200]),
            "test": datasets.Dataset.from_list(rows[200:]),
        }
    ).save_to_disk(str(path))
    return path


def test_dataset_dict_needs_a_known_split(dataset_dict):
    with pytest.raises(DataError) as e:
        read_table(dataset_dict)
    assert str(e.value) == (
        f"{dataset_dict}: a DatasetDict with splits train, test; choose one (--split / split=)"
    )
    with pytest.raises(DataError) as e:
        read_table(dataset_dict, split="tset")
    assert str(e.value) == (
        f"{dataset_dict}: no split 'tset' (splits: train, test; did you mean 'test'?)"
    )
    train, test = read_table(dataset_dict, split="train"), read_table(dataset_dict, split="test")
    assert (len(train), len(test)) == (200, 60)
    assert test.where(0) == f"{dataset_dict} (split test): row 1"
    assert train.fingerprint() != test.fingerprint()


def test_split_is_refused_where_there_are_no_splits(tmp_path):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list([{"a": 1}]).save_to_disk(str(tmp_path / "ds"))
    with pytest.raises(
        DataError, match=r"ds: a single Dataset without splits; leave out the split \(--split"
    ):
        read_table(tmp_path / "ds", split="train")
    (tmp_path / "d.csv").write_text("a\n1\n")
    with pytest.raises(
        DataError, match=r"d.csv: split 'train' given \(--split / split=\), but CSV \(.csv\) input"
    ):
        read_table(tmp_path / "d.csv", split="train")


def _main(monkeypatch, capsys, *args):
    """The command line in this process: (exit code, stdout, stderr)."""
    from aflite.cli.main import main

    monkeypatch.setattr(sys, "argv", ["aflite", *args])
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_filter_a_dataset_dict_split_from_the_command_line(
    tmp_path, dataset_dict, monkeypatch, capsys
):
    datasets = pytest.importorskip("datasets")
    args = [
        "filter", str(dataset_dict), "--text-fields", "hypothesis", "--id-field", "id",
        "--target-size", "150", "--train-size", "50", "--slice-size", "25",
        "--n-partitions", "4", "--threshold", "0.3", "--min-bias", "off", "--quiet",
        "--no-report", "--out-dir", str(tmp_path / "out"),
    ]  # fmt: skip
    code, _, err = _main(monkeypatch, capsys, *args)
    assert code == 2 and err == (
        f"aflite: error: {dataset_dict}: a DatasetDict with splits train, test; "
        "choose one (--split / split=)\n"
    )
    assert not (tmp_path / "out").exists()
    code, _, err = _main(monkeypatch, capsys, *args, "--split", "train")
    assert code == 0, err
    kept = datasets.load_from_disk(str(tmp_path / "out" / "kept"))
    removed = datasets.load_from_disk(str(tmp_path / "out" / "removed"))
    assert len(kept) == 150 and len(removed) == 50
    train_ids = set(datasets.load_from_disk(str(dataset_dict))["train"]["id"])
    assert set(kept["id"]) | set(removed["id"]) == train_ids
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["options"]["split"] == "train" and summary["input_format"] == "hf"


def test_command_line_field_error_suggests_the_column(tmp_path, monkeypatch, capsys):
    src = tmp_path / "data.csv"
    buf = io.StringIO()
    csv.writer(buf).writerows(
        [["id", "text", "sentiment"], ["1", "good", "pos"], ["2", "bad", "neg"]]
    )
    src.write_text(buf.getvalue())
    code, _, err = _main(
        monkeypatch, capsys, "filter", str(src), "--label-field", "sentimnt",
        "--text-fields", "text", "--out-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2
    assert err == (
        f"aflite: error: {src}: field 'sentimnt' is missing (columns: id, text, sentiment; "
        "did you mean 'sentiment'?)\n"
    )


def test_image_features_on_a_text_file_are_refused(tmp_path, monkeypatch, capsys):
    src = tmp_path / "d.csv"
    src.write_text("id,text,label\n1,a,x\n2,b,y\n")
    code, _, err = _main(
        monkeypatch, capsys, "filter", str(src), "--features", "warmup-cnn",
        "--out-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2 and "d.csv: warmup-cnn needs images" in err and err.count("\n") == 1


def test_hf_names_take_the_split_in_the_name_or_from_split(tmp_path):
    pytest.importorskip("datasets")
    for bad, split in (("hf:snli", None), ("hf:a:b:c:d", None), ("hf:a:b:c", "train")):
        with pytest.raises(DataError, match=r"use hf:NAME\[:CONFIG\] with --split, or hf:NAME"):
            read_table(bad, split=split)
    src = tmp_path / "local"
    src.mkdir()
    (src / "train.jsonl").write_text('{"t": "a", "label": 0}\n{"t": "b", "label": 1}\n')
    named = read_table(f"hf:{src}:train")
    given = read_table(f"hf:{src}", split="train")
    assert named.column("t") == given.column("t") == ["a", "b"]
    assert given.where(1) == f"hf:{src} (split train): row 2"
