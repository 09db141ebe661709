"""``aflite filter``'s options: every bad value is refused before any work with one line
naming its flag, and the text and id fields the command line leaves out are picked from the
data (and said so)."""

from __future__ import annotations

import json

import pytest
from conftest import run_in_process

from aflite.api.pipeline import FilterRun, read_rows
from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.jobs import FilterJob

SNLI = str(bundled_snli())

BAD_OPTIONS = [
    (["--threshold", "75"], "--threshold: must be in [0, 1], got 75"),
    (["--threshold", "-0.1"], "--threshold: must be in [0, 1], got -0.1"),
    (["--threshold", "nan"], "--threshold: must be in [0, 1], got nan"),
    (["--strategy", "slice"], "--strategy: unknown value 'slice'"),
    (["--train-size", "0"], "--train-size: must be at least 1 row, got 0"),
    (["--train-size", "abc"], "--train-size: must be a row count or a fraction"),
    (["--train-size", "1.5"], "--train-size: as a fraction must be in (0, 1), got 1.5"),
    (["--train-size", "5000"], "--train-size: 5000 must be smaller than --target-size (3000)"),
    (
        ["--train-size", "2"],
        "--train-size: 2 gives each classifier 2 training rows, fewer than the 3 classes",
    ),
    (
        ["--train-size", "0.0003"],
        "--train-size: 0.0003 of 6000 rows gives each classifier 2 "
        "training rows, fewer than the 3 classes",
    ),
    (["--target-size", "0"], "--target-size: must be at least 1 row, got 0"),
    (["--target-size", "6000"], "--target-size: 6000 is not smaller than the 6000 rows"),
    (["--target-size", "0.00001"], "--target-size: 1e-05 of 6000 rows is less than 1 row"),
    (["--n-partitions", "0"], "--n-partitions: must be a positive whole number or auto, got 0"),
    (["--seed", "-1"], "--seed: must be a whole number in [0, 4294967295], got -1"),
    (["--slice-size", "0"], "--slice-size: must be at least 1 row, got 0"),
    (["--slice-size", "-3"], "--slice-size: must be at least 1 row, got -3"),
    (["--min-bias", "2"], "--min-bias: must be a margin in [0, 1] or off, got 2"),
    (["--min-bias", "x"], "--min-bias: must be a margin such as 0.02, or 'off'"),
    (["--balance", "x"], "--balance: must be none or classes, got 'x'"),
    (["--device", "tpu"], "--device: unknown device 'tpu'"),
    (["--features", "bogus"], "--features: unknown features 'bogus'"),
    (["--features", "ngrams:bogus=1"], "--features: unknown n-gram option 'bogus=1'"),
    (["--audits", "bogus"], "--audits: unknown audit 'bogus' (choose from pmi"),
    (["--audits", "pmi,pmx"], "--audits: unknown audit 'pmx'"),
    (["--warmup-fraction", "2"], "--warmup-fraction: must be in (0, 1), got 2"),
    (["--warmup-finetune"], "--warmup-finetune: needs --features sentence-transformers"),
    (["--backend", "spark"], "--backend: unknown backend 'spark' (choose from ray)"),
    (["--partitions", "random"], "--partitions: unknown value 'random'"),
    (["--threads", "0"], "--threads: must be a positive whole number, got 0"),
    (["--ray-address", "auto"], "--ray-address: needs --backend ray"),
    (["--text-fields", "hypothesis,hypothesis"], "--text-fields: 'hypothesis' is named twice"),
    (["--text-fields", "label"], "--text-fields: 'label' is the label field"),
    (["--features", "precomputed:x.npy", "--audits", "pmi"], "--audits: the audits read text"),
]


def _read(job):
    """The rows a filter job reads, read and checked as the job reads them."""
    return read_rows(FilterRun.of_config(job))


@pytest.mark.parametrize("extra, message", BAD_OPTIONS, ids=[" ".join(e) for e, _ in BAD_OPTIONS])
def test_a_bad_option_is_one_line_naming_its_flag_and_leaves_no_output(tmp_path, extra, message):
    out = tmp_path / "out"
    args = ["filter", SNLI, "--group-field", "premise", "--out-dir", str(out), "--quiet"]
    if "--features" in extra and "precomputed:x.npy" in extra:
        import numpy as np

        np.save(tmp_path / "x.npy", np.zeros((6000, 2), dtype=np.float32))
        extra = [a.replace("x.npy", str(tmp_path / "x.npy")) for a in extra]
    r = run_in_process(*args, *extra)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == f"aflite: error: {r.stderr.removeprefix('aflite: error: ')}"
    assert message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not out.exists()


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _snli_rows(n=300):
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()[:n]]


