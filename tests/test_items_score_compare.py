"""Multiple-choice items through ``aflite score`` / :func:`aflite.score_dataset` and
``aflite experiment compare`` / :func:`aflite.experiments.compare_experiment`: a planted
right-choice word makes its items predictable, the filtered set loses it, the command line and
the API give the same results, and what cannot take items is refused in one line, before any
work, through both."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_in_process

import aflite
from aflite.data import bundled_copa
from aflite.experiments import compare_experiment
from aflite.experiments.choice_eval import ChoiceEvaluator
from aflite.experiments.sets import LabelledTexts
from aflite.io.labelled import read_labelled

ITEMS = ["--choices-field", "endings", "--context-fields", "ctx"]
API_SETS = {"choices": "endings", "context": "ctx"}
API = {"label": "label", **API_SETS}


def planted(n: int, seed: int, *, vocabulary: int | None = None) -> list[dict]:
    """Items of 3 choices; the first half carry the word zz in their right choice. The other
    words come from ``vocabulary`` shared words (noise a model may fit) or are unique (then
    n-grams drop them and only zz is a feature)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        if vocabulary is None:
            opts = [f"v{rng.integers(0, 10**9)}" for _ in range(3)]
        else:
            opts = [" ".join(f"v{w}" for w in rng.integers(0, vocabulary, 2)) for _ in range(3)]
        y = int(rng.integers(0, 3))
        if i < n // 2:
            opts[y] += " zz"
        rows.append({"id": i, "ctx": "what comes next", "endings": opts, "label": y})
    return rows


def write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


# --- score -------------------------------------------------------------------------------------


def test_items_with_the_planted_word_score_higher():
    rows = planted(120, 0, vocabulary=30)
    scores, _ = aflite.score_dataset(rows, **API, n_partitions=16, train_size=0.3, device="cpu")
    assert list(scores.columns) == ["id", "answer", "predictability", "pvi"]
    assert len(scores) == 120 and scores["answer"].tolist() == [r["label"] for r in rows]
    p, pvi = scores["predictability"].to_numpy(), scores["pvi"].to_numpy()
    assert p[:60].mean() > p[60:].mean() + 0.3
    assert pvi[:60].mean() > 0.5 > 0 > pvi[60:].mean()  # bits over the answer positions


def test_score_cli_and_api_agree_on_items(tmp_path):
    rows = planted(60, 1)
    src = write(tmp_path / "items.jsonl", rows)
    out = tmp_path / "out"
    r = run_in_process("score", src, *ITEMS, "--n-partitions", "8", "--train-size", "0.3",
                       "--device", "cpu", "--no-report", "--out-dir", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "scored 60 items: predictability, pvi" in r.stdout and "chance level" in r.stdout
    file = pd.read_parquet(out / "scores.parquet")
    api, _ = aflite.score_dataset(src, **API, n_partitions=8, train_size=0.3, device="cpu")
    assert list(file.columns) == ["id", "answer", "predictability", "pvi"]
    assert file["id"].tolist() == [str(i) for i in api["id"]]
    assert np.allclose(file[["predictability", "pvi"]], api[["predictability", "pvi"]])
    # only zz is a feature: its items are always picked out, the others (all tied) a guess
    # among 3 by each model that held them out
    p = api["predictability"].to_numpy()
    assert (p[:30] == 1).all() and abs(p[30:].mean() - 1 / 3) < 0.1 and p[30:].max() < 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rows"] == 60 and summary["scorers"] == ["predictability", "pvi"]
    assert summary["items"]["n_choices"] == 3 and summary["items"]["answer_format"] == "index0"
    assert set(summary["means_by_label"]) == {"0", "1", "2"}


@pytest.mark.parametrize(
    "extra, kw, message",
    [
        (["--scorers", "pvi,datamap"], {"scorers": ["pvi", "datamap"]},
         "scorer 'datamap' cannot score multiple-choice items (scorers for items: "
         "predictability, pvi)"),
        (["--choices-field", "options"], {"choices": "options"}, "field 'options' is missing"),
        (["--partial-text-fields", "ctx"], {"partial_text": "ctx"},
         "multiple-choice items are scored without it"),
    ],
)  # fmt: skip
def test_score_refuses_what_items_cannot_take_in_one_line(tmp_path, extra, kw, message):
    src = write(tmp_path / "items.jsonl", planted(12, 2))
    r = run_in_process("score", src, *ITEMS, *extra, "--out-dir", str(tmp_path / "o"))
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError) as e:
        aflite.score_dataset(src, **(API | kw))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_scorer_that_cannot_take_items_is_refused_before_the_data_is_read():
    with pytest.raises(ValueError, match="scorer 'datamap' cannot score multiple-choice items"):
        aflite.score_dataset("no/such/file.jsonl", **API, scorers="datamap")


