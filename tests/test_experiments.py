"""The paper's experiments reproduce its published shape."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from aflite.data import bundled_snli
from aflite.experiments import compare_experiment, make_biased_circles, run_synthetic
from aflite.io import read_labelled


@pytest.mark.slow
def test_synthetic_study_has_the_published_shape(tmp_path):
    levels = run_synthetic(n=1200, plot=tmp_path / "grid.png")
    assert len(levels) == 4
    for lv in levels:
        assert lv.biased_before == pytest.approx(0.75, abs=0.01)
        assert lv.biased_after < 0.5  # the artifact carriers are largely gone
        assert lv.linear_before > 0.8 and lv.linear_after < 0.65  # linear falls toward chance
        assert lv.rbf_after > 0.75  # the real (non-linear) signal is still learnable
    assert levels[0].flipped_before == pytest.approx(0.05, abs=0.005)
    assert levels[0].flipped_after < levels[0].flipped_before * 0.7
    assert (tmp_path / "grid.png").stat().st_size > 20_000


def test_flipped_rows_carry_the_flipped_labels_artifact():
    x, y, biased, flipped = make_biased_circles(2000, 0.3, flip_share=0.05, seed=1)
    assert flipped.sum() == 100 and np.all(biased[flipped])
    # bias features point at the (flipped) label: the sign of the mean bias feature
    assert np.mean((x[flipped, 2:].mean(axis=1) > 0) == (y[flipped] == 1)) > 0.9


@pytest.fixture(scope="module")
def snli_split():
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()]

    def lt(rs, fields, group=None):
        keep = [*fields, "label"] + ([group] if group and group not in fields else [])
        return read_labelled([{k: r[k] for k in keep} for r in rs], text=fields, group=group)

    return rows[:4500], rows[4500:], lt


@pytest.mark.slow
def test_compare_protocol_on_snli(snli_split):
    train, dev, lt = snli_split
    res = compare_experiment(
        lt(train, ["hypothesis"], group="premise"),
        lt(dev, ["hypothesis"], group="premise"),
        evaluators=["logreg", "partial", "max-ppmi", "sklearn.naive_bayes.MultinomialNB"],
        ood={"extra": lt(dev[:300], ["hypothesis"])},
        n_partitions=32,  # half the default m: the protocol is the point here, at half the time
    )
    acc = {(r["evaluator"], r["train"]): r for r in res.rows}
    # With the default chance stop the filter removes 20% here (kept rows at chance for its own
    # model); training on them teaches a hypothesis-only model no more than a random subset of
    # the same size, and the filtered dev set is harder for every evaluator.
    for ev in ("logreg", "partial", "max-ppmi", "sklearn.naive_bayes.MultinomialNB"):
        full, rand, filt = (acc[(ev, t)] for t in ("D", "D_n (random)", "D(Phi) (AFLITE)"))
        # 1,500 dev rows: an accuracy's standard error is ~0.013, so "no more" means within
        # about two of them, not a fixed 0.005 that one reseed of the partitions can cross
        assert filt["dev"] <= rand["dev"] + 0.03, ev
        assert full["dev (filtered)"] < full["dev"] - 0.03, ev
        assert "extra" in full
    assert res.sizes["D(Phi) (AFLITE)"] < 0.9 * res.sizes["D"]  # real work
    assert res.sizes["D(Phi) (AFLITE)"] == res.sizes["D_n (random)"]
    md = res.markdown()
    assert md.count("\n") == 2 + 4 * 4 and "(-" in md  # D, random, AFLITE, difference


def test_compare_rejects_unknown_evaluator(snli_split):
    train, dev, lt = snli_split
    with pytest.raises(ValueError, match="unknown evaluator"):
        compare_experiment(
            lt(train[:60], ["hypothesis"]), lt(dev[:60], ["hypothesis"]), evaluators=["gpt"]
        )


@pytest.mark.slow
def test_experiment_cli(tmp_path, snli_split):
    train, dev, _ = snli_split
    tr, dv = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    tr.write_text("".join(json.dumps(r) + "\n" for r in train[:2400]))
    dv.write_text("".join(json.dumps(r) + "\n" for r in dev[:900]))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "aflite",
            "experiment",
            "ood",
            str(tr),
            "--dev",
            str(dv),
            "--ood",
            str(dv),
            "--text-fields",
            "hypothesis",
            "--evaluators",
            "partial",
            "--n-partitions",
            "16",  # the command's plumbing is the point here
            "--markdown",
            str(tmp_path / "t.md"),
            "--json",
            str(tmp_path / "t.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["eval_sets"] == ["dev", "dev (filtered)", "dev (ood)"]
    assert len(doc["rows"]) == 3 and all(0 <= r["dev (ood)"] <= 1 for r in doc["rows"])
    assert "dev (ood)" in r.stdout
    assert (tmp_path / "t.md").read_text().startswith("| evaluator")


def test_feature_fields_restrict_the_filter_not_the_evaluators(snli_split):
    train, dev, lt = snli_split
    kw = dict(evaluators=["logreg"], n_partitions=8, seeds=2)
    pair = compare_experiment(
        lt(train[:900], ["premise", "hypothesis"]), lt(dev[:300], ["premise", "hypothesis"]),
        feature_fields=["hypothesis"], **kw,
    )  # fmt: skip
    hyp = compare_experiment(lt(train[:900], ["hypothesis"]), lt(dev[:300], ["hypothesis"]), **kw)
    # the same Phi and seeds: the same filtered sets and the same model on Phi
    assert pair.details["feature_fields"] == ["hypothesis"]
    assert [r["sizes"] for r in pair.runs] == [r["sizes"] for r in hyp.runs]
    assert [r["rows"] for r in pair.runs] == [r["rows"] for r in hyp.runs]
    with pytest.raises(Exception, match="feature fields"):
        compare_experiment(lt(train[:90], ["hypothesis"]), lt(dev[:60], ["hypothesis"]),
                           feature_fields=["premise"], **kw)  # fmt: skip


def test_majority_rate_of_every_evaluation_set(snli_split):
    train, dev, lt = snli_split
    d = lt(dev[:300], ["hypothesis"])
    res = compare_experiment(
        lt(train[:900], ["hypothesis"]), d, evaluators=["partial"], n_partitions=8, seeds=2
    )
    want = np.unique(d.labels, return_counts=True)[1].max() / len(d)
    assert res.majority["dev"]["values"] == [pytest.approx(want)] * 2
    for run in res.runs:
        assert 1 / 3 <= run["majority"]["dev (filtered)"] <= 1
        counts = run["label_counts"]
        for name in ("D", "D_n (random)", "D(Phi) (AFLITE)", "dev", "dev (filtered)"):
            assert sum(counts[name].values()) == run["sizes"][name], name
        filtered = counts["dev (filtered)"]
        assert run["majority"]["dev (filtered)"] == max(filtered.values()) / sum(filtered.values())
    assert res.to_dict()["majority"] == res.majority


def test_ngrams_evaluator_reads_every_field_partial_only_its_own():
    from aflite.experiments.evaluators import make_evaluator
    from aflite.experiments.sets import LabelledTexts

    # the label is written in the premise only; hypotheses are the same for every class
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 600)
    words = np.array(["alpha", "beta", "gamma"])
    data = LabelledTexts.of(
        read_labelled(
            [{"premise": f"a man {w} here", "hypothesis": "a man", "label": int(c)}
             for w, c in zip(words[y], y)],
            text=["premise", "hypothesis"],
        )
    )  # fmt: skip
    tr, te = data.subset(np.arange(400)), data.subset(np.arange(400, 600))
    pair = make_evaluator("ngrams", ["premise", "hypothesis"], "hypothesis", 0).fit(tr, None)
    hyp = make_evaluator("partial", ["premise", "hypothesis"], "hypothesis", 0).fit(tr, None)
    assert np.mean(pair.predict(te, None) == te.labels) == 1.0
    assert np.mean(hyp.predict(te, None) == te.labels) < 0.5


def test_cli_feature_fields(tmp_path, snli_split):
    from conftest import run_in_process

    train, dev, _ = snli_split
    tr, dv = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    tr.write_text("".join(json.dumps(r) + "\n" for r in train[:600]))
    dv.write_text("".join(json.dumps(r) + "\n" for r in dev[:200]))
    out = tmp_path / "t.json"
    r = run_in_process(
        "experiment", "compare", str(tr), "--dev", str(dv), "--text-fields",
        "premise,hypothesis", "--feature-fields", "hypothesis", "--evaluators", "ngrams",
        "--n-partitions", "8", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["details"]["feature_fields"] == ["hypothesis"]
    assert [row["evaluator"] for row in doc["rows"]] == ["ngrams"] * 3
