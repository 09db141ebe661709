"""Stress sets after Naik et al. (2018): known rewrites, labels and ids kept, seeded, every
format, and the round trip into ``experiment ood --ood-group-field category``."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from conftest import cli

from aflite.data import bundled_snli
from aflite.experiments.stress import STRESS_TESTS, make_stress_set

P, H = ["A man is sleeping on a bench."], ["Nobody sleeps"]


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


def test_distraction_rewrites_known_answer():
    s = make_stress_set(P, H, tests=["word_overlap", "negation", "length_mismatch"])
    assert s.category == ["word_overlap", "negation", "length_mismatch"]
    assert s.kind == ["distraction"] * 3 and s.source.tolist() == [0, 0, 0]
    assert s.hypothesis[:2] == [
        "Nobody sleeps and true is true",
        "Nobody sleeps and false is not true",
    ]
    assert s.premise[2] == "A man is sleeping on a bench" + " and true is true" * 5 + "."
    assert s.premise[:2] == P * 2 and s.hypothesis[2] == H[0]


def test_typos_change_one_word_and_are_seeded(rows):
    ps, hs = [r["premise"] for r in rows[:300]], [r["hypothesis"] for r in rows[:300]]
    tests = ["spelling_swap", "spelling_keyboard"]
    a = make_stress_set(ps, hs, tests=tests, seed=3)
    assert a.hypothesis == make_stress_set(ps, hs, tests=tests, seed=3).hypothesis
    assert a.hypothesis != make_stress_set(ps, hs, tests=tests, seed=4).hypothesis
    for i, cat, h in zip(a.source, a.category, a.hypothesis):
        before, after = hs[i].split(), h.split()
        changed = [(x, y) for x, y in zip(before, after) if x != y]
        assert len(before) == len(after) and len(changed) == 1, (hs[i], h)
        x, y = changed[0]
        assert len(x) == len(y)
        if cat == "spelling_swap":
            assert sorted(x) == sorted(y)
            assert sum(u != v for u, v in zip(x, y)) == 2
        else:
            assert sum(u != v for u, v in zip(x, y)) == 1
    # a hypothesis without a word of four letters cannot carry a typo: left out, counted
    s = make_stress_set(["a b"], ["a cat"], tests=tests)
    assert len(s) == 0 and s.skipped == {"spelling_swap": 1, "spelling_keyboard": 1}


def test_bad_test_names():
    with pytest.raises(ValueError, match="unknown stress test 'typo'"):
        make_stress_set(P, H, tests=["typo"])
    with pytest.raises(ValueError, match="at least one"):
        make_stress_set(P, H, tests=[])
    assert {t.kind for t in STRESS_TESTS.values()} == {"distraction", "noise"}


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_cli_keeps_labels_ids_and_format(tmp_path, rows, monkeypatch, capsys, fmt):
    src = rows[:40]
    path = tmp_path / f"dev.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in src))
    else:
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(src[0]))
            w.writeheader()
            w.writerows(src)
    code, out, err = cli("experiment", "stress", path, "--out-dir",
                           tmp_path / "s", "--seed", "1")  # fmt: skip
    assert code == 0, err
    out_path = tmp_path / "s" / f"stress.{fmt}"
    if fmt == "jsonl":
        got = [json.loads(line) for line in out_path.read_text().splitlines()]
    else:
        got = list(csv.DictReader(out_path.open()))
    by_id = {str(r["id"]): r for r in src}
    assert len(got) == 40 * len(STRESS_TESTS)
    for g in got:
        s = by_id[str(g["source_id"])]
        assert g["label"] == s["label"] and g["id"] == f"{g['source_id']}:{g['category']}"
    summary = json.loads((tmp_path / "s" / "stress_summary.json").read_text())
    assert summary["rows"] == len(got) and summary["tests"]["negation"]["rows"] == 40
    # a second run into the same folder is refused; bad flags are one line
    for args in (
        [],
        ["--overwrite", "--tests", "typo"],
        ["--overwrite", "--hypothesis-field", "h"],
    ):
        code, _, err = cli("experiment", "stress", path, "--out-dir",
                             tmp_path / "s", *args)  # fmt: skip
        assert code == 2 and err.count("\n") == 1, err


def test_stress_set_by_category_in_ood(tmp_path, rows, monkeypatch, capsys):
    def write(name, rs):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in rs))
        return p

    tr, dv = write("train.jsonl", rows[:600]), write("dev.jsonl", rows[4500:4800])
    code, _, err = cli("experiment", "stress", dv, "--out-dir",
                         tmp_path / "st", "--tests", "word_overlap,spelling_swap")  # fmt: skip
    assert code == 0, err
    out_json = tmp_path / "r.json"
    code, out, err = cli(
        "experiment", "ood", tr, "--dev", dv, "--ood",
        tmp_path / "st" / "stress.jsonl", "--ood-group-field", "category", "--text-fields",
        "premise,hypothesis", "--evaluators", "ngrams", "--n-partitions", "8", "--json", out_json,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out_json.read_text())
    groups = ["stress[spelling_swap]", "stress[word_overlap]"]
    assert doc["eval_sets"][2:] == ["stress", *groups]
    assert doc["sizes"]["stress[word_overlap]"] == 300
    # appending a tautology to the hypothesis changes no premise: a pair model moves little
    d = next(r for r in doc["rows"] if r["train"] == "D")
    assert abs(d["stress[word_overlap]"] - d["dev"]) < 0.1
    assert np.isclose(d["stress"], np.mean([d[g] for g in groups], dtype=float), atol=0.01)
