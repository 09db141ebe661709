"""Hostile and broken inputs: every one is a single line naming file, row and field, with no
traceback and nothing left in the output folder; file-system faults likewise.

Exit codes of the command line: 2 for a problem with the data or the options, 1 for a fault
of the environment (a full disk, an output folder that cannot be written or is a file).
"""

from __future__ import annotations

import errno
import io
import json
import os
import pathlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import run_in_process

import aflite
from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.io import read_table
from aflite.io.ids import check_ids

SRC = str(Path(aflite.__file__).resolve().parents[1])


def run_cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "aflite", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def _jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


ROWS = [
    {"id": "a", "hypothesis": "x y", "label": "e"},
    {"id": "b", "hypothesis": "z", "label": "c"},
]
GOOD = _jsonl(ROWS)
GOOD3 = _jsonl([dict(r, id=f"{r['id']}{k}") for k in range(3) for r in ROWS])  # unique ids


def _npy(array, **kw):
    buf = io.BytesIO()
    np.save(buf, array, **kw)
    return buf.getvalue()


def _npz(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


_OBJECTS = np.empty(2, dtype=object)
_OBJECTS[:] = [{"a": 1}, [2]]

# (input name, input content, other files, extra options, message)
BAD_INPUTS = [
    pytest.param(
        "in.csv",
        "id,hypothesis,label,hypothesis\na,x y,e,q\nb,z,c,r\n",
        {},
        [],
        "in.csv:1: field 'hypothesis' appears twice in the header",
        id="csv-duplicate-column",
    ),
    pytest.param(
        "in.tsv",
        "id\thypothesis\tlabel\tid\na\tx\te\tb\n",
        {},
        [],
        "in.tsv:1: field 'id' appears twice in the header",
        id="tsv-duplicate-column",
    ),
    pytest.param(
        "in.jsonl",
        GOOD + '{"id": "c", "hypothesis": "q", "label": "e", "label": "c"}\n',
        {},
        [],
        "in.jsonl:3: field 'label' appears twice",
        id="jsonl-duplicate-key",
    ),
    pytest.param(
        "in.jsonl",
        GOOD3,
        {"f.npy": _npy(np.array([["a", "b"]] * 6))},
        ["--features", "precomputed:{d}/f.npy"],
        "f.npy: features must be numbers, got dtype <U1",
        id="npy-strings",
    ),
    pytest.param(
        "in.jsonl",
        GOOD3,
        {"o.npy": _npy(_OBJECTS, allow_pickle=True)},
        ["--features", "precomputed:{d}/o.npy"],
        "o.npy: holds Python objects (a pickled array)",
        id="npy-pickled-objects",
    ),
    pytest.param(
        "in.jsonl",
        GOOD3,
        {"o.npz": _npz(features=_OBJECTS)},
        ["--features", "precomputed:{d}/o.npz"],
        "o.npz: holds Python objects (a pickled array)",
        id="npz-pickled-objects",
    ),
    pytest.param(
        "in.jsonl",
        GOOD3,
        {"junk.npy": b"not numpy at all"},
        ["--features", "precomputed:{d}/junk.npy"],
        "junk.npy: not a readable .npy file",
        id="npy-junk",
    ),
    pytest.param(
        "in.jsonl",
        _jsonl([dict(r, id=f"{r['id']}{k}") for k in range(3) for r in ROWS]),
        {
            "ids.npz": _npz(
                features=np.arange(12, dtype=np.float32).reshape(6, 2),
                ids=np.array(["a0", "b0", "a1", "a1", "a2", "b2"]),
            )
        },
        ["--features", "precomputed:{d}/ids.npz", "--id-field", "id"],
        "ids.npz: row 4: field 'ids' duplicates id 'a1' (first at row 3)",
        id="npz-duplicate-id",
    ),
    pytest.param(
        "img.npz",
        _npz(images=_OBJECTS, labels=np.array(["a", "b"])),
        {},
        ["--features", "warmup-cnn"],
        "img.npz: holds Python objects (a pickled array)",
        id="image-npz-objects",
    ),
    pytest.param(
        "img.npz",
        _npz(images=np.array([["x"] * 4] * 6), labels=np.array(["a", "b"] * 3)),
        {},
        ["--features", "warmup-cnn"],
        "img.npz: 'images' must be numbers, got dtype <U1",
        id="image-npz-strings",
    ),
    pytest.param(
        "img.npz",
        b"PK\x03\x04 a damaged archive",
        {},
        ["--features", "warmup-cnn"],
        "img.npz: not a readable .npz file",
        id="image-npz-damaged",
    ),
    pytest.param(
        "in.jsonl",
        GOOD + '{"id": ["c"], "hypothesis": "q", "label": "e"}\n',
        {},
        ["--id-field", "id"],
        "in.jsonl:3: field 'id' is not an id (a list: ['c'])",
        id="id-list",
    ),
    pytest.param(
        "in.jsonl",
        _jsonl([dict(ROWS[0], id=2), dict(ROWS[1], id="2")]),
        {},
        ["--id-field", "id"],
        "in.jsonl:2: field 'id' has ambiguous ids '2' and 2",
        id="id-int-and-str",
    ),
]


@pytest.mark.parametrize("name, content, files, extra, message", BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_and_no_output(tmp_path, name, content, files, extra, message):
    src = tmp_path / name
    src.write_bytes(content if isinstance(content, bytes) else content.encode())
    for fname, data in files.items():
        (tmp_path / fname).write_bytes(data)
    out = tmp_path / "out"
    r = run_in_process(
        "filter",
        str(src),
        "--text-fields",
        "hypothesis",
        "--target-size",
        "3",
        "--train-size",
        "2",
        "--out-dir",
        str(out),
        "--quiet",
        *[a.format(d=tmp_path) for a in extra],
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("aflite: error: ") and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not out.exists()


# ids: (values, message); each value list is one column, rows 1-based
BAD_IDS = [
    ([1, [2, 3]], "t.jsonl:2: field 'id' is not an id (a list: [2, 3])"),
    ([{"k": 1}], "t.jsonl:1: field 'id' is not an id (an object: {'k': 1})"),
    ([True, 2], "t.jsonl:1: field 'id' is not an id (a boolean: True)"),
    ([1.5, float("nan")], "t.jsonl:2: field 'id' is not an id (not a number: nan)"),
    (
        [2, "2"],
        "t.jsonl:2: field 'id' has ambiguous ids '2' and 2 (first at 1); "
        "they are the same id as text",
    ),
    (
        ["x", 1.0, "1.0"],
        "t.jsonl:3: field 'id' has ambiguous ids '1.0' and 1.0 (first at 2); "
        "they are the same id as text",
    ),
    (["x", "y", "x"], "t.jsonl:3: field 'id' duplicates id 'x' (first at 1)"),
]


@pytest.mark.parametrize("values, message", BAD_IDS)
def test_ids_must_be_unique_scalars(values, message):
    with pytest.raises(DataError) as e:
        check_ids(values, "id", lambda i: f"t.jsonl:{i + 1}")
    assert str(e.value) == message


def test_read_ids_on_a_table(tmp_path):
    from aflite.io.ids import read_ids

    src = tmp_path / "in.jsonl"
    src.write_text(_jsonl([dict(ROWS[0], id=2), dict(ROWS[1], id=3)]))
    assert read_ids(read_table(src), "id") == [2, 3]
    src.write_text(GOOD + '{"id": {"x": 1}, "hypothesis": "q", "label": "e"}\n')
    with pytest.raises(DataError, match=r"in.jsonl:3: field 'id' is not an id \(an object"):
        read_ids(read_table(src), "id")


def test_bom_csv_and_jsonl_read_as_utf8(tmp_path):
    src = tmp_path / "bom.csv"
    src.write_bytes(b"\xef\xbb\xbfid,text,label\n1,caf\xc3\xa9,x\n2,b,y\n")
    t = read_table(src)
    assert t.columns == ["id", "text", "label"]
    assert t.column("id") == ["1", "2"] and t.column("text")[0] == "café"
    t.write_subset(tmp_path / "kept.csv", [1, 0])
    assert (tmp_path / "kept.csv").read_bytes().startswith(b"id,text,label")
    js = tmp_path / "bom.jsonl"
    js.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert read_table(js).column("id") == ["a", "b"]


def test_bom_csv_through_the_command_line(tmp_path):
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:300]]
    import csv

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "hypothesis", "label"])
    w.writerows([r["id"], r["hypothesis"], r["label"]] for r in rows)
    src = tmp_path / "in.csv"
    src.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode())
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(src), "--text-fields", "hypothesis", "--id-field", "id",
        "--target-size", "250", "--out-dir", str(out), "--quiet", "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (out / "kept.csv").read_text().startswith("id,hypothesis,label\n")


