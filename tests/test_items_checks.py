"""Multiple-choice items in compare and score: every set's answers read in the training set's
format, and the options items cannot take refused in one line before any data is read,
through the command line and the API alike."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_in_process
from test_items_score_compare import API_SETS, ITEMS, planted, write

import aflite
from aflite.errors import DataError
from aflite.experiments import compare_experiment
from aflite.experiments.compare_items import read_item_sets
from aflite.io.labelled import read_labelled

_FILTER = {"n_partitions": 8, "train_size": 0.25, "min_bias": None}


def no_zero_answer(n: int, seed: int) -> list[dict]:
    """Planted items (0-based answers) whose right choice is never the first."""
    return [r for r in planted(n, seed) if r["label"] != 0]


def test_a_set_without_answer_0_is_read_in_the_training_sets_format(tmp_path):
    train = write(tmp_path / "train.jsonl", planted(30, 0))
    rows = no_zero_answer(30, 1)
    dev = write(tmp_path / "dev.jsonl", rows)
    tr, dv = read_item_sets([("train", train), ("dev", dev)], API_SETS | {"label": "label"})
    assert tr.choices.answer_format == dv.choices.answer_format == "index0"
    assert dv.choices.answers.tolist() == [r["label"] for r in rows]
    # a format given is used as given
    stated = API_SETS | {"label": "label", "answer_format": "index1"}
    _, dv1 = read_item_sets([("train", write(tmp_path / "t1.jsonl", no_zero_answer(30, 0))),
                             ("dev", dev)], stated)  # fmt: skip
    assert dv1.choices.answers.tolist() == [r["label"] - 1 for r in rows]


def test_sets_read_apart_with_other_index_bases_are_refused(tmp_path):
    train = read_labelled(planted(30, 0), **API_SETS)
    dev = read_labelled(no_zero_answer(30, 1), **API_SETS)  # detected: 1-based
    with pytest.raises(DataError) as e:
        compare_experiment(train, dev, **API_SETS, **_FILTER, device="cpu")
    assert str(e.value) == (
        "dev: answers detected as index1, the training set's as index0; read every set with "
        "the same answer_format= (--answer-format)"
    )


def test_compare_scores_an_ood_set_without_answer_0_as_its_right_answers(tmp_path):
    train = write(tmp_path / "train.jsonl", planted(60, 5))
    dev = write(tmp_path / "dev.jsonl", planted(30, 6))
    ood_rows = no_zero_answer(45, 7)
    ood = write(tmp_path / "ood.jsonl", ood_rows)
    stated = read_labelled(ood_rows, **API_SETS, answer_format="index0")
    ref = compare_experiment(train, dev, ood={"ood": stated}, **API_SETS, **_FILTER,
                             device="cpu")  # fmt: skip
    res = compare_experiment(train, dev, ood={"ood": ood}, **API_SETS, **_FILTER, device="cpu")
    assert [r["ood"] for r in res.rows] == [r["ood"] for r in ref.rows]
    assert max(r["ood"] for r in res.rows) > 0.5  # the planted word picks the right choice
    out = tmp_path / "res.json"
    r = run_in_process("experiment", "compare", train, "--dev", dev, "--ood", ood, *ITEMS,
                       "--n-partitions", "8", "--train-size", "0.25", "--min-bias", "off",
                       "--device", "cpu", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    cli = json.loads(out.read_text())
    assert [r["ood"] for r in cli["rows"]] == [r["ood"] for r in json.loads(
        json.dumps(ref.to_dict()["rows"]))]  # fmt: skip


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"choice_context": "bogus"},
         "choice_context: unknown value 'bogus': choose one of joint, apart, none"),
        ({"choice_context": "apart"}, "choice_context: needs choices"),
        ({"answer_format": "index0"}, "answer_format: needs choices"),
        ({"context": "text"}, "context: needs choices"),
    ],
)  # fmt: skip
def test_score_dataset_refuses_item_options_on_labelled_rows(kw, message):
    rows = [{"text": f"w{i % 5}", "label": i % 2} for i in range(40)]
    with pytest.raises(DataError) as e:
        aflite.score_dataset(rows, label="label", scorers="pvi", device="cpu", **kw)
    assert str(e.value) == message


def test_score_dataset_refuses_a_partial_matrix_on_items():
    with pytest.raises(DataError, match="^partial_features: multiple-choice items are scored"):
        aflite.score_dataset("no/such/file.jsonl", label="label", **API_SETS,
                             partial_features=np.zeros((4, 2)))  # fmt: skip


def test_compare_refuses_image_features_on_items_before_reading(tmp_path):
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(DataError) as e:
        compare_experiment(missing, missing, **API_SETS, features="warmup-cnn")
    assert str(e.value).startswith("features: multiple-choice items take ngrams")
    r = run_in_process("experiment", "compare", missing, "--dev", missing, *ITEMS,
                       "--features", "warmup-cnn")  # fmt: skip
    assert r.returncode == 2 and r.stderr.startswith("aflite: error: --features: multiple-choice")
