"""Audits of multiple-choice items: known answers on hand-made items, the kinds of audits kept
apart, and a filter run on the bundled COPA items with the audits before and after."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_in_process

import aflite
from aflite.audits import run_audits
from aflite.audits.choice_audits import (
    answer_position_baseline,
    choice_length,
    choice_pmi,
    choices_only_baseline,
)
from aflite.errors import DataError
from aflite.io.choices import ChoiceFields, Choices


def items(options, answers, contexts=None) -> Choices:
    k = max(len(o) for o in options)
    return Choices(ChoiceFields(tuple(f"o{j}" for j in range(k))), options, contexts,
                   np.asarray(answers, dtype=np.int64), "index0", True)  # fmt: skip


def test_the_answer_position_baseline_counts_positions():
    got = answer_position_baseline(items([["a", "b", "c"]] * 4, [0, 0, 0, 0]))
    assert got.details["accuracy"] == 1.0 and got.details["position"] == 0
    assert got.details["chance"] == pytest.approx(1 / 3)
    assert got.rows == [[0, 4, 1.0], [1, 0, 0.0], [2, 0, 0.0]]
    mixed = answer_position_baseline(items([["a", "b"], ["a", "b", "c"]] * 2, [1, 2, 1, 0]))
    assert mixed.details["accuracy"] == 0.5 and mixed.details["shares"] == [0.25, 0.5, 0.25]
    assert mixed.details["chance"] == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_picking_the_longest_choice_when_the_right_one_is_longest():
    opts = [["a b c d", "e", "f g"], ["h", "i j k l m", "n"], ["o p", "q", "r s t u"]]
    got = choice_length(items(opts, [0, 1, 2]))
    d = got.details
    assert d["longest"] == 1.0 and d["shortest"] == 0.0 and d["chance"] == pytest.approx(1 / 3)
    assert d["right_mean"] == pytest.approx(13 / 3) and d["wrong_mean"] == pytest.approx(8 / 6)
    # a tie is a random pick among the tied: right choice tied with one other -> 1/2
    tied = choice_length(items([["a b", "c d", "e"]], [0])).details
    assert tied["longest"] == 0.5 and tied["shortest"] == 0.0


def test_a_give_away_word_only_in_right_choices_tops_the_pmi():
    rng = np.random.default_rng(0)
    words = ["red", "blue", "green", "tall", "small", "old"]
    opts, answers = [], []
    for _ in range(40):
        a = int(rng.integers(3))
        o = [" ".join(rng.choice(words, 2)) for _ in range(3)]
        o[a] += " indeed"
        opts.append(o)
        answers.append(a)
    got = choice_pmi(items(opts, answers), min_count=5)
    right = [r for r in got.rows if r[0] == "right"]
    assert right[0][2] == "indeed" and right[0][4:] == [40, 40]
    assert got.details["pmi"]["right"]["indeed"] == max(got.details["pmi"]["right"].values())


def test_the_choices_only_baseline_finds_a_marked_choice_and_not_noise():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(8)]
    marked, plain, answers = [], [], []
    for _ in range(40):
        a = int(rng.integers(2))
        o = [" ".join(rng.choice(words, 3)) for _ in range(2)]
        plain.append(list(o))
        o[a] += " yes"
        marked.append(o)
        answers.append(a)
    assert choices_only_baseline(items(marked, answers)).details["accuracy"] >= 0.95
    noise = choices_only_baseline(items(plain, answers)).details
    assert noise["accuracy"] < 0.8 and noise["chance"] == 0.5


def test_audit_kinds_are_kept_apart():
    data = items([["a", "b"]] * 6, [0, 1] * 3)
    texts = {"o0": ["a"] * 6, "o1": ["b"] * 6}
    with pytest.raises(DataError, match="the pmi audit is for rows with a class label"):
        run_audits(texts, data.answers, audits=["pmi"], choices=data)
    with pytest.raises(DataError, match="the choice-length audit is for multiple-choice items"):
        run_audits(texts, ["x", "y"] * 3, audits=["choice-length"])
    names = [r.name for r in run_audits(texts, data.answers, choices=data, min_count=1)]
    assert names == ["choices-only baseline", "answer-position baseline",
                     "word-label PMI (right vs wrong choices)", "choice length"]  # fmt: skip
    with pytest.raises(DataError, match="needs 5 items; there are 4"):
        run_audits(texts, data.answers[:4], audits=["choices-only"], choices=data.subset(range(4)))


def test_the_audit_api_reads_items():
    df = pd.DataFrame({"q": ["why"] * 6, "x": ["long right one"] * 6, "y": ["no"] * 6,
                       "ans": [1] * 6})  # fmt: skip
    got = aflite.audit(df, label="ans", choices=["x", "y"], context="q",
                       audits=["answer-position", "choice-length"])  # fmt: skip
    assert [r.details["accuracy" if i == 0 else "longest"] for i, r in enumerate(got)] == [1, 1]


@pytest.mark.slow
def test_filter_runs_the_choice_audits_before_and_after_on_copa(tmp_path):
    from aflite.data import bundled_copa

    src = tmp_path / "copa.jsonl"
    src.write_text("".join(bundled_copa().read_text().splitlines(True)[:80]))
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(src), "--choices-fields", "choice1,choice2", "--context-fields",
        "premise,question", "--label-field", "label", "--id-field", "idx", "--n-partitions", "8",
        "--min-bias", "off", "--target-size", "60", "--features", "ngrams:min_df=1",
        "--audits", "choices-only,answer-position,choice-pmi,choice-length",
        "--out-dir", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    audits = json.loads((out / "result" / "report_extra.json").read_text())["audits"]
    names = ["choices-only baseline", "answer-position baseline",
             "word-label PMI (right vs wrong choices)", "choice length"]  # fmt: skip
    assert [(a["tag"], a["name"]) for a in audits] == [
        (tag, f"{n} ({tag})") for tag in ("before", "kept") for n in names
    ]
    position = [a["details"] for a in audits if a["name"].startswith("answer-position")]
    assert all(d["chance"] == 0.5 for d in position)
    assert "of 80 items" in audits[1]["summary"] and "of 60 items" in audits[5]["summary"]


def test_the_audit_command_reads_items_and_refuses_the_other_kind(tmp_path):
    rows = [{"p": "it rained", "c1": "we got wet all day", "c2": "sun", "y": i % 2 * 0}
            for i in range(8)]  # fmt: skip
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "a.json"
    r = run_in_process("audit", str(path), "--choices-fields", "c1,c2", "--context-fields", "p",
                       "--label-field", "y", "--audits", "answer-position,choice-length",
                       "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = {a["name"]: a["details"] for a in json.loads(out.read_text())["audits"]}
    assert got["answer-position baseline"]["accuracy"] == 1.0
    assert got["choice length"]["longest"] == 1.0 and got["choice length"]["shortest"] == 0.0
    for args, message in [
        (["--choices-fields", "c1,c2", "--audits", "pmi"], "--audits: the pmi audit is for rows"),
        (["--text-fields", "p", "--audits", "choice-pmi"],
         "--audits: the choice-pmi audit is for multiple-choice items"),
        (["--context-fields", "p"], "--context-fields: needs --choices-field / --choices-fields"),
        ([], "--text-fields: name at least one text field (or --choices-field"),
    ]:  # fmt: skip
        r = run_in_process("audit", str(path), "--label-field", "y", *args)
        assert r.returncode == 2 and r.stderr.startswith(f"aflite: error: {message}"), r.stderr