def test_csv_field_longer_than_the_csv_default_limit(tmp_path):
    import csv

    big = "word " * 40_000  # 200,000 characters, over csv's 131,072
    src = tmp_path / "big.tsv"
    src.write_text(f"id\ttext\tlabel\n1\t{big}\tx\n2\tshort\ty\n")
    limit = csv.field_size_limit()
    t = read_table(src)
    assert t.column("text")[0] == big
    assert csv.field_size_limit() == limit  # the process-wide limit is left as it was
    t.write_subset(tmp_path / "kept.tsv", [0])
    assert read_table(tmp_path / "kept.tsv").column("text") == [big]


def test_parquet_with_a_duplicate_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    tbl = pa.Table.from_arrays([pa.array([1, 2]), pa.array(["a", "b"])], names=["id", "id"])
    pq.write_table(tbl, tmp_path / "d.parquet")
    with pytest.raises(DataError) as e:  # refused by pyarrow or by the header check
        read_table(tmp_path / "d.parquet")
    assert "d.parquet: " in str(e.value) and "\n" not in str(e.value)


def test_precomputed_ids_of_the_wrong_length(tmp_path):
    from aflite.features import load_precomputed

    np.savez(tmp_path / "f.npz", features=np.zeros((3, 2)), ids=np.array(["a", "b"]))
    with pytest.raises(DataError, match=r"f.npz: 'ids' must list one id per feature row"):
        load_precomputed(str(tmp_path / "f.npz"), n_rows=2, ids=["a", "b"])


