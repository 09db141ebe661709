"""Audits on real SNLI (known artifacts) and on planted data (exact expectations)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import aflite
from aflite.audits import (
    identity_pmi,
    knn_distances,
    max_ppmi_baseline,
    partial_input_baseline,
    run_audits,
    word_label_pmi,
    word_label_zstats,
)
from aflite.data import bundled_snli


@pytest.fixture(scope="module")
def snli():
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()]
    return {
        "premise": [r["premise"] for r in rows],
        "hypothesis": [r["hypothesis"] for r in rows],
        "label": np.array([r["label"] for r in rows]),
    }


def _top(result, label, k):
    return [r[2] for r in result.rows if r[0] == label][:k]


def test_snli_pmi_finds_the_known_hypothesis_artifacts(snli):
    res = word_label_pmi(snli["hypothesis"], snli["label"], min_count=20)
    contradiction = _top(res, "contradiction", 10)
    entailment = _top(res, "entailment", 10)
    assert "nobody" in contradiction and "sleeping" in contradiction
    assert "outdoors" in entailment or "instrument" in entailment
    assert "tall" in _top(res, "neutral", 10) or "vacation" in _top(res, "neutral", 10)


def test_snli_zstats_mark_artifacts_significant(snli, tmp_path):
    res = word_label_zstats(
        snli["hypothesis"], snli["label"], min_count=20, plot=tmp_path / "z.png"
    )
    sig = res.details["significant"]
    assert "nobody" in sig["contradiction"] and "outdoors" in sig["entailment"]
    assert (tmp_path / "z.png").stat().st_size > 10_000
    assert res.details["z_threshold"] > 3


def test_snli_partial_input_and_max_ppmi_beat_chance(snli):
    partial = partial_input_baseline(snli["hypothesis"], snli["label"])
    acc, majority = partial.rows[0][1], partial.rows[0][2]
    assert acc > majority + 0.15
    ppmi = max_ppmi_baseline(snli["hypothesis"], snli["label"])
    assert ppmi.rows[0][1] > majority + 0.1


def _planted(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(60)]
    y = rng.integers(0, 3, n)
    texts = [" ".join(rng.choice(words, 6)) for _ in range(n)]
    planted = np.flatnonzero(y == 2)[:150]
    for i in planted:
        texts[i] += " zebra"
    return texts, y


def test_planted_token_ranks_first_and_is_significant():
    texts, y = _planted()
    pmi = word_label_pmi(texts, y, min_count=10)
    assert _top(pmi, "2", 1) == ["zebra"]
    z = word_label_zstats(texts, y, min_count=10)
    assert z.details["significant"]["2"] == ["zebra"]
    assert [r[1] for r in z.rows if r[0] == "2"][0] == "zebra"


def test_identity_words_are_kept_and_custom_lists_apply(snli):
    sentences = {"premise": snli["premise"], "hypothesis": snli["hypothesis"]}
    res = identity_pmi(sentences, min_counts=10, n_jobs=1)
    words = {r[0] for r in res[-2].rows}
    assert {"woman", "man", "he", "she"} <= words  # "he"/"she" are stop words but identities
    custom = identity_pmi(sentences, min_counts=10, identity_words={"dog": "animal"}, n_jobs=1)
    assert {r[0] for r in custom[-2].rows} == {"dog"}


def test_knn_distances_grow_when_near_duplicates_are_removed():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(300, 16))
    y = rng.integers(0, 2, 300)
    dup = base + rng.normal(scale=0.01, size=base.shape)  # near-duplicates of every row
    before = knn_distances(np.vstack([base, dup]), np.concatenate([y, y]), seed=0)
    after = knn_distances(base, y, seed=0)
    b = {(r[0], r[1]): r[2] for r in before.rows}
    a = {(r[0], r[1]): r[2] for r in after.rows}
    assert all(a[k] > b[k] for k in b if k[1] == "same class")


def test_representation_bias_audit_is_the_mean_predictability_against_the_majority_rate():
    from conftest import planted_data

    x, y, _ = planted_data(n=600, share=0.5)  # half the rows give their label away
    texts = {"text": [f"row {i}" for i in range(600)]}
    (res,) = run_audits(texts, y, audits=["bias"], features=x, seed=0)
    estimate, majority = res.rows[0][0], res.rows[0][1]
    t = min(0.5, max(0.1, 2000 / len(y)))
    ps = aflite.predictability_scores(x, y, n_partitions=64, train_size=t, seed=0)
    assert estimate == pytest.approx(ps.representation_bias)
    assert majority == pytest.approx(np.bincount(y).max() / 600)
    assert 0.55 < estimate < 0.8  # about half the rows at ~1, the rest at chance


def test_run_audits_rejects_unknown_names(snli):
    with pytest.raises(ValueError, match="unknown audit"):
        run_audits({"hypothesis": snli["hypothesis"][:10]}, snli["label"][:10], audits=["vibes"])


@pytest.mark.slow
def test_audit_cli_compare_json_and_query(tmp_path, snli):
    kept, full = tmp_path / "kept.jsonl", tmp_path / "full.jsonl"
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()]
    full.write_text("".join(json.dumps(r) + "\n" for r in rows[:3000]))
    kept.write_text("".join(json.dumps(r) + "\n" for r in rows[:1500]))
    out = tmp_path / "audit.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "aflite",
            "audit",
            str(full),
            "--text-fields",
            "premise,hypothesis",
            "--compare",
            str(kept),
            "--audits",
            "pmi,zstats,identity,partial,ppmi,knn",
            "--json",
            str(out),
            "--plot-dir",
            str(tmp_path),
            "--save-counts",
            str(tmp_path / "c.npz"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "hypothesis-only accuracy" in r.stdout
    doc = json.loads(out.read_text())
    assert len(doc["audits"]) == len(doc["compare_audits"]) == 9  # identity: 3 fields + bigrams
    assert all({"name", "summary", "table", "details"} <= set(a) for a in doc["audits"])
    assert (tmp_path / "zstats-input.png").exists() and (tmp_path / "zstats-compare.png").exists()
    q = subprocess.run(
        [sys.executable, "-m", "aflite", "pmi-query", str(tmp_path / "c.npz"), "woman"],
        capture_output=True,
        text=True,
    )
    rows = [line.split() for line in q.stdout.splitlines()[4:]]
    assert q.returncode == 0 and len(rows) == 20
    assert all(len(r) == 4 and r[3] != "woman" and float(r[0]) > 0 for r in rows)
    bad = subprocess.run(
        [sys.executable, "-m", "aflite", "pmi-query", str(tmp_path / "c.npz"), "qwxzy"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "not in the vocabulary" in bad.stderr


@pytest.mark.slow
def test_the_audit_embeds_through_the_cache_the_filter_uses(tmp_path):
    from conftest import run_in_process

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:60]]
    data = tmp_path / "small.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["audit", str(data), "--text-fields", "hypothesis", "--audits", "knn", "--quiet",
            "--features", "sentence-transformers:all-MiniLM-L6-v2",
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    first = run_in_process(*args)
    assert first.returncode == 0, first.stderr
    assert any((tmp_path / "cache").rglob("*")), "nothing cached"
    again = run_in_process(*args)
    assert again.returncode == 0 and again.stdout == first.stdout
