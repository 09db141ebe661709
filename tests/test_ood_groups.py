"""Out-of-distribution sets read as the paper reads them: restricted to gold labels, broken
down by a field (HANS's heuristic, a stress set's category)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import cli

from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.experiments import compare_experiment
from aflite.experiments.ood import parse_per_set, restrict_labels, split_by_category
from aflite.experiments.sets import LabelledTexts
from aflite.io import read_labelled

COLLAPSE = {"neutral": "non-entailment", "contradiction": "non-entailment"}
FAST = dict(n_partitions=8, evaluators=["logreg"])
HEURISTICS = ("lexical_overlap", "subsequence", "constituent")


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


def lt(rs, labels=None, categories=None):
    labels = labels if labels is not None else [r["label"] for r in rs]
    cats = categories if categories is not None else [None] * len(rs)
    rows = [
        {"hypothesis": r["hypothesis"], "label": y} | ({"cat": c} if c is not None else {})
        for r, y, c in zip(rs, labels, cats)
    ]
    return read_labelled(rows, text="hypothesis", group="cat" if categories else None)


def test_parse_per_set():
    assert parse_per_set(["heuristic"], "--f") == {None: "heuristic"}
    assert parse_per_set(["hans:heuristic", "stress:category"], "--f") == {
        "hans": "heuristic", "stress": "category"
    }  # fmt: skip
    for bad in (["hans:"], [":x"], ["a", "b"], ["s:a", "s:b"]):
        with pytest.raises(DataError, match="^--f: "):
            parse_per_set(bad, "--f")


def test_restrict_and_split_known_answer():
    d = LabelledTexts(
        {"h": list("abcdef")},
        np.array(["e", "n", "n", "e", "n", "n"]),
        groups=np.array(["x", "x", "y", "y", "y", "z"]),
    )
    kept = restrict_labels("hans", d, ["n"])
    assert kept.texts["h"] == list("bcef") and kept.groups.tolist() == ["x", "y", "y", "z"]
    assert restrict_labels("hans", d, None) is d
    with pytest.raises(DataError, match="^--ood-labels: hans has no rows labelled maybe"):
        restrict_labels("hans", d, ["maybe"])
    groups = split_by_category("hans", kept)
    assert {k: v.tolist() for k, v in groups.items()} == {
        "hans[x]": [0], "hans[y]": [1, 2], "hans[z]": [3]
    }  # fmt: skip
    assert split_by_category("dev", LabelledTexts({"h": ["a"]}, np.array(["e"]))) == {}


def test_group_accuracies_average_to_the_set_accuracy(rows):
    train, dev = lt(rows[:600]), lt(rows[4500:4800])
    ood_rows = rows[4800:5100]
    cats = [HEURISTICS[i % 3] for i in range(len(ood_rows))]
    hans = lt(ood_rows, [COLLAPSE.get(r["label"], r["label"]) for r in ood_rows], cats)
    res = compare_experiment(
        train, dev, ood={"hans": hans}, ood_labels={"hans": ["non-entailment"]},
        label_map=COLLAPSE, **FAST,
    )  # fmt: skip
    n_kept = sum(r["label"] != "entailment" for r in ood_rows)
    groups = [f"hans[{h}]" for h in sorted(HEURISTICS)]
    assert res.eval_sets == ["dev", "dev (filtered)", "hans", *groups]
    assert res.details["ood_groups"] == {"hans": groups}
    assert res.details["ood_labels"] == {"hans": ["non-entailment"]}
    assert res.sizes["hans"] == n_kept == sum(res.sizes[g] for g in groups)
    # only non-entailment rows are left: every set's majority rate is 1
    assert all(res.majority[e]["mean"] == 1.0 for e in ["hans", *groups])
    for r in res.rows:
        weighted = sum(r[g] * res.sizes[g] for g in groups) / n_kept
        assert r["hans"] == pytest.approx(weighted)
    header, table = res.sets_table()
    assert header == ["evaluation set", "rows", "majority rate"]
    assert [row[0] for row in table][2:] == ["hans", *groups]
    doc = res.to_dict()
    assert set(groups) <= set(doc["sizes"]) and set(groups) <= set(doc["majority"])


def test_cli_group_field_and_labels(tmp_path, rows, monkeypatch, capsys):
    def write(name, rs):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in rs))
        return p

    tr, dv = write("train.jsonl", rows[:600]), write("dev.jsonl", rows[4500:4800])
    hans_rows = [
        dict(r, label=COLLAPSE.get(r["label"], r["label"]), heuristic=HEURISTICS[i % 3])
        for i, r in enumerate(rows[4800:5100])
    ]
    hans = write("hans.jsonl", hans_rows)
    base = ["experiment", "ood", tr, "--dev", dv, "--ood", hans, "--text-fields", "hypothesis",
            "--evaluators", "logreg", "--n-partitions", "8", "--label-map",
            "neutral=non-entailment,contradiction=non-entailment"]  # fmt: skip
    out_json = tmp_path / "r.json"
    code, out, err = cli(
        *base, "--ood-group-field", "hans:heuristic",
        "--ood-labels", "hans:non-entailment", "--json", out_json,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out_json.read_text())
    assert doc["eval_sets"][2:] == ["hans"] + [f"hans[{h}]" for h in sorted(HEURISTICS)]
    assert "hans[subsequence]" in out and "majority rate" in out
    for args, where in (
        (["--ood-group-field", "topic"], "field 'topic'"),
        (["--ood-group-field", "snli:heuristic"], "--ood-group-field: no --ood set"),
        (["--ood-labels", "hans:maybe"], "--ood-labels: hans has no rows labelled maybe"),
        (["--ood-labels", "hans:"], "--ood-labels: 'hans:'"),
    ):
        code, _, err = cli(*base, *args)
        assert code == 2 and err.count("\n") == 1 and where in err, err
