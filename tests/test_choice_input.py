"""Multiple-choice items through the one reader: choices as a list or as fields, a context,
a blank each choice fills, the answer in any format (detected or stated), padding of items
with fewer choices, their features, and whole items in every output, with the same one-line
errors through ``aflite filter`` and :func:`aflite.filter_dataset`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_in_process

import aflite
from aflite.errors import DataError
from aflite.features.build import FeatureSpec, parse_feature_spec
from aflite.features.choices import choice_features
from aflite.io.labelled import read_labelled

RIGHT = ["ans0", "ans1", "ans2"]  # the right choice of items 0, 1, 2 sits at 0, 1, 2


def items(fmt: str) -> list[dict]:
    """Three items of three choices, answer positions 0, 1, 2, written in ``fmt``."""
    rows = []
    for i in range(3):
        opts = ["wrong a", "wrong b", "wrong c"]
        opts[i] = RIGHT[i]
        answer = {"index0": i, "index1": str(i + 1), "letter": "abc"[i], "text": RIGHT[i]}[fmt]
        rows.append({"q": f"question {i}", "o1": opts[0], "o2": opts[1], "o3": opts[2],
                     "answer": answer})  # fmt: skip
    return rows


@pytest.mark.parametrize("fmt", ["index0", "index1", "letter", "text"])
def test_the_answer_format_is_detected_and_read(fmt):
    got = read_labelled(items(fmt), label="answer", choices=["o1", "o2", "o3"], context="q")
    assert got.choices.answer_format == fmt and got.choices.detected
    assert got.choices.answers.tolist() == [0, 1, 2]
    assert got.label_codes().tolist() == [0, 1, 2]
    assert "answers read as" in got.choices.note() and "(detected;" in got.choices.note()


def test_a_stated_format_overrides_the_detected_one():
    rows = [dict(r, answer=a) for r, a in zip(items("index0"), [1, 2, 1])]
    assert read_labelled(
        rows, label="answer", choices=["o1", "o2", "o3"]
    ).choices.answers.tolist() == [0, 1, 0]
    stated = read_labelled(rows, label="answer", choices=["o1", "o2", "o3"], answer_format="index0")
    assert stated.choices.answers.tolist() == [1, 2, 1] and not stated.choices.detected


def test_a_blank_is_filled_by_each_choice_and_a_context_otherwise_precedes_it():
    rows = [{"s": "The cup hit _ hard.", "a": "the floor", "b": "the sky", "y": 1},
            {"s": "Rain fell on _ today.", "a": "us", "b": "them", "y": 2}]  # fmt: skip
    got = read_labelled(rows, label="y", choices=["a", "b"], context="s", blank="_").choices
    assert got.texts() == [["The cup hit the floor hard.", "The cup hit the sky hard."],
                           ["Rain fell on us today.", "Rain fell on them today."]]  # fmt: skip
    assert got.texts(context=False) == [["the floor", "the sky"], ["us", "them"]]
    assert got.answer_format == "index1" and got.answers.tolist() == [0, 1]
    plain = read_labelled(rows, label="y", choices=["a", "b"], context=["s", "a"]).choices
    assert plain.texts()[1][0] == "Rain fell on _ today. us us"


def test_items_with_fewer_choices_are_padded_and_masked():
    rows = [{"c": ["x one", "y two", "z three"], "y": 2}, {"c": ["x one", "y two"], "y": 0},
            {"c": ["y two", "x one", "z three"], "y": 1}]  # fmt: skip
    got = read_labelled(rows, label="y", choices="c").choices
    assert got.n_choices.tolist() == [3, 2, 3] and got.width == 3
    assert got.chance() == pytest.approx(2 / 3)  # 2 choices: answer 0; 3: answers 2, 1
    x = choice_features(parse_feature_spec("ngrams:min_df=1"), got, context="none")
    assert x.shape[:2] == (3, 3)
    assert np.isnan(x[1, 2]).all() and not np.isnan(x[[0, 2]]).any()
    assert np.allclose(x[0, 0], x[2, 1]) and np.allclose(x[1, 1], x[2, 0])  # one vocabulary
    fields = [{"a": "p", "b": "q", "c": "", "y": "B"}, {"a": "p", "b": "q", "c": "r", "y": "C"}]
    got = read_labelled(fields, label="y", choices=["a", "b", "c"]).choices
    assert got.n_choices.tolist() == [2, 3] and got.answers.tolist() == [1, 2]


def test_precomputed_choice_features_are_checked_and_padded(tmp_path):
    rows = [{"c": ["a", "b", "c"], "y": 0}, {"c": ["a", "b"], "y": 1}]
    got = read_labelled(rows, label="y", choices="c").choices
    arr = np.arange(18, dtype=float).reshape(2, 3, 3)
    np.save(tmp_path / "x.npy", arr)
    x = choice_features(parse_feature_spec(f"precomputed:{tmp_path / 'x.npy'}"), got)
    assert np.isnan(x[1, 2]).all() and np.array_equal(x[0], arr[0])
    np.save(tmp_path / "bad.npy", arr[:, :2])
    with pytest.raises(DataError, match=r"expected an \(2, 3, d\) array .*got shape \(2, 2, 3\)$"):
        choice_features(parse_feature_spec(f"precomputed:{tmp_path / 'bad.npy'}"), got)


# (rows, keyword arguments of filter_dataset, the words after where the row is)
BAD = {
    "index out of range": (
        lambda: [dict(r, answer=a) for r, a in zip(items("index0"), [0, 3, 1])],
        {},
        "{at2}: field 'answer' is 3, not a 0-based index of its 3 choices (0-2)",
    ),
    "letter out of range": (
        lambda: [dict(r, answer=a) for r, a in zip(items("letter"), ["A", "D", "B"])],
        {},
        "{at2}: field 'answer' is 'D', not a letter of its 3 choices (A-C)",
    ),
    "text of no choice": (
        lambda: [dict(r, answer=a) for r, a in zip(items("text"), ["ans0", "nope", "ans2"])],
        {},
        "{at2}: field 'answer' ('nope') is not one of its 3 choices",
    ),
    "a gap among the choices": (
        lambda: [dict(r, o2="" if i == 1 else r["o2"]) for i, r in enumerate(items("index0"))],
        {},
        "{at2}: field 'o2' is empty but a later choice field is not",
    ),
    "no blank": (
        lambda: [
            dict(r, q="no mark" if i == 1 else r["q"] + " _") for i, r in enumerate(items("index0"))
        ],
        {"blank": "_"},
        "{at2}: no blank '_' in q for a choice to fill",
    ),
    "a stated format the answers do not fit": (
        lambda: items("index0"),
        {"answer_format": "letter"},
        "{at1}: field 'answer' is 0, not a letter of its 3 choices (A-C)",
    ),
}


def _where(door: str, path: str, row: int) -> str:
    """Row ``row`` (from 1) as each door names it: a DataFrame by its index label, from 0."""
    if door == "file":
        return f"{path}:{row}"
    return f"DataFrame: row {row - 1}" if door == "frame" else f"data: row {row}"


@pytest.mark.parametrize("case", list(BAD))
def test_bad_items_give_the_same_error_through_every_door(case, tmp_path):
    make, kwargs, template = BAD[case]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in make()))
    flags = {"blank": "--blank", "answer_format": "--answer-format"}
    args = [a for k, v in kwargs.items() for a in (flags[k], v)]
    r = run_in_process("filter", str(path), "--label-field", "answer", "--choices-fields",
                       "o1,o2,o3", "--context-fields", "q", *args, "--out-dir",
                       str(tmp_path / "out"))  # fmt: skip
    expected = template.format(at1=f"{path}:1", at2=f"{path}:2")
    assert (r.returncode, r.stderr) == (2, f"aflite: error: {expected}\n")
    assert not (tmp_path / "out").exists()
    kw = {"label": "answer", "choices": ["o1", "o2", "o3"], "context": "q"} | kwargs
    for door, data in (("file", str(path)), ("frame", pd.DataFrame(make())), ("rows", make())):
        with pytest.raises(DataError) as e:
            aflite.filter_dataset(data, device="cpu", **kw)
        where = {k: _where(door, str(path), n) for k, n in (("at1", 1), ("at2", 2))}
        assert str(e.value) == template.format(**where), door


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--choices-fields", "o1,o2", "--label-field", "o2"],
            "--label-field: 'o2' is a choice or context field",
        ),
        (
            ["--choices-fields", "o1,o2", "--blank", "_"],
            "--blank: needs --context-fields, the fields holding it",
        ),
        (["--context-fields", "q"], "--context-fields: needs --choices-field / --choices-fields"),
        (
            ["--choices-field", "c", "--text-fields", "q"],
            "--text-fields: multiple-choice items are read from --choices-field / "
            "--choices-fields and --context-fields",
        ),
        (
            ["--choices-field", "c", "--answer-format", "roman"],
            "--answer-format: unknown value 'roman'",
        ),
        (
            ["--choices-field", "c", "--features", "warmup-cnn"],
            "--features: multiple-choice items take ngrams, sentence-transformers:MODEL, "
            "precomputed:FILE features",
        ),
        (
            ["--choices-field", "c", "--warmup-fraction", "0.1"],
            "--warmup-fraction: is not available for multiple-choice items",
        ),
        (
            ["--choices-field", "c", "--audits", "choice-pmi,pmi"],
            "--audits: the pmi audit is for rows with a class label; multiple-choice items "
            "take choices-only, answer-position, choice-pmi, choice-length",
        ),
        (
            ["--text-fields", "t", "--audits", "pmi,choice-length"],
            "--audits: the choice-length audit is for multiple-choice items (name their choices)",
        ),
        (
            ["--text-fields", "t", "--model", "choice-ridge"],
            "--model: 'choice-ridge' fits multiple-choice items: name their choices with "
            "--choices-field / --choices-fields",
        ),
    ],
)
def test_bad_options_are_refused_before_the_data_is_read(args, message, tmp_path):
    r = run_in_process(
        "filter", str(tmp_path / "absent.jsonl"), *args, "--out-dir", str(tmp_path / "o")
    )
    assert r.returncode == 2 and r.stderr.startswith(f"aflite: error: {message}"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option", [{"balance": "classes"}])
def test_the_data_api_refuses_what_the_command_line_refuses_for_items(option):
    rows = [{"ctx": "c", "endings": ["a b", "c d"], "label": i % 2} for i in range(40)]
    with pytest.raises(DataError, match=r"^balance: is not available for multiple-choice items$"):
        aflite.filter_dataset(rows, label="label", choices="endings", context="ctx", **option)


def artifact_items(n: int = 160, seed: int = 0) -> list[dict]:
    """Items of 2-4 choices where, in the first half, the right ending says "surely"."""
    rng = np.random.default_rng(seed)
    words = ["red", "blue", "green", "cold", "warm", "fast", "slow", "tall"]
    rows = []
    for i in range(n):
        k = 2 + i % 3
        opts = [" ".join(rng.choice(words, 3)) for _ in range(k)]
        y = int(rng.integers(k))
        if i < n // 2:
            opts[y] += " surely"
        rows.append({"id": f"q{i}", "ctx": f"context {i % 7}", "endings": opts, "label": y})
    return rows


def filter_items(rows: list[dict], tmp_path, *, target_size: int):
    """``aflite filter`` on ``rows`` (items of :func:`artifact_items`' shape) written as
    JSONL, the choices alone on n-grams: the result and the output folder."""
    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(path), "--choices-field", "endings", "--context-fields", "ctx",
        "--choice-context", "none", "--features", "ngrams:min_df=1", "--n-partitions", "16",
        "--train-size", "0.5", "--min-bias", "off", "--target-size", str(target_size),
        "--out-dir", str(out),
    )  # fmt: skip
    return r, out


def test_scores_and_exports_give_the_answer_as_the_input_gives_it(tmp_path):
    from aflite.exports.rows import load_review_rows

    rows = [r | {"label": "ABCD"[r["label"]]} for r in artifact_items()]
    r, out = filter_items(rows, tmp_path, target_size=140)
    assert r.returncode == 0, r.stderr
    given = {r["id"]: r["label"] for r in rows}
    scores = pd.read_parquet(out / "scores.parquet")
    assert dict(zip(scores["id"], scores["label"])) == given  # letters, not positions
    exported, _ = load_review_rows(out)
    assert exported and all(e.label == given[e.id] for e in exported)


def test_a_filter_run_keeps_items_whole_each_in_exactly_one_output(tmp_path):
    rows = artifact_items()
    r, out = filter_items(rows, tmp_path, target_size=100)
    assert r.returncode == 0, r.stderr
    assert "answers read as 0-based indexes (detected" in r.stderr
    assert r.stdout.startswith(f"kept 100 of {len(rows)} items, removed ")  # not "rows"
    e = run_in_process("export", str(out), "--to", "csv")
    assert e.returncode == 0 and e.stdout.startswith(f"wrote {len(rows) - 100} items to ")
    kept = [json.loads(x) for x in (out / "kept.jsonl").read_text().splitlines()]
    removed = [json.loads(x) for x in (out / "removed.jsonl").read_text().splitlines()]
    assert sorted((r["id"] for r in kept + removed), key=lambda s: int(s[1:])) == [
        r["id"] for r in rows
    ]
    by_id = {r["id"]: r for r in rows}
    assert all(r == by_id[r["id"]] for r in kept)  # whole items, every choice
    assert all({k: r[k] for k in by_id[r["id"]]} == by_id[r["id"]] for r in removed)
    assert all(r["aflite_phase"] >= 0 for r in removed)
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == len(rows) and set(scores["split"]) == {"kept", "removed"}
    assert scores.set_index("id").loc[[r["id"] for r in removed], "split"].eq("removed").all()
    summary = json.loads((out / "summary.json").read_text())
    items_ = summary["items"]
    assert items_["answer_format"] == "index0" and items_["n_choices"] == [2, 4]
    assert items_["chance"] == pytest.approx(
        summary["representation_bias"]["chance_before"], abs=1e-3
    )
    # the artifact is what goes: most removed items are of the first half
    assert np.mean([int(r["id"][1:]) < 80 for r in removed]) > 0.7
    assert (out / "report.html").exists()


def test_filter_dataset_takes_items_in_memory_and_precomputed_arrays():
    rows = artifact_items(120)
    df = pd.DataFrame(rows)
    out = aflite.filter_dataset(df, label="label", choices="endings", context="ctx",
                                choice_context="none", features="ngrams:min_df=1",
                                n_partitions=16, train_size=0.5, min_bias=None,
                                target_size=80)  # fmt: skip
    assert isinstance(out.kept, pd.DataFrame) and len(out.kept) + len(out.removed) == 120
    assert sorted(out.kept.index.tolist() + out.removed.index.tolist()) == list(range(120))
    assert out.fields["items"]["answer_format"] == "index0"
    x = np.random.default_rng(0).normal(size=(120, 4, 3))
    got = aflite.filter_dataset(rows, label="label", choices="endings", features=x, target_size=100,
                                n_partitions=8)  # fmt: skip
    assert len(got.kept) + len(got.removed) == 120
    with pytest.raises(DataError, match=r"^features: expected an \(120, 4, d\) array"):
        aflite.filter_dataset(rows, label="label", choices="endings", features=x[:, :, 0])


def test_every_format_reads_items_alike(tmp_path):
    rows = items("index1")
    pd.DataFrame(rows).to_csv(tmp_path / "in.csv", index=False)
    listed = [
        {"q": r["q"], "opts": [r["o1"], r["o2"], r["o3"]], "answer": r["answer"]} for r in rows
    ]
    pd.DataFrame(listed).to_parquet(tmp_path / "in.parquet")
    csv = read_labelled(str(tmp_path / "in.csv"), label="answer", choices=["o1", "o2", "o3"])
    pq = read_labelled(str(tmp_path / "in.parquet"), label="answer", choices="opts", context="q")
    for got in (csv, pq):
        assert got.choices.answer_format == "index1" and got.choices.answers.tolist() == [0, 1, 2]
        assert got.choices.options[1] == ["wrong a", "ans1", "wrong c"]
    assert pq.subset([1])[0]["answer"] == "2"


def test_sentence_encoders_see_the_choice_with_its_context_or_apart():
    got = read_labelled(items("index0"), label="answer", choices=["o1", "o2", "o3"], context="q")
    seen = []

    def encode(texts, model, *, device, progress):
        progress(len(texts))
        seen.append(list(texts))
        return np.asarray([[len(t), t.count(" ")] for t in texts], dtype=float)

    spec = FeatureSpec("sentence-transformers", "m")  # the encoder itself is stood in for
    counts = []
    joint = choice_features(
        spec, got.choices, encode=encode, progress=lambda k, n: counts.append((k, n))
    )
    assert counts == [(9, 9)]
    assert joint.shape == (3, 3, 2) and seen[-1][0] == "question 0 ans0"
    apart = choice_features(spec, got.choices, context="apart", encode=encode)
    u, v = np.array([10.0, 1.0]), np.array([4.0, 0.0])  # "question 0", "ans0"
    assert np.array_equal(apart[0, 0], np.r_[u, v, np.abs(u - v), u * v])
    assert seen[-2][:3] == ["question 0"] * 3


def test_choice_embeddings_are_cached_by_data_model_and_view(tmp_path, monkeypatch):
    import aflite.features.encoders as encoders

    monkeypatch.setattr(encoders, "model_fingerprint", lambda name: "model-" + name)
    got = read_labelled(items("index0"), label="answer", choices=["o1", "o2", "o3"], context="q")
    calls = []

    def encode(texts, model, *, device, progress):
        calls.append(len(texts))
        return np.asarray([[len(t), 1.0] for t in texts])

    spec = FeatureSpec("sentence-transformers", "m")
    kw = {"encode": encode, "fingerprint": "data1", "cache_dir": str(tmp_path)}
    first = choice_features(spec, got.choices, **kw)
    again = choice_features(spec, got.choices, **kw)
    assert calls == [9] and np.array_equal(first, again)
    choice_features(spec, got.choices, context="none", **kw)  # another view: computed
    choice_features(spec, got.choices, **kw | {"fingerprint": "data2"})  # other data
    assert calls == [9, 9, 9]


def test_the_bundled_slices_are_items():
    from aflite.data import bundled_copa, bundled_hellaswag

    copa = read_labelled(str(bundled_copa()), choices=["choice1", "choice2"],
                         context=["premise", "question"], id="idx")  # fmt: skip
    assert len(copa) == 400 and copa.choices.answer_format == "index0"
    hs = read_labelled(str(bundled_hellaswag()), choices="endings",
                       context="ctx_with_activity_label", id="ind")  # fmt: skip
    assert len(hs) == 2000 and hs.choices.width == 4 and hs.choices.chance() < 0.3


def test_items_in_choice_fields_of_varying_width_run_and_report(tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for i in range(90):
        k = 2 + i % 2
        opts = [f"w{int(rng.integers(6))} v{int(rng.integers(6))}" for _ in range(k)] + [""] * (
            3 - k
        )
        rows.append({"s": f"it was _ {i % 5}", "a": opts[0], "b": opts[1], "c": opts[2],
                     "y": "ABC"[int(rng.integers(k))]})  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(tmp_path / "in.csv"), "--choices-fields", "a,b,c", "--context-fields", "s",
        "--blank", "_", "--label-field", "y", "--n-partitions", "8", "--min-bias", "off",
        "--target-size", "80", "--features", "ngrams:min_df=1", "--out-dir", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"] | {"chance": 0} == {
        "choices": ["a", "b", "c"], "context": ["s"], "blank": "_", "answer_format": "letter",
        "answer_format_detected": True, "n_choices": [2, 3], "chance": 0,
        "guess": pytest.approx((45 / 2 + 45 / 3) / 90),  # half the items of 2 choices, half of 3
    }  # fmt: skip
    kept, removed = (pd.read_csv(out / f"{n}.csv") for n in ("kept", "removed"))
    assert len(kept) + len(removed) == 90 and (out / "report.html").stat().st_size > 0


@pytest.mark.parametrize("entry", ["filter_dataset", "score_dataset"])
def test_the_api_names_its_keywords_for_options_that_need_others(entry):
    call = getattr(aflite, entry)
    with pytest.raises(DataError, match=r"^blank: needs context, the fields holding it$"):
        call(items("index0"), label="answer", choices=["o1", "o2"], blank="_")
    with pytest.raises(DataError, match=r"^answer_format: unknown value 'roman': choose one of "):
        call(items("index0"), label="answer", choices="o1", answer_format="roman")
    with pytest.raises(DataError, match=r"^text: multiple-choice items are read from choices"):
        call(items("index0"), label="answer", choices=["o1", "o2"], text="q")
    with pytest.raises(DataError, match=r"^choice_context: needs choices$"):
        call(items("index0"), label="answer", text="q", choice_context="apart")


def test_item_options_without_choices_are_refused_by_every_python_entry_point():
    from aflite.experiments import compare_experiment

    rows = [{"t": f"w{i % 5} x", "label": i % 2} for i in range(40)]
    calls = [
        lambda **kw: aflite.filter_dataset(rows, label="label", **kw),
        lambda **kw: aflite.score_dataset(rows, label="label", **kw),
        lambda **kw: aflite.audit(rows, label="label", audits=["pmi"], **kw),
        lambda **kw: compare_experiment(rows, rows, n_partitions=4, **kw),
    ]
    for call in calls:  # each would otherwise run and ignore the option
        for option, value in (("context", "t"), ("blank", "_"), ("answer_format", "letter")):
            with pytest.raises(DataError, match=rf"^{option}: needs choices$"):
                call(**{option: value})


def test_a_resumed_run_on_items_ends_as_an_uninterrupted_one(tmp_path):
    from aflite.jobs.filter_job import FilterJob, run_filter_job

    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in artifact_items(100)))
    kw = dict(input=str(path), choices="endings", context=("ctx",),
              choice_context="none", features="ngrams:min_df=1", n_partitions=8,
              train_size=0.5, min_bias=None, target_size=70, slice_size=10)  # fmt: skip
    whole = run_filter_job(FilterJob(out_dir=str(tmp_path / "a"), **kw), progress=False)
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(FilterJob(out_dir=str(tmp_path / "b"), **kw), progress=False,
                       stop_after_phases=1)  # fmt: skip
    resumed = run_filter_job(FilterJob(out_dir=str(tmp_path / "b"), resume=True, **kw),
                             progress=False, log=lambda _: None)  # fmt: skip
    assert np.array_equal(whole.result.kept, resumed.result.kept)
    assert len(whole.result.history) > 1


def test_an_array_wider_than_the_items_is_padded_in_python_as_on_the_command_line():
    from aflite.data import bundled_copa

    rows = [json.loads(line) for line in bundled_copa().read_text().splitlines()][:120]
    x = np.random.default_rng(0).normal(size=(120, 5, 8))
    kw = dict(label="label", choices=["choice1", "choice2"], id="idx", target_size=0.8)
    wide = aflite.filter_dataset(rows, features=x, **kw)
    exact = aflite.filter_dataset(rows, features=x[:, :2].copy(), **kw)
    # choices 3 to 5 are not these items' choices: padding, not three more wrong answers
    assert wide.result.initial_bias == exact.result.initial_bias
    assert wide.fingerprint == exact.fingerprint
    assert not np.isnan(x).any()  # the caller's array is left as it was


def test_a_choice_wise_model_without_choices_is_refused_before_any_features():
    rows = [{"t": f"text {i}", "label": "ab"[i % 2]} for i in range(40)]
    for model in ("choice", "choice-ridge"):
        with pytest.raises(DataError, match=f"model='{model}' fits multiple-choice items"):
            aflite.filter_dataset(rows, label="label", text="t", model=model)


def test_bad_item_arrays_in_python_are_one_clear_error():
    rows = [{"a": "x", "b": "y", "label": 0}, {"a": "u", "b": "v", "label": 1}] * 20
    kw = dict(label="label", choices=["a", "b"], target_size=0.8)
    x = np.ones((40, 2, 3))
    x[3, 1, 2] = np.inf
    with pytest.raises(DataError, match=r"^features: item 4 choice 2 holds inf$"):
        aflite.filter_dataset(rows, features=x, **kw)
    with pytest.raises(DataError, match="must be real numbers, got dtype complex128"):
        aflite.filter_dataset(rows, features=np.ones((40, 2, 3)) * 1j, **kw)
    ragged = [np.ones((2, 3))] * 39 + [np.ones((3, 3))]
    with pytest.raises(DataError, match="items' arrays differ in shape"):
        aflite.filter_dataset(rows, features=ragged, **kw)
