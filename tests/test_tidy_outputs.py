"""Outputs read cleanly: scores as exact fractions of counts (no float32 digits), integer phase
columns, singular and plural, the progress bar ending on the printed bias, a short repr."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import planted_data

import aflite
from aflite._internal.text import plural
from aflite.algorithm import FilterResult, PhaseRecord
from aflite.algorithm.loop.progress import ConvergenceWarning, warn_if_unconverged
from aflite.data import bundled_snli
from aflite.jobs import FilterJob, run_filter_job

M = 8  # partitions: a score is correct / held-out with held-out <= M


def _is_fraction(s: float) -> bool:
    """``s`` is exactly c / h in float64 for some h <= M (float32 rounding is not)."""
    return any(round(s * h) / h == s for h in range(1, M + 1))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("tidy")
    rows = bundled_snli().read_text().splitlines()[:300]
    table = pa.Table.from_pylist([json.loads(r) for r in rows])
    pq.write_table(table, d / "snli.parquet")
    job = FilterJob(
        input=str(d / "snli.parquet"), text=["hypothesis"], id="id",
        target_size=200, n_partitions=M, slice_size=30, threshold=0.5, min_bias=None,
        out_dir=str(d / "out"), cache_dir=None, model="linear",
    )  # fmt: skip
    outcome = run_filter_job(job, progress=False, log=lambda s: None)
    assert len(outcome.result.removed) > 0 and len(outcome.result.history) >= 2
    return d / "out", outcome.result


def test_scores_are_exact_fractions_of_counts(run):
    out, result = run
    scores = pq.read_table(out / "scores.parquet")
    assert scores.schema.field("score").type == pa.float64()
    values = [
        v
        for name in ("score", "removal_score", "final_score")
        for v in scores.column(name).to_pylist()
        if v is not None
    ]
    assert len(values) >= 300 and all(_is_fraction(v) for v in values)
    removed = pq.read_table(out / "removed.parquet").to_pydict()
    assert removed["aflite_score"] and all(_is_fraction(v) for v in removed["aflite_score"])
    assert all(_is_fraction(v) for v in result.removed_score)


def test_phase_columns_are_integers(run):
    out, result = run
    scores = pq.read_table(out / "scores.parquet")
    assert scores.schema.field("phase_removed").type == pa.int64()
    by_split = {}
    for split, phase in zip(
        scores.column("split").to_pylist(), scores["phase_removed"].to_pylist()
    ):
        by_split.setdefault(split, []).append(phase)
    assert set(by_split["kept"]) == {None}  # nullable, not NaN
    assert sorted(by_split["removed"]) == sorted(result.removed_phase.tolist())
    removed = pq.read_table(out / "removed.parquet")
    assert removed.schema.field("aflite_phase").type == pa.int64()


def test_summary_has_no_float32_digits(run):
    out, _ = run
    summary = json.loads((out / "summary.json").read_text())
    for h in summary["history"]:
        r = h["solver"]["residual"]
        assert float(str(np.float32(r))) == r and len(repr(r)) <= 13, r
    extra = json.loads((out / "result" / "report_extra.json").read_text())
    # bags of n-grams get no heatmap, and the report says why (rounding: test_report_content)
    assert extra["heatmaps"] == {} and "mostly zeros" in extra["heatmap_classes"]["none"]


def _result(n_phases: int) -> FilterResult:
    history = [
        PhaseRecord(phase=i, size_before=10, n_removed=1, n_eligible=1, representation_bias=0.5,
                    class_counts={"a": 5, "b": 5}, seconds=0.1, chance=0.5)
        for i in range(n_phases)
    ]  # fmt: skip
    return FilterResult(
        kept=np.arange(1, 10_000), removed=np.array([0]), removed_phase=np.array([0]),
        removed_score=np.array([1.0]), kept_scores=np.full(9_999, 0.5), final_bias=0.5,
        history=history, stop_reason="threshold", stop_message="m", classes=["a", "b"],
        n_input=10_000, params={"kept_class_counts": [5_000, 4_999], "kept_chance": 5_000 / 9_999},
    )  # fmt: skip


def test_a_result_saved_before_the_kept_chance_was_recorded_reads_its_majority_rate():
    old = _result(1)
    del old.params["kept_chance"]
    assert old.final_chance == 5_000 / 9_999
    assert "(chance 0.500 -> 0.500)" in old.summary()


def test_singular_and_plural():
    assert plural(1, "phase") == "1 phase" and plural(2, "phase") == "2 phases"
    assert plural(0, "row") == "0 rows" and plural(3, "class", "classes") == "3 classes"
    assert "removed 1 in 1 phase\n" in _result(1).summary()
    assert "removed 1 in 2 phases\n" in _result(2).summary()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_unconverged({"n_capped": 1, "iterations": 9, "residual": 1e-2}, 0, 1e-4)
        warn_if_unconverged({"n_capped": 3, "iterations": 9, "residual": 1e-2}, 1, 1e-4)
    msgs = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert "1 classifier stopped" in msgs[0] and "3 classifiers stopped" in msgs[1]


def test_repr_is_short_and_names_the_figures():
    text = repr(_result(2))
    assert text == (
        "FilterResult(n_input=10000, kept=9999, removed=1, phases=2, stop_reason='threshold', "
        "initial_bias=0.500, final_bias=0.500)"
    )


def test_progress_bar_ends_on_the_printed_final_bias(capsys, monkeypatch):
    import rich

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(rich, "_console", None)  # a console of that width, not an earlier one
    x, y, _ = planted_data(n=600)
    result = aflite.filter(
        x, y, target_size=0.5, n_partitions=M, slice_size=60, threshold=0.75, progress=True
    )
    captured = capsys.readouterr()
    bar = (captured.out + captured.err).strip().splitlines()[-1]
    assert f"size {len(result.kept)}  bias {result.final_bias:.3f}" in bar, bar
    assert f"{result.final_bias:.3f}" in result.summary().splitlines()[1].split("->")[1]
