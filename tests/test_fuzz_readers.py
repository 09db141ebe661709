"""Every reader, fed random bytes, truncations, odd encodings, huge fields and wrong types:
the only outcomes are a table (whose rows a job then partitions) or one line of DataError /
ValueError. Bounded: a few dozen examples per reader, the whole file in seconds."""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aflite.api.pipeline import FilterRun, read_rows
from aflite.errors import DataError
from aflite.features import load_precomputed
from aflite.io import read_table
from aflite.jobs import FilterJob

FUZZ = settings(
    max_examples=int(os.environ.get("AFLITE_FUZZ_EXAMPLES", 25)),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],  # fmt: skip
)

ALLOWED = (DataError, ValueError)


def _read(job):
    """The rows a filter job reads, read and checked as the job reads them."""
    return read_rows(FilterRun.of_config(job))


def _one_line(e: BaseException) -> None:
    msg = str(e)
    assert msg and "\n" not in msg and "Traceback" not in msg, repr(msg)


def _check_read(path: Path, **job) -> None:
    """read_table and the command line's reader path (labels, ids, text fields)."""
    try:
        table = read_table(str(path))
    except ALLOWED as e:
        _one_line(e)
        return
    assert len(table) >= 0
    _check_api(path, job)
    try:
        inputs = _read(FilterJob(input=str(path), out_dir=str(path) + ".out", **job))
    except ALLOWED as e:
        _one_line(e)
        return
    n = len(inputs.table)
    assert len(inputs.labels) == n and len(inputs.ids) == n
    assert len(set(map(repr, inputs.ids))) == n  # ids that can partition the rows
    for values in (inputs.texts or {}).values():
        assert len(values) == n and all(isinstance(v, str) for v in values)


_ROOT: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _fuzz_root(tmp_path_factory):
    # one folder per example under the module's temporary folder (Hypothesis runs many
    # examples per test, which a function-scoped tmp_path would share)
    _ROOT.append(tmp_path_factory.mktemp("fuzz"))
    yield
    _ROOT.pop()


def _check_api(path: Path, job: dict) -> None:
    """The data API's reader path (``aflite.filter_dataset(path, ...)`` starts here)."""
    from aflite.io.labelled import read_labelled

    try:
        data = read_labelled(str(path), label="label", text=job.get("text"), id=job.get("id"))
    except ALLOWED as e:
        _one_line(e)
        return
    assert len(data.labels) == len(data) and all(len(t) == len(data) for t in data.texts.values())


def _tmp(suffix: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix="ex-", dir=_ROOT[-1]))
    return d / f"data{suffix}"


# --- text rows ------------------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    # huge fields, over csv's default limit of 131,072 characters
    st.builds(
        lambda ch, n: ch * n,
        st.sampled_from(["ab ", "\u00e9", "\u200b", "\x00", "\t"]),
        st.integers(5_000, 200_000),
    ),  # fmt: skip
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=3), SCALARS, max_size=2),
)
ROWS = st.lists(
    st.fixed_dictionaries(
        {"label": st.one_of(st.sampled_from(["a", "b"]), VALUES), "text": VALUES},
        optional={"id": VALUES, "extra": VALUES},
    ),
    min_size=0,
    max_size=8,
)


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _delimited(rows, sep: str) -> bytes:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep)
    w.writerow(["id", "text", "label"])
    for r in rows:
        w.writerow([str(r.get("id", "")), str(r.get("text")), str(r.get("label"))])
    return buf.getvalue().encode("utf-8", "surrogatepass")


def _mangle(data: bytes, how: int, cut: float, junk: bytes) -> bytes:
    if how == 0:
        return data
    if how == 1:
        return data[: int(len(data) * cut)]  # truncated
    if how == 2:
        return data.decode("utf-8", "ignore").encode("utf-16")  # another encoding
    if how == 3:
        return b"\xef\xbb\xbf" + data  # a byte-order mark
    if how == 4:
        i = int(len(data) * cut)
        return data[:i] + junk + data[i:]  # random bytes inside
    return junk  # nothing but random bytes


