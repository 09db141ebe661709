"""``aflite score`` and ``aflite.jobs.score_job``: outputs, the report (escaped), out-dir
safety, one-line mistakes; and the scorer registry."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import planted_data, run_in_process

import aflite
from aflite.scoring import EXAMPLE_SCORERS, register_example_scorer, score_examples


@pytest.fixture(scope="module")
def snli_file(tmp_path_factory):
    from aflite.data import bundled_snli

    d = tmp_path_factory.mktemp("score")
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:600]]
    for i, r in enumerate(rows):  # every example row the report shows carries markup
        r["id"] = f"<script>alert('{i}')</script>&\"{i}\""
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


@pytest.fixture(scope="module")
def score_run(snli_file):
    """The whole command on 600 pairs (n-grams of both fields, the hypothesis as partial
    input): about 15 s with the imports and the report."""
    out = snli_file.parent / "out"
    r = run_in_process(
        "score", str(snli_file), "--text-fields", "premise,hypothesis",
        "--partial-text-fields", "hypothesis", "--epochs", "4", "--out-dir", str(out), "--quiet",
    )  # fmt: skip
    return r, out


@pytest.mark.slow
def test_score_writes_scores_summary_and_report(score_run):
    import pandas as pd

    r, out = score_run
    assert r.returncode == 0, r.stderr
    assert "scored 600 rows" in r.stdout and "regions: easy" in r.stdout
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == 600 and scores["id"].is_unique
    want = ["id", "label", "predictability", "confidence", "variability", "correctness",
            "region", "pvi", "pvi_partial", "aum", "el2n", "forgetting", "partial"]  # fmt: skip
    assert list(scores.columns) == want
    assert set(scores["region"]) <= {"easy", "ambiguous", "hard"}
    summary = json.loads((out / "summary.json").read_text())
    corr = summary["correlation"]
    assert corr["method"] == "spearman" and "region" not in corr["columns"]
    m = np.asarray(corr["matrix"], dtype=float)
    np.testing.assert_allclose(np.diag(m), 1.0)
    np.testing.assert_allclose(m, m.T)
    want_corr = scores[corr["columns"]].corr(method="spearman").to_numpy()
    np.testing.assert_allclose(m, want_corr, atol=1e-9)
    counts = scores["region"].value_counts()
    assert summary["regions"] == {r: int(counts.get(r, 0)) for r in ("easy", "ambiguous", "hard")}
    assert summary["fields"]["partial"] == ["hypothesis"]
    assert summary["dynamics"]["epochs"] == 4


@pytest.mark.slow
def test_report_is_escaped_and_shows_the_data_map(score_run):
    _, out = score_run
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 2  # data map, per-class histograms
    # the report's own code and its JSON data; the data's <script> is never raw
    assert page.count("<script") == 2 and "<script>alert(" not in page
    assert "\\u003cscript\\u003ealert(" in page  # in the rows table's JSON
    regions = json.loads((out / "summary.json").read_text())["regions"]
    shown = sum(min(8, n) for n in regions.values())  # up to 8 example rows per region
    assert page.count("&lt;script&gt;alert(&#x27;") == shown > 0
    assert "&amp;&quot;" in page
    for region in ("easy", "ambiguous", "hard"):
        assert f"Examples: {region}" in page
    # aflite report rebuilds it from the files
    (out / "report.html").unlink()
    r = run_in_process("report", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").read_text() == page


@pytest.mark.slow
def test_an_earlier_run_is_refused_then_replaced(score_run, snli_file):
    _, out = score_run
    args = ["score", str(snli_file), "--text-fields", "hypothesis", "--scorers", "pvi",
            "--out-dir", str(out), "--quiet", "--no-report"]  # fmt: skip
    r = run_in_process(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("aflite: error: ") and "--overwrite" in r.stderr
    assert r.stderr.count("\n") == 1
    r = run_in_process(*args, "--overwrite")
    assert r.returncode == 0, r.stderr
    assert not (out / "report.html").exists()  # the earlier run's outputs are gone
    assert json.loads((out / "summary.json").read_text())["scorers"] == ["pvi"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scorers", "confidence"], "--scorers: unknown scorer 'confidence'"),
        (["--scorers", "partial"], "scorer 'partial' needs a partial input"),
        (["--label-field", "lable"], "did you mean 'label'?"),
        (["--n-folds", "1"], "--n-folds: must be a whole number >= 2, got 1"),
        (["--dynamics", "nowhere"], "nowhere: not a folder of dynamics_epoch_N.jsonl files"),
    ],
)
def test_mistakes_are_one_line_errors(snli_file, tmp_path, extra, message):
    r = run_in_process("score", str(snli_file), "--text-fields", "hypothesis",
                       "--out-dir", str(tmp_path / "o"), *extra)  # fmt: skip
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


# --- the registry --------------------------------------------------------------------------


def test_a_registered_scorer_runs_with_the_shared_folds():
    @register_example_scorer("fold-id", options={"offset": 0})
    def fold_id(ctx):
        return {"fold-id": ctx.folds[0] + ctx.options["offset"]}

    try:
        x, y, _ = planted_data(n=100)
        s = score_examples(x, y, scorers=["fold-id"], offset=10, device="cpu")
        np.testing.assert_array_equal(s.columns["fold-id"], s.folds[0] + 10)
    finally:
        EXAMPLE_SCORERS.unregister("fold-id")


def test_scorer_mistakes_are_refused_before_any_work():
    x, y, _ = planted_data(n=100)
    with pytest.raises(ValueError, match="unknown scorer 'confidence'"):
        score_examples(x, y, scorers=["confidence"])
    with pytest.raises(ValueError, match="scorer 'partial' needs a partial input"):
        score_examples(x, y, scorers=["partial"])
    with pytest.raises(TypeError, match="unknown scorer option.*did you mean 'epochs'"):
        score_examples(x, y, scorers=["aum"], epoch=3)
    with pytest.raises(ValueError, match="el2n_epoch must be an epoch from 1 to 3"):
        score_examples(x, y, scorers=["el2n"], epochs=3, el2n_epoch=4)
    with pytest.raises(ValueError, match="n_folds"):
        score_examples(x, y, scorers=["pvi"], n_folds=1)


def test_score_job_in_process(tmp_path):
    """The job without the report, fast: one row per input row, ids as text, the summary's
    correlation and regions."""
    import pandas as pd

    from aflite.jobs.score_job import ScoreJob, run_score_job

    rng = np.random.default_rng(0)
    rows = [{"id": 1000 + i, "t": f"w{rng.integers(0, 9)} {'yes' if i % 2 else 'no'}",
             "label": ["a", "b"][i % 2]} for i in range(150)]  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = ScoreJob(input=str(src), text=["t"], id="id", out_dir=str(tmp_path / "o"),
                   scorers=["datamap", "aum"], report=False, options={"epochs": 3})  # fmt: skip
    outcome = run_score_job(job)
    df = pd.read_parquet(tmp_path / "o" / "scores.parquet")
    assert df["id"].tolist() == [str(1000 + i) for i in range(150)]
    assert df["label"].tolist() == [r["label"] for r in rows]
    assert (df["aum"] > 0).mean() > 0.9  # the label is in the text
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["kind"] == "scores" and summary["rows"] == 150
    assert summary["correlation"]["columns"] == ["confidence", "variability", "correctness", "aum"]
    assert sum(summary["regions"].values()) == 150
    assert set(summary["examples"]) == {"easy", "ambiguous", "hard"}
    assert outcome.outputs == {"scores": str(tmp_path / "o" / "scores.parquet"),
                               "summary": str(tmp_path / "o" / "summary.json")}  # fmt: skip


# --- aflite filter --by -------------------------------------------------------------------


def _filter_by(x, y, *, by, scorer=None, **options):
    """The filter's one driver with a scoring ranker (what ``aflite filter --by`` runs): one
    slice to the target unless a slice size is given."""
    return aflite.filter(x, y, ranker=aflite.ByScorer(by, scorer),
                         **({"slice_size": None} | options))  # fmt: skip


def test_filter_by_a_score_removes_the_easiest_rows_in_one_pass():
    x, y, planted = planted_data(n=600)
    r = _filter_by(x, y, by="pvi", target_size=400, n_partitions=8, seed=0, device="cpu")
    assert len(r.kept) == 400 and len(r.removed) == 200 and len(r.history) == 1
    np.testing.assert_array_equal(np.sort(np.concatenate([r.kept, r.removed])), np.arange(600))
    assert planted[r.removed].mean() > 0.85  # the give-away rows go first
    assert np.all(np.diff(r.removed_score) <= 0)  # easiest first, with its PVI
    assert r.final_bias < r.initial_bias - 0.15 and r.stop_reason == "by_score"
    # lower is easier for forgetting; balance keeps every class's share
    b = _filter_by(x, y, by="forgetting", target_size=300, balance="classes",
                   n_partitions=8, seed=0, device="cpu", scorer={"epochs": 3})  # fmt: skip
    assert np.all(np.diff(b.removed_score) >= 0)
    assert np.abs(np.bincount(y[b.kept]) - np.bincount(y) / 2).max() <= 1


def test_filter_by_a_score_stops_at_chance_instead_of_going_below():
    x, y, planted = planted_data(n=600)
    opts = dict(by="pvi", target_size=100, n_partitions=8, seed=0, device="cpu")
    free = _filter_by(x, y, **opts)  # no chance stop: all the way to 100 rows
    r = _filter_by(x, y, slice_size=50, min_bias=0.02, **opts)
    assert len(free.kept) == 100 and r.stop_reason == "chance"
    assert 100 < len(r.kept) < 600 and len(r.history) >= 2
    assert r.final_bias <= r.final_chance + 0.02 + 1e-9
    assert r.final_bias > r.final_chance - 0.03  # near chance, not below it
    assert len(r.removed) < len(free.removed)  # stopped once the artifact was gone
    phases = np.asarray(r.removed_phase)
    assert np.all(np.diff(phases) >= 0) and np.bincount(phases).max() <= 50
    assert "chance level plus min_bias" in r.stop_message


def test_filter_by_slice_size_follows_the_filter_rule_and_is_checked_before_scoring(monkeypatch):
    import aflite.scoring.run

    x, y, _ = planted_data(n=200)
    opts = dict(by="pvi", target_size=195, n_partitions=4, seed=0, device="cpu")
    # a fraction of a small set still removes one row per slice, as in adversarial_filter
    r = _filter_by(x, y, slice_size=0.001, **opts)
    assert r.params["slice_size"] == 1 and len(r.removed) == 5 and len(r.history) == 5

    def no_scoring(*a, **k):
        raise AssertionError("scored before the options were checked")

    monkeypatch.setattr(aflite.scoring.run, "score_examples", no_scoring)
    with pytest.raises(ValueError, match="slice_size"):
        _filter_by(x, y, slice_size=0, **opts)
    with pytest.raises(ValueError, match="target_size"):  # a size the rows cannot take
        _filter_by(x, y, slice_size=1, **(opts | {"target_size": 250}))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "--by: unknown scorer 'nope'"),
        ("datamap:region", "--by: 'datamap' has no score column 'region'"),
        ("partial", "--by: scorer 'partial' needs a partial input"),
    ],
)
def test_filter_by_mistakes_are_one_line_errors(tmp_path, snli_file, spec, message):
    r = run_in_process("filter", str(snli_file), "--text-fields", "hypothesis", "--by", spec,
                       "--out-dir", str(tmp_path / "o"))  # fmt: skip
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_filter_by_writes_the_filter_outputs(tmp_path, snli_file):
    import pandas as pd

    out = tmp_path / "o"
    r = run_in_process("filter", str(snli_file), "--text-fields", "hypothesis", "--id-field",
                       "id", "--by", "datamap:confidence", "--target-size", "400",
                       "--min-bias", "off", "--out-dir", str(out), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (
        "stopped: target size reached, the easiest rows by a given per-example score "
        "removed (400 rows)" in r.stdout
    )
    kept = pd.read_json(out / "kept.jsonl", lines=True)
    removed = pd.read_json(out / "removed.jsonl", lines=True)
    assert len(kept) == 400 and len(removed) == 200
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["by"] == "datamap:confidence"
    assert summary["stop_reason"] == "by_score"
    scores = pd.read_parquet(out / "scores.parquet")
    gone = scores[scores.split == "removed"]
    assert set(gone["id"]) == set(removed["id"].astype(str))
    assert gone["removal_score"].notna().all() and gone["removal_score"].min() > 0.3  # confident
    assert scores.loc[scores.split == "kept", "removal_score"].isna().all()
    assert (out / "report.html").exists()