def test_item_pvi_matches_a_logistic_regression_per_fold():
    """Differential: with two choices the choice-wise model is a binary logistic regression
    on the choices' (scaled) difference; its out-of-fold probabilities match scikit-learn's
    fitted on each fold's training items."""
    from sklearn.linear_model import LogisticRegression

    from aflite.algorithm.numerics.item_store import choice_scale
    from aflite.scoring.crossfit import crossfit_folds, oof_choice_probabilities

    rng = np.random.default_rng(10)
    x = rng.normal(size=(80, 2, 4))
    y = (x[:, 1, 0] - x[:, 0, 0] + rng.normal(size=80) > 0).astype(np.int64)
    folds = crossfit_folds(y, 4, rng=rng)
    probs, info = oof_choice_probabilities(x, y, folds, C=0.5, device="cpu")
    assert probs.shape == (1, 80, 2) and np.allclose(probs.sum(axis=2), 1)
    diff = (x[:, 1] - x[:, 0]) * choice_scale(x)
    for k in range(4):
        held = folds[0] == k
        ref = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-10, max_iter=5000)
        ref.fit(diff[~held], y[~held])
        assert np.allclose(probs[0, held, 1], ref.predict_proba(diff[held])[:, 1], atol=2e-3)


# --- compare -----------------------------------------------------------------------------------

_FILTER = {"n_partitions": 8, "train_size": 0.25, "min_bias": None}  # to the target: 0.5


def test_the_filtered_set_loses_the_planted_word_and_its_accuracy():
    ood = {"no-artifact": read_labelled(planted(60, 9)[30:], **API)}  # sets read as items
    # 16 partitions: an item with nothing to learn scores a guess (1/3) on about 12 held-out
    # models, not 6, so luck rarely lifts one past the last zz items
    res = compare_experiment(planted(120, 3), planted(60, 4), ood=ood, **API_SETS,
                             **(_FILTER | {"n_partitions": 16}), device="cpu")  # fmt: skip
    assert res.eval_sets == ["dev", "dev (filtered)", "no-artifact"]
    # nothing there but unseen words: every model ties every choice, a guess among 3
    assert all(r["no-artifact"] == pytest.approx(1 / 3) for r in res.rows)
    acc = {r["train"]: r["dev"] for r in res.rows}
    # D and a random half learn zz: its items right, the rest a guess among 3 (ties 1/3)
    assert acc["D"] == pytest.approx(0.5 + 0.5 / 3)
    assert acc["D_n (random)"] > 0.55
    assert acc["D(Phi) (AFLITE)"] == pytest.approx(1 / 3)  # every zz item was filtered out
    header, rows = res.table()
    assert rows[-1][:2] == ["chance", "answer position"]
    dev_chance = max(np.bincount([r["label"] for r in planted(60, 4)])) / 60
    assert res.majority["dev"]["mean"] == pytest.approx(max(1 / 3, dev_chance))
    assert res.sets_table()[0] == ["evaluation set", "items", "chance"]


