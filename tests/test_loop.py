"""The filtering loop with a given-score ranker: which rows go in which phase, where it stops,
and what it records; and the algorithm's imports stay below the layers that use it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import aflite
from aflite.algorithm.loop.rankers import ScoreRanker
from aflite.algorithm.loop.result import STOP_REASONS
from aflite.algorithm.loop.run import run_phases

SRC = Path(__file__).resolve().parents[1] / "src" / "aflite"


def _flat(rows: np.ndarray) -> np.ndarray:
    return np.full(len(rows), 0.5)


def _run(scores, *, n, k, codes=None, measure=_flat, **kw):
    n_input = len(scores) if not callable(scores) else kw.pop("n_input")
    codes = np.arange(n_input) % 2 if codes is None else np.asarray(codes)
    opts = {key: kw.pop(key) for key in ("lower_is_easier", "balance", "seed") if key in kw}
    ranker = ScoreRanker(scores, measure=measure, codes=codes, **opts)
    return run_phases(ranker, codes, np.unique(codes), n=n, k=k, t=0, **kw)


def test_highest_scores_go_first_a_slice_per_phase_the_last_trimmed_to_the_target():
    r = _run(np.arange(20.0), n=10, k=3)
    np.testing.assert_array_equal(r.removed, [19, 18, 17, 16, 15, 14, 13, 12, 11, 10])
    np.testing.assert_array_equal(r.removed_phase, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3])
    np.testing.assert_array_equal(r.removed_score, r.removed.astype(float))
    np.testing.assert_array_equal(r.kept, np.arange(10))
    assert [h.size_before for h in r.history] == [20, 17, 14, 11]
    assert [h.n_removed for h in r.history] == [3, 3, 3, 1]
    assert [h.n_eligible for h in r.history] == [20, 17, 14, 11]
    assert r.stop_reason == "by_score"
    assert r.stop_message == f"{STOP_REASONS['by_score']} (10 rows)"
    assert "--" not in r.stop_message  # the array layer names no command-line flag
    assert r.final_bias == 0.5 and r.params["kept_class_counts"] == [5, 5]


def test_lower_is_easier_removes_the_lowest_first():
    r = _run(np.arange(10.0), n=6, k=10, lower_is_easier=True)
    np.testing.assert_array_equal(r.removed, [0, 1, 2, 3])
    assert len(r.history) == 1 and r.stop_reason == "by_score"


def test_the_chance_stop_fires_before_a_slice_and_keeps_that_phases_figure():
    bias_at = {20: 0.9, 17: 0.8, 14: 0.52}
    r = _run(np.arange(20.0), n=5, k=3, min_bias=0.05,
             measure=lambda rows: np.full(len(rows), bias_at[len(rows)]))  # fmt: skip
    # 19, 18, 17 (classes 1, 0, 1) then 16, 15, 14 (0, 1, 0): 7 of each class left, chance 0.5
    np.testing.assert_array_equal(r.removed, [19, 18, 17, 16, 15, 14])
    assert [h.n_removed for h in r.history] == [3, 3, 0]
    assert [h.chance for h in r.history] == [0.5, 9 / 17, 0.5]
    assert r.stop_reason == "chance" and len(r.kept) == 14
    assert r.stop_message == f"{STOP_REASONS['chance']} (0.520 <= 0.500 + 0.05); 14 rows kept"
    assert r.final_bias == pytest.approx(0.52)


def test_balanced_removal_shares_the_budget_over_the_classes():
    codes = [0] * 15 + [1] * 5
    r = _run(np.arange(20.0), n=10, k=10, codes=codes, balance="classes")
    # quotas of 10 by largest remainders: 7.5 and 2.5, the tie to the first class -> 8 and 2
    np.testing.assert_array_equal(r.removed, [19, 18, 14, 13, 12, 11, 10, 9, 8, 7])
    assert r.params["kept_class_counts"] == [7, 3]


def test_nan_scores_go_last_and_are_not_eligible():
    s = np.arange(10.0)
    s[[8, 9]] = np.nan
    r = _run(s, n=1, k=9)
    np.testing.assert_array_equal(r.removed[:8], [7, 6, 5, 4, 3, 2, 1, 0])
    assert r.removed[8] in (8, 9) and r.history[0].n_eligible == 8


def test_ties_are_ordered_by_the_seed_not_by_row_order():
    runs = [_run(np.zeros(40), n=30, k=10, seed=s).removed for s in (0, 0, 1)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
    assert not np.array_equal(np.sort(runs[0]), np.arange(10))


@pytest.mark.parametrize("seed", range(5))
def test_a_fixed_score_agrees_with_sorting_once_and_cutting_into_slices(seed):
    rng = np.random.default_rng(seed)
    n_input = int(rng.integers(5, 60))
    n, k = int(rng.integers(1, n_input)), int(rng.integers(1, n_input + 1))
    s = rng.permutation(n_input).astype(float)  # distinct: one right answer
    r = _run(s, n=n, k=k)
    expected = np.argsort(-s)[: n_input - n]
    np.testing.assert_array_equal(r.removed, expected)
    np.testing.assert_array_equal(r.removed_phase, np.arange(n_input - n) // k)
    np.testing.assert_array_equal(r.kept, np.sort(np.argsort(-s)[n_input - n :]))


def test_a_score_function_is_asked_again_every_phase_on_the_rows_left():
    calls = []

    def score(rows):
        calls.append(rows.copy())
        return rows.astype(float) * (1 if len(calls) % 2 else -1)  # flips every phase

    r = _run(score, n=11, k=3, n_input=20)
    np.testing.assert_array_equal(r.removed, [19, 18, 17, 0, 1, 2, 16, 15, 14])
    assert [len(c) for c in calls] == [20, 17, 14]
    np.testing.assert_array_equal(calls[1], np.arange(17))
    assert r.stop_reason == "by_score" and len(r.kept) == 11


def test_filtering_by_given_scores_measures_the_bias_as_aflite_does():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    x = rng.normal(size=(200, 4))
    x[:60, 0] = y[:60] * 3.0  # a planted artifact in the first 60 rows
    easy = np.r_[np.ones(60), np.zeros(140)]
    by = aflite.ByScores(easy, info={"by": "planted"})
    r = aflite.filter(x, y, ranker=by, target_size=140, slice_size=30, n_partitions=8,
                      train_size=40, device="cpu")  # fmt: skip
    assert set(r.removed) == set(range(60)) and len(r.history) == 2
    assert r.final_bias < r.initial_bias and r.stop_reason == "by_score"
    assert r.params["strategy"] == "by_score" and r.params["slice_size"] == 30
    assert r.history[0].solver == {"by": "planted"}
    one = aflite.filter(x, y, ranker=by, target_size=140, slice_size=None, train_size=40)
    assert len(one.history) == 1 and set(one.removed) == set(range(60))
    with pytest.raises(ValueError, match="one value per row"):
        aflite.filter(x, y, ranker=aflite.ByScores(easy[:5]), target_size=140, device="cpu")
    with pytest.raises(ValueError, match="slice_size"):
        aflite.filter(x, y, ranker=by, target_size=140, slice_size=0, device="cpu")
    with pytest.raises(ValueError, match="resume applies to AFLITE's phases only"):
        aflite.filter(x, y, ranker=by, target_size=140, resume=aflite.FilterState(rows=[]))
    with pytest.raises(ValueError, match="ranker must be None"):
        aflite.filter(x, y, ranker=easy, target_size=140)
    five = np.arange(200) % 5
    with pytest.raises(ValueError, match="fewer than the 5 classes"):
        aflite.filter(x, five, ranker=by, target_size=140, train_size=3)


def test_filtering_by_given_scores_takes_the_runs_measurement_options():
    import scipy.sparse

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    x = rng.normal(size=(300, 6))
    x[:90, 0] = y[:90] * 3.0
    easy = np.r_[np.ones(90), np.zeros(210)]
    kw = dict(target_size=240, slice_size=None, n_partitions=8, train_size=60, seed=0)
    uniform = aflite.filter(x, y, ranker=aflite.ByScores(easy), partitions="uniform", **kw)
    measured = aflite.predictability_scores(
        x, y, n_partitions=8, train_size=60, seed=0, partitions="uniform"
    )
    assert uniform.initial_bias == pytest.approx(measured.representation_bias, abs=1e-12)
    assert uniform.params["partitions"] == "uniform"
    quick = aflite.filter(x, y, ranker=aflite.ByScores(easy), score_kept=False, **kw)
    assert np.isnan(quick.kept_scores).all()
    # a sparse matrix is taken as an AFLITE run takes it
    dense = aflite.filter(x, y, ranker=aflite.ByScores(easy), **kw)
    sparse = aflite.filter(scipy.sparse.csr_matrix(x), y, ranker=aflite.ByScores(easy), **kw)
    np.testing.assert_array_equal(sparse.kept, dense.kept)


# --- layers -------------------------------------------------------------------------------

_BELOW_ALGORITHM = ("aflite.algorithm", "aflite._internal", "aflite.types", "aflite.errors")


def _imports(path: Path, *, skip_type_checking: bool = False) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    skipped = set()
    if skip_type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped |= {id(n) for n in ast.walk(node)}
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return [(line, m) for line, m in out if m == "aflite" or m.startswith("aflite.")]


def test_the_algorithm_imports_nothing_above_it():
    files = sorted((SRC / "algorithm").rglob("*.py"))
    assert len(files) > 10
    upward = [
        f"{f.relative_to(SRC)}:{line} imports {m}"
        for f in files
        for line, m in _imports(f)
        if not m.startswith(_BELOW_ALGORITHM)
    ]
    assert upward == []


def test_types_and_internal_import_the_algorithm_only_for_type_checking():
    files = [SRC / "types.py", SRC / "errors.py", *sorted((SRC / "_internal").glob("*.py"))]
    found = [(f.name, m) for f in files for _, m in _imports(f, skip_type_checking=True)
             if not m.startswith(("aflite._internal", "aflite.errors"))]  # fmt: skip
    assert found == []
    # the checker sees an import that is there
    assert any(m.startswith("aflite.algorithm") for _, m in _imports(SRC / "types.py"))


def test_backends_are_looked_up_by_name_and_ray_is_registered_by_the_package():
    import aflite
    from aflite._internal.backends import BACKENDS

    assert "ray" in BACKENDS
    with pytest.raises(ValueError, match="unknown backend 'nope': use None, 'ray' or a"):
        aflite.filter(np.zeros((10, 2)), np.arange(10) % 2, target_size=5, backend="nope")


def test_filtering_items_by_given_scores_keeps_the_answers_as_positions():
    # answers only at positions 1 to 3, the answer's choice marked: the positions must not be
    # renumbered (0..2) on the way to the choice-wise measurement
    rng = np.random.default_rng(0)
    y = rng.integers(1, 4, 300)
    x = rng.normal(size=(300, 4, 6))
    x[np.arange(300), y, 0] += 4.0
    kw = dict(target_size=240, slice_size=None, n_partitions=8, train_size=60, seed=0)
    by = aflite.filter(x, y, ranker=aflite.ByScores(np.zeros(300)), **kw)
    plain = aflite.predictability_scores(x, y, n_partitions=8, train_size=60, seed=0)
    assert by.initial_bias == pytest.approx(plain.representation_bias, abs=1e-12)
    assert by.initial_bias > 0.9
    assert by.classes == [0, 1, 2, 3]
