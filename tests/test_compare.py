"""The compare / ood evidence harness: label spaces, one representation, the same t before and
after, repeated seeds, random-subset controls."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.experiments import LabelledTexts, compare_experiment
from aflite.experiments.labels import label_space, mapped_accuracy, parse_label_map

COLLAPSE = {"neutral": "non-entailment", "contradiction": "non-entailment"}
FAST = dict(n_partitions=8, evaluators=["logreg"])


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


def lt(rs, fields=("hypothesis",), labels=None):
    return LabelledTexts(
        {f: [r[f] for r in rs] for f in fields},
        np.array(labels if labels is not None else [r["label"] for r in rs]),
    )


def hans_like(rs):
    """Two classes, as HANS: entailment / non-entailment."""
    return lt(rs, labels=[COLLAPSE.get(r["label"], r["label"]) for r in rs])


def _main(monkeypatch, capsys, *args):
    """``aflite ARGS`` in this process: (exit code, stdout, stderr)."""
    from aflite.cli.main import main

    monkeypatch.setattr(sys, "argv", ["aflite", *map(str, args)])
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def _write(path, rs):
    path.write_text("".join(json.dumps(r) + "\n" for r in rs))
    return path


# --- label spaces ----------------------------------------------------------------------------


def test_parse_label_map():
    assert parse_label_map("neutral=non-entailment, contradiction = non-entailment") == COLLAPSE
    assert parse_label_map(None) is None and parse_label_map("  ") is None
    for bad in ("neutral", "=x", "neutral=", "a=b=c", "a=b,a=c", "a=b,,c=d"):
        with pytest.raises(DataError, match="^--label-map: ") as e:
            parse_label_map(bad)
        assert "\n" not in str(e.value)


def test_label_space_rules():
    trained = ["contradiction", "entailment", "neutral"]
    assert label_space("dev", ["entailment", "neutral"], trained, None) is None
    assert label_space("dev", ["entailment", "neutral"], trained, COLLAPSE) is None  # as is
    assert label_space("hans", ["entailment", "non-entailment"], trained, COLLAPSE) == COLLAPSE
    with pytest.raises(DataError, match="^hans: labels non-entailment are not among"):
        label_space("hans", ["entailment", "non-entailment"], trained, None)
    with pytest.raises(DataError, match="^hans: labels maybe are neither"):
        label_space("hans", ["entailment", "maybe"], trained, COLLAPSE)
    # mapped predictions: 3-class predictions scored in the 2-class space
    pred = np.array(["neutral", "contradiction", "entailment", "neutral"])
    gold = ["non-entailment", "non-entailment", "non-entailment", "entailment"]
    assert mapped_accuracy(pred, gold, COLLAPSE) == 0.5
    assert mapped_accuracy(pred, gold, None) == 0.0


def test_two_class_set_against_three_class_models(rows):
    train, dev, hans = lt(rows[:600]), lt(rows[4500:4800]), hans_like(rows[4500:4800])
    with pytest.raises(DataError, match="^hans: labels non-entailment are not among"):
        compare_experiment(train, dev, ood={"hans": hans}, **FAST)
    with pytest.raises(DataError, match="--label-map: 'neutrl' is not a training label"):
        compare_experiment(
            train, dev, ood={"hans": hans}, label_map={"neutrl": "non-entailment"}, **FAST
        )
    res = compare_experiment(train, dev, ood={"hans": hans}, label_map=COLLAPSE, **FAST)
    assert res.details["mapped_sets"] == ["hans"]
    for r in res.rows:
        # the same rows with collapsed labels: a 3-class error between neutral and
        # contradiction becomes right, nothing becomes wrong
        assert r["dev"] <= r["hans"] <= 1.0
        assert r["hans"] > 0.6  # the majority (non-entailment) rate is about 2/3


def test_cli_label_map(tmp_path, rows, monkeypatch, capsys):
    tr, dv = (
        _write(tmp_path / "train.jsonl", rows[:600]),
        _write(tmp_path / "dev.jsonl", rows[4500:4800]),
    )
    hans_rows = [dict(r, label=COLLAPSE.get(r["label"], r["label"])) for r in rows[4500:4800]]
    hans = _write(tmp_path / "hans.jsonl", hans_rows)
    base = ["experiment", "ood", tr, "--dev", dv, "--ood", hans, "--text-fields", "hypothesis",
            "--evaluators", "logreg"]  # fmt: skip
    code, _, err = _main(monkeypatch, capsys, *base)
    assert code == 2 and err.count("\n") == 1 and "hans: labels non-entailment" in err
    code, _, err = _main(monkeypatch, capsys, *base, "--label-map", "neutral:non-entailment")
    assert code == 2 and err.count("\n") == 1 and "--label-map" in err
    out_json = tmp_path / "t.json"
    code, out, err = _main(
        monkeypatch, capsys, *base, "--label-map",
        "neutral=non-entailment,contradiction=non-entailment", "--json", out_json,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out_json.read_text())
    assert all(0.6 < r["hans"] <= 1 for r in doc["rows"])
    assert "hans" in out