def test_compare_cli_and_api_agree_on_items(tmp_path):
    train = write(tmp_path / "train.jsonl", planted(60, 5))
    dev = write(tmp_path / "dev.jsonl", planted(30, 6))
    out = tmp_path / "res.json"
    r = run_in_process("experiment", "compare", train, "--dev", dev, *ITEMS, "--n-partitions",
                       "8", "--train-size", "0.25", "--min-bias", "off", "--device", "cpu",
                       "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "chance     answer position" in r.stdout
    cli = json.loads(out.read_text())
    api = compare_experiment(train, dev, **API_SETS, **_FILTER, device="cpu").to_dict()
    assert cli["rows"] == json.loads(json.dumps(api["rows"]))
    assert cli["majority"] == api["majority"]


@pytest.mark.parametrize(
    "extra, kw, message",
    [
        (["--evaluators", "logreg"], {"evaluators": ["logreg"]},
         "evaluator 'logreg' cannot evaluate multiple-choice items (evaluators for items: "
         "choice)"),
        (["--choices-field", "options"], {"choices": "options"}, "field 'options' is missing"),
        (["--label-map", "0=1"], {"label_map": {"0": "1"}},
         "is not available for multiple-choice items"),
    ],
)  # fmt: skip
def test_compare_refuses_what_items_cannot_take_in_one_line(tmp_path, extra, kw, message):
    src = write(tmp_path / "items.jsonl", planted(40, 7))
    r = run_in_process("experiment", "compare", src, "--dev", src, *ITEMS, *extra)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    with pytest.raises(ValueError) as e:
        compare_experiment(src, src, **(API_SETS | kw))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_choice_evaluator_is_refused_on_labelled_rows():
    rows = [{"text": f"w{i % 5}", "label": i % 2} for i in range(40)]
    with pytest.raises(ValueError, match="evaluator 'choice' evaluates multiple-choice items"):
        compare_experiment(rows, rows, evaluators=["choice"])


def test_the_choice_evaluator_matches_a_plain_softmax_fit():
    """Differential: the evaluator's pick equals the argmax of a directly fitted softmax over
    each item's choices (scikit-learn's binary logistic regression on the choices' difference
    for two choices, the model's stated equivalent)."""
    from sklearn.linear_model import LogisticRegression

    from aflite.algorithm.numerics.item_store import choice_scale

    rng = np.random.default_rng(8)
    x = rng.normal(size=(200, 2, 5))
    y = (x[:, 1, 0] - x[:, 0, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    view = LabelledTexts({"t": [""] * 200}, np.asarray([str(v) for v in y]))
    ev = ChoiceEvaluator("choice", ["t"], "t", 0).fit(view, x)
    scale = choice_scale(x)
    diff = (x[:, 1] - x[:, 0]) * scale
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=5000)
    ref.fit(diff, y)
    assert np.allclose(ev.weights, ref.coef_[0] * scale, rtol=1e-2, atol=1e-3)
    assert (ev.predict(view, x) == (diff @ ref.coef_[0] > 0)).mean() > 0.99


def test_compare_prints_the_notes_and_warnings_of_the_filter_of_d(tmp_path):
    # COPA's first 80 items filtered to half go below chance: the filter warns about it
    copa = bundled_copa().read_text().splitlines(keepends=True)
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    train.write_text("".join(copa[:80]))
    dev.write_text("".join(copa[80:110]))
    items = ["--choices-fields", "choice1,choice2", "--context-fields", "premise,question",
             "--id-field", "idx"]  # fmt: skip
    opts = ["--n-partitions", "8", "--slice-size", "0.25", "--min-bias", "off", "--device", "cpu"]
    r = run_in_process("filter", str(train), *items, *opts, "--out-dir", str(tmp_path / "out"),
                       "--quiet", "--no-report")  # fmt: skip
    assert r.returncode == 0, r.stderr
    # the notes and warnings on stderr, the result on stdout
    filtered = r.stderr.splitlines()
    assert filtered[0].startswith("answers read as 0-based indexes (detected; ")
    assert filtered[-1].startswith("warning: the kept items' representation bias ")
    assert "warning" not in r.stdout
    stop = next(line for line in r.stdout.splitlines() if line.startswith("stopped: "))
    assert " items kept" in stop or stop.endswith(" items)"), stop  # items, not rows
    r = run_in_process("experiment", "compare", str(train), "--dev", str(dev), *items, *opts)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == filtered and "warning" not in r.stdout
    api = {"choices": ["choice1", "choice2"], "context": ["premise", "question"]}
    res = compare_experiment(read_labelled(train, id="idx", **api), dev, **api,
                             n_partitions=8, slice_size=0.25, min_bias=None,
                             device="cpu")  # fmt: skip
    assert res.filter_notes == res.to_dict()["runs"][0]["filter_notes"] == filtered