MANGLE = dict(how=st.integers(0, 5), cut=st.floats(0, 1), junk=st.binary(min_size=1, max_size=64))


@FUZZ
@given(rows=ROWS, **MANGLE)
def test_jsonl(rows, how, cut, junk):
    path = _tmp(".jsonl")
    path.write_bytes(_mangle(_jsonl(rows), how, cut, junk))
    _check_read(path, text=["text"])


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
@FUZZ
@given(rows=ROWS, **MANGLE)
def test_csv_and_tsv(suffix, sep, rows, how, cut, junk):
    path = _tmp(suffix)
    try:
        data = _delimited(rows, sep)
    except UnicodeEncodeError:
        assume(False)
    path.write_bytes(_mangle(data, how, cut, junk))
    _check_read(path, text=["text"], id="id")


@FUZZ
@given(
    rows=ROWS, how=st.integers(0, 2), cut=st.floats(0, 1), junk=st.binary(min_size=1, max_size=64)
)
def test_parquet(rows, how, cut, junk):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = _tmp(".parquet")
    columns = {
        "label": [
            r["label"] if isinstance(r["label"], str) else json.dumps(r["label"]) for r in rows
        ],
        "text": [
            json.dumps(r["text"]) if not isinstance(r["text"], str) else r["text"] for r in rows
        ],
    }
    try:
        buf = io.BytesIO()
        pq.write_table(pa.table(columns), buf)
    except (pa.ArrowException, UnicodeEncodeError):
        assume(False)
    data = buf.getvalue()
    if how == 1:
        data = data[: int(len(data) * cut)]
    elif how == 2:
        data = data[: int(len(data) * cut)] + junk + data[int(len(data) * cut) :]
    path.write_bytes(data)
    _check_read(path, text=["text"])


# --- feature files --------------------------------------------------------------------------

ARRAYS = st.one_of(
    st.builds(lambda r, c: np.zeros((r, c), np.float32), st.integers(0, 4), st.integers(0, 3)),
    st.builds(lambda r: np.ones((r, 2), bool), st.integers(1, 4)),
    st.builds(lambda r: np.full((r, 2), np.nan), st.integers(1, 4)),
    st.builds(lambda r: np.arange(r * 2).reshape(r, 2).astype(np.int64), st.integers(1, 4)),
    st.builds(lambda r: np.zeros((r, 2, 2)), st.integers(1, 3)),
    st.builds(lambda r: np.array(["x"] * r), st.integers(1, 3)),
    st.builds(lambda r: np.zeros(r, dtype=np.complex64).reshape(-1, 1), st.integers(1, 3)),
)


def _check_features(path: Path, n_rows: int, ids=None) -> None:
    try:
        x = load_precomputed(str(path), n_rows=n_rows, ids=ids)
    except ALLOWED as e:
        _one_line(e)
        return
    assert x.ndim == 2 and x.shape[0] == n_rows and x.shape[1] > 0
    assert x.dtype.kind in "iuf" and np.isfinite(np.asarray(x)).all()


@FUZZ
@given(arr=ARRAYS, n_rows=st.integers(1, 4), **MANGLE)
def test_npy(arr, n_rows, how, cut, junk):
    path = _tmp(".npy")
    buf = io.BytesIO()
    np.save(buf, arr)
    path.write_bytes(_mangle(buf.getvalue(), min(how, 1) if how < 4 else how, cut, junk))
    _check_features(path, n_rows)


@FUZZ
@given(arr=ARRAYS, n_rows=st.integers(1, 4), with_ids=st.booleans(), **MANGLE)
def test_npz(arr, n_rows, with_ids, how, cut, junk):
    path = _tmp(".npz")
    buf = io.BytesIO()
    extra = {"ids": np.array([str(i % 3) for i in range(len(arr))])} if with_ids else {}
    np.savez(buf, features=arr, **extra)
    path.write_bytes(_mangle(buf.getvalue(), min(how, 1) if how < 4 else how, cut, junk))
    _check_features(path, n_rows, ids=[str(i) for i in range(n_rows)] if with_ids else None)


