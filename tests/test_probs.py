"""Bring your own out-of-fold probabilities: ``--probs`` / ``probs=`` for pvi, and
``--partial-probs`` / ``partial_probs=`` for partial and pvi_partial."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import cli

import aflite
from aflite.errors import DataError
from aflite.scoring.crossfit import oof_prior
from aflite.scoring.pvi import gold_probability

LABELS = ("contradiction", "entailment", "neutral")


def _rows(n=90):
    return [{"id": f"r{i}", "text": f"w{i % 7} x{i % 5} y{i % 3}", "label": LABELS[i % 3]}
            for i in range(n)]  # fmt: skip


def _probs(n=90, seed=0):
    p = np.random.default_rng(seed).dirichlet(np.ones(3), size=n)
    return p


def test_pvi_and_partial_from_given_probabilities_known_answer():
    rows, p, q = _rows(), _probs(seed=0), _probs(seed=1)
    ds = aflite.score_dataset(
        rows, label="label", text="text", id="id", scorers=["pvi", "partial"], probs=p,
        partial_probs=q, device="cpu",
    )  # fmt: skip
    y = np.arange(90) % 3  # LABELS are in sorted order
    p_gold, q_gold = p[np.arange(90), y], q[np.arange(90), y]
    null = gold_probability(oof_prior(y, 3, ds.result.folds), y)[0]
    np.testing.assert_allclose(ds.scores["pvi"], np.log2(p_gold) - np.log2(null))
    np.testing.assert_allclose(ds.scores["partial"], q_gold)
    np.testing.assert_allclose(ds.scores["pvi_partial"], np.log2(p_gold) - np.log2(q_gold))
    assert ds.result.info["model_full"] == {"source": "probs"}


def test_python_probabilities_are_checked():
    rows = _rows()
    with pytest.raises(ValueError, match=r"probs: expected \(90, 3\) probabilities"):
        aflite.score_dataset(
            rows, label="label", text="text", scorers=["pvi"], probs=_probs()[:, :2]
        )
    logits = np.log(_probs())
    with pytest.raises(ValueError, match="probs: row 1 is not a probability distribution"):
        aflite.score_dataset(rows, label="label", text="text", scorers=["pvi"], probs=logits)
    with pytest.raises(DataError, match="give partial_probs or a partial input"):
        aflite.score_dataset(rows, label="label", text="text", scorers=["pvi"],
                             partial_probs=_probs(), partial_text="text")  # fmt: skip


def test_cli_probs_files(tmp_path, monkeypatch, capsys):
    rows, p = _rows(), _probs()
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # per-class columns, in a Parquet file, in another order and with an extra row
    frame = pd.DataFrame({"id": [r["id"] for r in rows] + ["extra"]})
    for k, name in enumerate(LABELS):
        frame[name] = list(p[:, k]) + [1 / 3]
    frame.iloc[::-1].to_parquet(tmp_path / "p.parquet")
    # one list column, in JSON Lines
    (tmp_path / "q.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "probs": list(v)}) + "\n" for r, v in zip(rows, p))
    )
    base = ["score", data, "--text-fields", "text", "--scorers", "pvi", "--no-report"]
    got = []
    for i, f in enumerate(("p.parquet", "q.jsonl")):
        out = tmp_path / f"out{i}"
        code, _, err = cli(*base, "--probs", tmp_path / f, "--out-dir", out)
        assert code == 0, err
        got.append(pd.read_parquet(out / "scores.parquet")["pvi"].to_numpy())
    np.testing.assert_allclose(got[0], got[1])
    y = np.arange(90) % 3
    assert np.corrcoef(got[0], np.log2(p[np.arange(90), y]))[0, 1] > 0.99

    def bad(name, lines):
        path = tmp_path / name
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        return path

    ok = [{"id": r["id"], "probs": list(v)} for r, v in zip(rows, p)]
    cases = {
        "missing id": (bad("a.jsonl", ok[1:]), "no probabilities for id 'r0'"),
        "class count": (bad("b.jsonl", [dict(ok[0], probs=[0.5, 0.5])] + ok[1:]),
                        "b.jsonl:1: field 'probs' holds 2 probabilities; the data has 3"),
        "no class column": (bad("c.jsonl", [{"id": r["id"], "contradiction": 1.0} for r in rows]),
                            "no column for class 'entailment'"),
        "logits": (bad("d.jsonl", ok[:5] + [dict(ok[5], probs=[2.0, -1.0, 0.1])] + ok[6:]),
                   "d.jsonl:6: is not a probability distribution"),
        "no id column": (bad("e.jsonl", [{"key": 1, "probs": [1, 0, 0]}]), "no id column 'id'"),
    }  # fmt: skip
    for what, (path, message) in cases.items():
        code, _, err = cli(*base, "--probs", path, "--out-dir",
                             tmp_path / "bad", "--overwrite")  # fmt: skip
        assert code == 2 and err.count("\n") == 1 and message in err, (what, err)
    assert not (tmp_path / "bad").exists()  # nothing half-written
