"""One figure per quantity: the stop line, the summary and the report agree on the kept set's
bias; ``audit --compare`` against a filter run measures with that run's representation or
says it does not; advice fits what happened; the data API fails like the command line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import planted_data, run_in_process

import aflite
from aflite.data import bundled_snli
from aflite.errors import DataError


def _rows(n):
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()[:n]]


@pytest.fixture(scope="module")
def snli(tmp_path_factory):
    d = tmp_path_factory.mktemp("snli")
    for n in (10, 150, 600):
        (d / f"s{n}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows(n)))
    return d


def test_a_chance_stop_reports_one_bias_for_the_kept_set():
    x, y, _ = planted_data(n=400)
    res = aflite.filter(
        x, y, target_size=100, train_size=60, slice_size=40, n_partitions=8, threshold=0.5,
        min_bias=0.2, seed=0,
    )  # fmt: skip
    assert res.stop_reason == "chance" and res.history[-1].n_removed == 0
    assert res.final_bias == res.history[-1].representation_bias
    assert res.final_bias == pytest.approx(np.nanmean(res.kept_scores))
    stop = re.search(r"\((\d\.\d{3}) <= ", res.summary()).group(1)
    after = re.search(r"-> (\d\.\d{3}) ", res.summary()).group(1)
    assert stop == after


def test_a_resumed_run_reports_the_same_figure(tmp_path):
    from aflite.io.checkpoint import Checkpoint

    x, y, _ = planted_data(n=400)
    opts = dict(target_size=100, train_size=60, slice_size=40, n_partitions=8, threshold=0.5,
                min_bias=0.2, seed=0)  # fmt: skip
    ck = Checkpoint(tmp_path / "ck", {"run": 1})
    ck.start(x)
    whole = aflite.filter(x, y, checkpoint=ck.save, **opts)
    phi, state = Checkpoint(tmp_path / "ck", {"run": 1}).load()
    assert state.stop_reason == "chance" and state.last_scores is not None
    resumed = aflite.filter(np.asarray(phi), y, resume=state, **opts)
    assert resumed.final_bias == whole.final_bias
    assert np.array_equal(resumed.kept_scores, whole.kept_scores, equal_nan=True)


def test_summary_json_report_and_text_agree(snli, tmp_path):
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(snli / "s150.jsonl"), "--text-fields", "hypothesis", "--n-partitions", "8",
        "--out-dir", str(out), "--quiet", "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    after = json.loads((out / "summary.json").read_text())["representation_bias"]["after"]
    stop = re.search(r"\((\d\.\d{3}) <= ", r.stdout).group(1)
    assert f"-> {after:.3f} " in r.stdout and stop == f"{after:.3f}"
    from aflite.reports.html import render_report

    assert f"{after:.3f}" in render_report(out)


def test_a_run_that_removed_nothing_is_not_told_to_stop_earlier(snli, tmp_path):
    r = run_in_process(
        "filter", str(snli / "s10.jsonl"), "--text-fields", "hypothesis", "--train-size", "3",
        "--out-dir", str(tmp_path / "out"), "--quiet", "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "removed 0" in r.stdout
    # warnings go to stderr, the result to stdout
    assert "stop earlier" not in r.stderr
    assert "with nothing removed" in r.stderr and "warning" not in r.stdout
    small = [line for line in r.stderr.splitlines() if "small training part" in line]
    assert small == [
        "warning: small training part: each of 512 classifiers trains on 3 of 10 rows "
        "(--train-size) and is scored on the other 7; with fewer than 10 training rows per "
        "class the scores say little about the label and these figures are mostly noise"
    ]


def test_enough_data_gets_no_small_training_part_line():
    from aflite.reports.warnings import run_warnings

    summary = {"parameters": {"train_size": 600, "n_partitions": 64},
               "counts": {"labels_before": {"a": 3000, "b": 3000}, "removed": 10}}  # fmt: skip
    assert not any("small training part" in w for w in run_warnings(summary))


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            lambda: [dict(r, label="x") for r in _rows(100)],
            "data: field 'label' has fewer than two classes",
        ),
        (lambda: _rows(3), "train_size: 0.1 of 3 rows is less than 1 row"),
    ],
)
def test_the_data_api_fails_like_the_command_line(rows, message):
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(rows(), label="label", text="hypothesis")
    assert str(e.value) == message


def test_the_audit_api_on_one_class_or_tiny_data_is_one_line():
    with pytest.raises(DataError, match="fewer than two classes"):
        aflite.audit([dict(r, label="x") for r in _rows(100)], label="label", text="hypothesis")
    with pytest.raises(DataError) as e:
        aflite.audit(_rows(10), label="label", text="hypothesis")
    assert "cross-validates in 5 folds" in str(e.value) and "\n" not in str(e.value)
    # the audits that need no folds run, with nothing to list rather than scikit-learn's error
    res = aflite.audit(_rows(10), label="label", text="hypothesis", audits=["pmi", "zstats"])
    assert res[0].summary.startswith("0 words in >= 20 texts")


def test_word_lists_end_at_a_word():
    from aflite._internal.text import word_list

    words = ["sleeping", "nobody", "bed", "alone", "cat", "asleep", "no", "driving", "n't"]
    assert word_list(words, 30) == "sleeping, nobody, bed, alone (+5 more)"
    assert word_list(words[:2], 30) == "sleeping, nobody"
    assert word_list(["a" * 80], 30) == "a" * 80
    res = aflite.audit(_rows(600), label="label", text="hypothesis", audits=["pmi"], min_count=5)
    for part in res[0].summary.split("top by PMI: ")[1].split("; "):
        shown = part.split(": ", 1)[1].split(" (+")[0].split(", ")
        vocab = set(res[0].details["pmi"][part.split(": ", 1)[0]])
        assert set(shown) <= vocab, shown


def test_audit_compare_against_a_run_uses_its_representation(snli, tmp_path):
    out = tmp_path / "run"
    r = run_in_process(
        "filter", str(snli / "s600.jsonl"), "--text-fields", "hypothesis", "--features",
        "ngrams:svd=16", "--n-partitions", "8", "--out-dir", str(out), "--quiet", "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # the note comes before the tables, where an audit measures with the representation
    audit = ["audit", str(snli / "s600.jsonl"), "--text-fields", "hypothesis", "--audits", "knn",
             "--quiet"]  # fmt: skip
    for target in (out, out / "kept.jsonl"):
        r = run_in_process(*audit, "--compare", str(target))
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines()[0] == (
            "measuring with the run's representation: --features ngrams:svd=16 "
            f"(from {out / 'summary.json'})"
        )
    r = run_in_process(*audit, "--compare", str(out), "--features", "ngrams")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"note: the run in {out} filtered with ngrams:svd=16; the bias figures measure "
        "--features ngrams instead, so they differ from the run's"
    )
    from aflite.jobs.audit_sources import run_train_size

    t = json.loads((out / "summary.json").read_text())["parameters"]["train_size"]
    assert run_train_size(str(out)) == run_train_size(str(out / "kept.jsonl")) == t == 60
    assert run_train_size(str(snli / "s600.jsonl")) is None
    # a plain file beside nothing: no note
    r = run_in_process(*audit, "--compare", str(snli / "s600.jsonl"))
    assert r.returncode == 0 and not r.stderr.startswith(("note", "measuring"))


def test_audit_compare_against_a_run_it_cannot_rebuild_says_so(snli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "kept.jsonl").write_text((snli / "s600.jsonl").read_text())
    (out / "summary.json").write_text(json.dumps(
        {"options": {"features": "precomputed:/x/f.npy"}, "outputs": {"kept": "kept.jsonl"}}
    ))  # fmt: skip
    r = run_in_process(
        "audit", str(snli / "s600.jsonl"), "--text-fields", "hypothesis", "--audits", "pmi,knn",
        "--quiet", "--compare", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0].startswith(
        f"note: the run in {out} filtered with precomputed:/x/f.npy, which cannot be built again"
    )
    # no audit measures with a representation: nothing to say about one
    r = run_in_process(
        "audit", str(snli / "s600.jsonl"), "--text-fields", "hypothesis", "--audits", "pmi",
        "--quiet", "--compare", str(out),
    )  # fmt: skip
    assert r.returncode == 0 and "representation" not in r.stderr, r.stderr


@pytest.fixture(scope="module")
def hypothesis_run(snli, tmp_path_factory):
    """A filter run on hypothesis-only n-grams (as ``aflite demo``'s)."""
    out = tmp_path_factory.mktemp("hyp") / "run"
    r = run_in_process(
        "filter", str(snli / "s150.jsonl"), "--text-fields", "hypothesis", "--n-partitions", "4",
        "--out-dir", str(out), "--quiet", "--no-report",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def test_audit_compare_measures_with_the_run_fields_whatever_the_word_fields(snli, hypothesis_run):
    out = hypothesis_run
    audit = ["audit", str(snli / "s150.jsonl"), "--audits", "bias", "--bias-train-size", "30",
             "--quiet", "--compare", str(out)]  # fmt: skip
    both = run_in_process(*audit, "--text-fields", "premise,hypothesis")
    alone = run_in_process(*audit, "--text-fields", "hypothesis")
    assert both.returncode == alone.returncode == 0, both.stderr + alone.stderr
    # the notes on stderr, the tables on stdout
    assert both.stderr.splitlines()[0] == (
        "measuring with the run's representation: --features ngrams on hypothesis "
        f"(from {out / 'summary.json'})"
    )
    assert alone.stderr.splitlines()[0] == (
        f"measuring with the run's representation: --features ngrams (from {out / 'summary.json'})"
    )
    # the same representation, so the same figures, whatever fields the word audits read
    assert both.stdout == alone.stdout
    assert "representation bias (compare)" in both.stdout
    # another --features measures the fields given, and the note says so
    other = run_in_process(*audit, "--text-fields", "premise,hypothesis", "--features",
                           "ngrams:svd=8")  # fmt: skip
    assert other.returncode == 0, other.stderr
    assert other.stderr.splitlines()[0] == (
        f"note: the run in {out} filtered with ngrams on hypothesis; the bias figures measure "
        "--features ngrams:svd=8 on premise, hypothesis instead, so they differ from the run's"
    )
    assert other.stdout != both.stdout
    # an input without the run's fields: the one-line error says the representation reads them
    flat = snli / "flat.jsonl"
    flat.write_text("".join(json.dumps({"text": r["hypothesis"], "label": r["label"]}) + "\n"
                            for r in _rows(150)))  # fmt: skip
    bad = run_in_process("audit", str(flat), "--text-fields", "text", *audit[2:])
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "field 'hypothesis' is missing" in bad.stderr
    assert "the run's representation reads hypothesis" in bad.stderr
    # the word audits read the fields given alone: the run's fields need not be there
    premises = snli / "premises.jsonl"
    premises.write_text("".join(json.dumps({"premise": r["premise"], "label": r["label"]}) + "\n"
                                for r in _rows(150)))  # fmt: skip
    words = run_in_process(
        "audit",
        str(premises),
        "--text-fields",
        "premise",
        "--audits",
        "partial,pmi",
        "--field",
        "premise",
        "--quiet",
        "--compare",
        str(out),
    )
    assert words.returncode == 0, words.stderr
    assert "premise-only accuracy" in words.stdout and "representation" not in words.stderr


def _no_signal(n: int) -> list[dict]:
    """Balanced labels and one text for every row: a model trained on a partition answers its
    majority label, the held-out rows' minority, so the estimate falls below chance."""
    return [
        {"id": i, "premise": "p", "hypothesis": "a b c", "label": "xy"[i % 2]} for i in range(n)
    ]


def test_audit_compare_warns_when_the_compared_set_is_below_chance(snli, tmp_path):
    compare = tmp_path / "flat.jsonl"
    compare.write_text("".join(json.dumps(r) + "\n" for r in _no_signal(40)))
    r = run_in_process(
        "audit", str(snli / "s150.jsonl"), "--text-fields", "hypothesis", "--audits", "bias",
        "--bias-train-size", "20", "--compare", str(compare), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    warning = r.stderr.splitlines()[-1]
    assert re.fullmatch(
        r"warning: representation bias \(compare\): estimate (0\.\d{3}) is (0\.\d{3}) below the "
        r"majority class \(0\.500\) on the compare set", warning,
    ), warning  # fmt: skip
    # the filter's check, on the API's results of the same rows at the same t
    from aflite.reports.warnings import audit_warnings

    res = aflite.audit(_no_signal(40), label="label", text="hypothesis", audits=["bias"],
                       bias_train_size=20, tag="compare")  # fmt: skip
    est = res[0].rows[0][0]
    assert est < 0.48
    assert [
        f"warning: {w}" for w in audit_warnings([x.to_dict() for x in res], rows="the compare set")
    ] == [warning]
    # at chance or above: no warning
    telling = tmp_path / "telling.jsonl"
    telling.write_text("".join(json.dumps(r | {"hypothesis": f"a {r['label']}"}) + "\n"
                               for r in _no_signal(40)))  # fmt: skip
    r = run_in_process(
        "audit", str(snli / "s150.jsonl"), "--text-fields", "hypothesis", "--audits", "bias",
        "--bias-train-size", "20", "--compare", str(telling), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0 and "representation bias (compare)" in r.stdout, r.stderr
    assert "warning" not in r.stdout + r.stderr
    # INPUT as far below as the compare set: the compare set did not fall there, no warning
    r = run_in_process(
        "audit", str(compare), "--text-fields", "hypothesis", "--audits", "bias",
        "--bias-train-size", "20", "--compare", str(compare), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0 and f"estimate {est:.3f}" not in r.stdout, r.stderr
    assert r.stdout.count(f"representation bias {est:.3f}") == 2
    assert "warning" not in r.stdout + r.stderr