@FUZZ
@given(arr=ARRAYS, n_rows=st.integers(1, 4), **MANGLE)
def test_safetensors(arr, n_rows, how, cut, junk):
    from safetensors.numpy import save

    path = _tmp(".safetensors")
    try:
        data = save({"features": np.ascontiguousarray(arr)})
    except Exception:  # strings and complex numbers have no safetensors form
        data = b'{"features": 1}'
    path.write_bytes(_mangle(data, min(how, 1) if how < 4 else how, cut, junk))
    _check_features(path, n_rows)


# --- images and data set folders ------------------------------------------------------------


@FUZZ
@given(
    images=st.binary(max_size=200),
    names=st.lists(
        st.sampled_from(["a.png", "b.jpg", "c.txt", ".hidden.png"]), min_size=1, max_size=3
    ),
    classes=st.integers(1, 3),
)
def test_image_folder(images, names, classes):
    root = _tmp("").parent / "images"
    for c in range(classes):
        (root / f"class{c}").mkdir(parents=True)
        for name in names:
            (root / f"class{c}" / name).write_bytes(images)
    _check_read(root, features="warmup-cnn")


@FUZZ
@given(arr=ARRAYS, labels=st.lists(st.sampled_from(["a", "b", ""]), max_size=4), **MANGLE)
def test_image_npz(arr, labels, how, cut, junk):
    path = _tmp(".npz")
    buf = io.BytesIO()
    np.savez(buf, images=arr, labels=np.array(labels))
    path.write_bytes(_mangle(buf.getvalue(), min(how, 1) if how < 4 else how, cut, junk))
    _check_read(path, features="warmup-cnn")


@settings(max_examples=8, deadline=None)
@given(
    junk=st.binary(max_size=200),
    name=st.sampled_from(["data-00000-of-00001.arrow", "state.json", "dataset_info.json"]),
)
def test_hf_dataset_folder(junk, name):
    pytest.importorskip("datasets")
    root = _tmp("").parent / "ds"
    root.mkdir()
    for fname in ("data-00000-of-00001.arrow", "state.json", "dataset_info.json"):
        (root / fname).write_bytes(b"{}" if fname.endswith(".json") else b"")
    (root / name).write_bytes(junk)
    _check_read(root, text=["text"])


# --- through a whole job --------------------------------------------------------------------

WORDS = st.sampled_from(["a", "cat", "dog", "nobody", "sleeps", "é", "\u200b", "x" * 300])
# labels by position, so that every example has several classes; the text is what varies
JOB_ROWS = st.lists(st.builds(" ".join, st.lists(WORDS, min_size=1, max_size=6)), min_size=20,
                    max_size=60).map(
    lambda texts: [{"label": "abc"[i % 3], "text": t} for i, t in enumerate(texts)]
)  # fmt: skip
RAN = []


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=JOB_ROWS)
def test_a_job_partitions_what_it_reads_or_fails_in_one_line(rows):
    from aflite.jobs import run_filter_job

    path = _tmp(".jsonl")
    path.write_bytes(_jsonl(rows))
    out = path.parent / "out"
    # train_size 0.2: a training part of at least 4 of the 20+ rows covers the 3 classes
    job = FilterJob(input=str(path), text=["text"], n_partitions=4, train_size=0.2,
                    out_dir=str(out), report=False, cache_dir=None)  # fmt: skip
    try:
        outcome = run_filter_job(job, progress=False, log=lambda s: None)
    except ALLOWED as e:
        _one_line(e)
        assert not (out / "summary.json").exists()
        return
    kept = (out / "kept.jsonl").read_text().splitlines()
    removed = (out / "removed.jsonl").read_text().splitlines()
    assert len(kept) + len(removed) == len(rows)
    plain = [json.loads(x) for x in kept] + [
        {k: v for k, v in json.loads(x).items() if not k.startswith("aflite_")} for x in removed
    ]
    assert sorted(map(json.dumps, plain)) == sorted(map(json.dumps, rows))
    assert len(outcome.result.kept) == len(kept)
    RAN.append(len(rows))


def test_the_job_fuzz_ran_whole_jobs():
    # runs after the property above (file order): at least one example filtered for real
    assert RAN