# --- the file system -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def snli_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("snli")
    src = d / "snli.jsonl"
    src.write_text("".join(line + "\n" for line in bundled_snli().read_text().splitlines()[:300]))
    return src


def _main(monkeypatch, capsys, *args):
    """Run the command line in this process (so faults can be injected); (exit code, stderr)."""
    from aflite.cli.main import main

    monkeypatch.setattr(sys, "argv", ["aflite", *args])
    with pytest.raises(SystemExit) as e:
        main()
    return e.value.code, capsys.readouterr().err


def _filter_args(src, out):
    return [
        "filter", str(src), "--text-fields", "hypothesis", "--id-field", "id",
        "--target-size", "250", "--out-dir", str(out), "--quiet", "--no-report",
    ]  # fmt: skip


def _one_line_error(err, *fragments):
    assert err.startswith("aflite: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, err


def test_out_dir_is_an_existing_file(tmp_path, snli_file):
    out = tmp_path / "out"
    out.write_text("not a folder")
    r = run_in_process(*_filter_args(snli_file, out))
    assert r.returncode == 1, r.stderr
    _one_line_error(r.stderr, str(out), "not a directory")
    assert out.read_text() == "not a folder"


def test_out_dir_not_writable(tmp_path, snli_file, monkeypatch, capsys):
    out = tmp_path / "out"
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *a, **kw):
        if str(self).startswith(str(out)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_mkdir(self, *a, **kw)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    code, err = _main(monkeypatch, capsys, *_filter_args(snli_file, out))
    assert code == 1
    _one_line_error(err, str(out), "permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_dir_not_writable_by_mode(tmp_path, snli_file):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        r = run_cli(*_filter_args(snli_file, parent / "out"))
    finally:
        parent.chmod(0o755)
    assert r.returncode == 1, r.stderr
    _one_line_error(r.stderr, "permission denied")


def test_disk_full_while_writing_outputs(tmp_path, snli_file, monkeypatch, capsys):
    from aflite._internal import atomic

    out = tmp_path / "out"

    def full(tmp, target):
        if target.name == "scores.parquet":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))
        os.replace(tmp, target)

    monkeypatch.setattr(atomic, "_finish", full)
    code, err = _main(monkeypatch, capsys, *_filter_args(snli_file, out))
    assert code == 1
    _one_line_error(err, str(out / "scores.parquet"), "no space left on device")
    assert not list(out.rglob("*.part"))
    assert not (out / "scores.parquet").exists() and not (out / "summary.json").exists()


@pytest.mark.slow
def test_stale_parts_are_removed_by_the_next_write_and_run(tmp_path, snli_file):
    from aflite._internal.atomic import atomic_path, clean_stale_parts

    out = tmp_path / "out"
    (out / "result").mkdir(parents=True)
    stale = [
        out / ".kept.jsonl.k3x9_a1b.part",
        out / ".scores.parquet.zz81qq0p.part",
        out / "result" / ".report_extra.json.abcdefgh.part",
    ]
    for p in stale:
        p.write_text("half")
    other = out / ".kept.jsonl.bak.abcdefgh.part"  # a longer name's part: not kept.jsonl's
    other.write_text("half")
    keep = [out / "notes.part", out / "kept.jsonl"]
    for p in keep:
        p.write_text("mine")

    with atomic_path(out / "kept.jsonl") as tmp:
        tmp.write_text("new")
    assert not stale[0].exists() and stale[1].exists() and other.exists()
    assert (out / "kept.jsonl").read_text() == "new"

    os.utime(stale[1], (0, 0))
    assert clean_stale_parts(out, older_than=3600) == [stale[1]]
    assert sorted(clean_stale_parts(out)) == sorted([other, stale[2]])
    assert all(p.exists() for p in keep)
    assert clean_stale_parts(tmp_path / "missing") == []

    # a whole run over a folder with leftovers leaves none of its outputs' parts
    for p in stale:
        p.write_text("half")
    r = run_cli(*_filter_args(snli_file, out), "--overwrite")
    assert r.returncode == 0, r.stderr
    assert not stale[0].exists() and not stale[1].exists()