def test_the_only_text_column_and_a_column_named_id_are_picked():
    job = FilterJob(input=SNLI, group="premise")
    inputs = _read(job)
    assert inputs.fields.text == ("hypothesis",) and inputs.fields.id == "id"
    assert job.text == () and job.id is None  # the given options stay as given
    assert inputs.picked == ["text", "id"]
    assert (
        list(inputs.texts) == ["hypothesis"]
        and inputs.ids[0] == json.loads(bundled_snli().read_text().splitlines()[0])["id"]
    )
    # given fields are never replaced
    job = FilterJob(input=SNLI, text=["premise", "hypothesis"], id="id")
    inputs = _read(job)
    assert inputs.picked == [] and inputs.fields.text == ("premise", "hypothesis")


def test_several_or_no_text_columns_is_one_line_listing_them(tmp_path):
    with pytest.raises(DataError) as e:
        _read(FilterJob(input=SNLI))
    assert str(e.value) == (
        f"{SNLI}: several text columns (premise, hypothesis); name the text fields to use "
        "(--text-fields / text=), e.g. premise,hypothesis"
    )
    src = _write(tmp_path / "n.jsonl", [{"x": i, "label": "ab"[i % 2]} for i in range(6)])
    with pytest.raises(DataError, match=r"no text column besides .*columns: x, label"):
        _read(FilterJob(input=src))
    # features that need no text pick none
    assert _read(FilterJob(input=src, features="precomputed:f.npy")).picked == []


def test_csv_columns_of_numbers_are_not_text(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text(
        "id,score,review,label\n"
        + "".join(f"{i},{i * 0.5},good film {i},{'ab'[i % 2]}\n" for i in range(8))
    )
    job = FilterJob(input=str(src))
    inputs = _read(job)
    assert inputs.fields.text == ("review",) and inputs.picked == ["text", "id"]


def test_a_picked_id_column_is_checked_and_none_numbers_the_rows(tmp_path):
    rows = [{"id": "a", "t": "x y", "label": "e"}, {"id": "a", "t": "z", "label": "c"}]
    src = _write(tmp_path / "in.jsonl", rows)
    with pytest.raises(DataError) as e:
        _read(FilterJob(input=src))
    assert "in.jsonl:2: field 'id' duplicates id 'a'" in str(e.value)
    assert "--id-field none / id='none'" in str(e.value)
    job = FilterJob(input=src, id="none")
    inputs = _read(job)
    assert inputs.ids == [0, 1] and inputs.picked == ["text"] and inputs.fields.text == ("t",)


def test_a_run_says_what_it_picked(tmp_path):
    rows = _snli_rows(240)
    src = _write(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    r = run_in_process(
        "filter", src, "--group-field", "premise", "--target-size", "200", "--train-size",
        "60", "--slice-size", "20", "--n-partitions", "8", "--out-dir", str(out), "--quiet",
        "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "picked text field hypothesis (the only text column) and id field id" in r.stderr
    fields = json.loads((out / "summary.json").read_text())["fields"]
    assert fields == {
        "label": "label", "text": ["hypothesis"], "id": "id", "group": "premise",
        "picked": ["text", "id"],
    }  # fmt: skip
    import pyarrow.parquet as pq

    ids = pq.read_table(out / "scores.parquet").column("id").to_pylist()
    assert ids == [r["id"] for r in rows]  # the rows' own ids, not their numbers


@pytest.mark.parametrize(
    "args, message",
    [
        (["filter", "x.jsonl", "--threads", "abc"], "Invalid value for '--threads'"),
        (["filter", "x.jsonl", "--bogus"], "No such option: --bogus"),
        (["filter"], "Missing argument 'INPUT'"),
        (["nosuch"], "No such command 'nosuch'"),
    ],
)
def test_usage_mistakes_are_one_line_too(args, message):
    r = run_in_process(*args)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("aflite: error: ") and message in r.stderr and "--help" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["filter", "nonexist.jsonl"],
        ["filter", "{slice}", "--threshold", "75"],
        ["filter", "{slice}", "--train-size", "-3"],
    ],
)
def test_a_bad_option_or_path_fails_before_torch_is_imported(args):
    # the error comes at once: nothing heavy (torch, the model registry) is loaded for it
    import subprocess
    import sys

    from aflite.data import bundled_snli

    args = [a.replace("{slice}", str(bundled_snli())) for a in args]
    code = (
        "import sys\n"
        "from aflite.cli.main import main\n"
        f"sys.argv = ['aflite', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, 'torch' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["2", "False"], r.stdout + r.stderr
    assert r.stderr.startswith("aflite: error: ") and r.stderr.count("\n") == 1