def test_unusable_cache_dir_warns_once_and_continues(tmp_path):
    from aflite.features import cache

    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    calls = []

    def compute():
        calls.append(1)
        return np.ones((3, 2))

    cache._warned.discard(str(blocker))
    with pytest.warns(RuntimeWarning, match="embedding cache .* not usable.*continuing without it"):
        arr, hit = cache.cached(["k"], compute, blocker)
    assert not hit and arr.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arr, hit = cache.cached(["k2"], compute, blocker)
    assert not hit and len(calls) == 2


def test_damaged_cache_entry_is_computed_again(tmp_path):
    import hashlib

    from aflite.features import cache

    key = hashlib.sha256(b"k").hexdigest()[:24]
    entry = tmp_path / "embeddings" / f"{key}.npy"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"\x93NUMPY garbage")
    arr, hit = cache.cached(["k"], lambda: np.ones((2, 2)), tmp_path)
    assert not hit and np.array_equal(arr, np.ones((2, 2)))
    arr, hit = cache.cached(["k"], lambda: np.zeros((2, 2)), tmp_path)
    assert hit and np.array_equal(arr, np.ones((2, 2)))


# --- user data shown as plain text -----------------------------------------------------------

HOSTILE_LABELS = ["[/bold]", "[link=http://evil.example]entail[/link]", "\x1b[2Jwipe"]


def test_audit_command_shows_labels_literally(tmp_path):
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:600]]
    mapping = dict(zip(sorted({r["label"] for r in rows}), HOSTILE_LABELS))
    src = tmp_path / "in.jsonl"
    src.write_text(_jsonl([dict(r, label=mapping[r["label"]]) for r in rows]))
    r = run_in_process(
        "audit", str(src), "--text-fields", "hypothesis", "--audits", "pmi", "--min-count", "5"
    )
    assert r.returncode == 0, r.stderr
    assert "[/bold]" in r.stdout
    assert "[link=http://evil.example]entail[/link]" in r.stdout
    assert "\x1b" not in r.stdout and "\\x1b[2Jwipe" in r.stdout


def _report_dir(tmp_path, labels, extra):
    tmp_path.mkdir(exist_ok=True)
    counts = {"input": 4, "kept": 2, "removed": 2, "warmup": 0}
    counts["labels_before"] = {k: 2 for k in labels}
    counts["labels_kept"] = {k: 1 for k in labels}
    (tmp_path / "summary.json").write_text(json.dumps({"input": "in.jsonl", "counts": counts}))
    (tmp_path / "result").mkdir()
    (tmp_path / "result" / "report_extra.json").write_text(json.dumps(extra))


def test_report_accepts_only_inline_png_images(tmp_path):
    from aflite.reports import render_report

    good = "data:image/png;base64,iVBORw0KGgo="
    images = {
        "ok": good,
        "script": "javascript:alert(1)",
        "quote": "data:image/png;base64,AAAA' onerror='alert(1)",
        "svg": "data:image/svg+xml;base64,PHN2Zz4=",
        "remote": "https://evil.example/x.png",
        "number": 5,
    }
    _report_dir(tmp_path, ["a", "b"], {"images": images})
    page = render_report(tmp_path)
    assert f"src='{good}'" in page
    for bad in ("javascript:", "onerror", "svg+xml", "evil.example"):
        assert bad not in page
    _report_dir(tmp_path / "x", ["a", "b"], {"images": ["not", "a", "mapping"]})
    assert "javascript" not in render_report(tmp_path / "x")


def test_report_plots_draw_labels_as_plain_text(tmp_path):
    from aflite.reports import render_report

    labels = [r"$\undefinedcommand{x}$", "$5", "<b>x</b>", "a\x1bb"]
    sim = np.eye(2).tolist()
    extra = {"heatmaps": {lab: {"similarity": sim, "n_kept": 1} for lab in labels}}
    _report_dir(tmp_path / "d", labels, extra)
    page = render_report(tmp_path / "d")
    assert "<b>x</b>" not in page and page.count("data:image/png;base64,") >= 1 + len(labels)
