"""AFLITE's behaviour: planted artifacts, stop rules, strategies, persistence."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import planted_data

import aflite


def test_planted_artifact_is_removed_and_bias_falls_to_chance(planted):
    x, y, is_planted = planted
    res = aflite.filter(x, y, target_size=0.4, train_size=150, slice_size=50, seed=0)
    removed_planted = is_planted[res.removed].sum() / is_planted.sum()
    assert removed_planted >= 0.95
    # most of what was removed is the artifact, not random rows
    assert is_planted[res.removed].mean() >= 0.85
    assert res.initial_bias > 0.5
    assert abs(res.final_bias - 1 / 3) < 0.05
    assert res.stop_reason == "threshold"


@pytest.mark.parametrize("strategy", ["slicing", "sampling"])
def test_strategies_remove_the_artifact(strategy):
    x, y, is_planted = planted_data(n=900, seed=1)
    res = aflite.filter(
        x, y, target_size=300, train_size=120, slice_size=40, strategy=strategy, seed=1
    )
    assert is_planted[res.removed].sum() / is_planted.sum() >= 0.9


def test_greedy_removes_one_per_phase():
    x, y, _ = planted_data(n=300, seed=2)
    res = aflite.filter(
        x, y, target_size=280, train_size=60, n_partitions=16, strategy="greedy", seed=0
    )
    assert all(h.n_removed <= 1 for h in res.history)
    assert len(res.removed) == len(res.history) - (res.history[-1].n_removed == 0)


def test_target_size_is_exact_when_size_stop_fires(planted):
    x, y, _ = planted
    res = aflite.filter(x, y, target_size=1000, train_size=150, slice_size=150, seed=0)
    assert res.stop_reason == "target_size"
    assert len(res.kept) == 1000
    assert res.history[-1].n_removed == 50  # last slice trimmed, 1200 -> 1050 -> 1000


def test_threshold_one_removes_only_perfect_rows(planted):
    x, y, _ = planted
    res = aflite.filter(x, y, target_size=200, train_size=150, slice_size=50, threshold=1.0)
    assert np.all(res.removed_score == 1.0)


def test_single_shot_baseline_hits_target_in_one_phase(planted):
    x, y, is_planted = planted
    res = aflite.filter(x, y, target_size=600, train_size=150, strategy="single_shot", seed=0)
    assert len(res.history) == 1 and len(res.kept) == 600
    assert res.stop_reason == "single_shot"
    # one phase removes the artifact too, but also many clean rows to reach the target
    assert is_planted[res.removed].mean() < 0.7


def test_removed_scores_are_descending_within_a_slice(planted):
    x, y, _ = planted
    res = aflite.filter(x, y, target_size=600, train_size=150, slice_size=60, seed=0)
    for phase in np.unique(res.removed_phase):
        s = res.removed_score[res.removed_phase == phase]
        assert np.all(np.diff(s) <= 1e-12)
        # everything removed scores at least tau and at least what stayed that phase
        assert s.min() >= 0.75


def test_train_size_must_be_below_target_size():
    x, y, _ = planted_data(n=200, seed=3)
    with pytest.raises(
        ValueError, match=r"train_size \(150\) must be smaller than target_size \(10\)"
    ):
        aflite.filter(x, y, target_size=10, train_size=150, slice_size=30, threshold=0.0)


@pytest.mark.parametrize("partitions", ["uniform", "blocks"])
def test_never_heldout_rows_are_not_removed(partitions):
    x, y, _ = planted_data(n=100, seed=4)
    # one partition training on about 90 of 100 rows: those are never held out in a phase
    res = aflite.filter(
        x,
        y,
        target_size=95,
        train_size=90,
        n_partitions=1,
        slice_size=5,
        threshold=0.0,
        partitions=partitions,
    )
    ps = aflite.predictability_scores(x, y, train_size=90, n_partitions=1, partitions=partitions)
    n_held = int((~ps.train_mask).sum())
    assert n_held == 10 if partitions == "uniform" else 8 <= n_held <= 12  # blocks of 11-12
    assert res.history[0].n_eligible <= n_held
    assert np.all(np.isfinite(res.removed_score))


def test_result_round_trips_through_json_and_npz(tmp_path, planted):
    x, y, _ = planted
    labels = np.array(["neutral", "entailment", "contradiction"])[y]
    res = aflite.filter(x, labels, target_size=700, train_size=150, slice_size=100, seed=0)
    res.save(tmp_path)
    assert not list(tmp_path.glob("*.pkl"))
    back = aflite.FilterResult.load(tmp_path)
    np.testing.assert_array_equal(back.kept, res.kept)
    np.testing.assert_array_equal(back.removed, res.removed)
    np.testing.assert_array_equal(back.removed_score, res.removed_score)
    np.testing.assert_array_equal(back.kept_scores, res.kept_scores)
    assert back.history == res.history
    assert back.classes == ["contradiction", "entailment", "neutral"]
    assert back.params == res.params and back.stop_message == res.stop_message
    np.testing.assert_array_equal(back.scores(), res.scores())


def test_history_records_bias_counts_and_time(planted):
    x, y, _ = planted
    res = aflite.filter(x, y, target_size=700, train_size=150, slice_size=100, seed=0)
    h0 = res.history[0]
    assert h0.size_before == 1200 and sum(h0.class_counts.values()) == 1200
    # 1,200 rows, 150 train per partition: every row is held out, so every row is in the histogram
    assert sum(h0.score_histogram) == 1200 and len(h0.score_histogram) == 20
    assert h0.seconds > 0
    biases = [h.representation_bias for h in res.history]
    assert biases[0] > biases[-1]


def test_progress_callback_receives_each_phase(planted):
    x, y, _ = planted
    seen = []
    res = aflite.filter(
        x, y, target_size=700, train_size=150, slice_size=100, seed=0, progress=seen.append
    )
    assert [r.phase for r in seen] == [h.phase for h in res.history]


def test_checkpoint_and_resume_give_identical_result(planted):
    x, y, _ = planted
    kwargs = dict(target_size=500, train_size=150, slice_size=60, seed=7)
    full = aflite.filter(x, y, **kwargs)
    states = []

    def keep_copy(state):
        states.append(
            aflite.FilterState(
                rows=state.rows.copy(),
                removed=list(state.removed),
                removed_phase=list(state.removed_phase),
                removed_score=list(state.removed_score),
                history=list(state.history),
                generator_state=state.generator_state.copy(),
                storage_phase=state.storage_phase,
                stop_reason=state.stop_reason,
                stop_message=state.stop_message,
            )
        )

    aflite.filter(x, y, checkpoint=keep_copy, **kwargs)
    mid = states[len(states) // 2]
    resumed = aflite.filter(x, y, resume=mid, **kwargs)
    np.testing.assert_array_equal(resumed.kept, full.kept)
    np.testing.assert_array_equal(resumed.removed, full.removed)
    np.testing.assert_array_equal(resumed.kept_scores, full.kept_scores)


@pytest.mark.parametrize("owned", [False, True])
def test_compaction_keeps_rows_labels_and_groups_aligned(owned):
    import torch

    from aflite.algorithm.loop.phases import PhaseRunner
    from aflite.algorithm.models import MODELS, LinearModel
    from aflite.algorithm.numerics.store import standardise

    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3)).astype(np.float32)
    if not owned:
        x = np.lib.format.open_memmap(
            str(__import__("tempfile").mkdtemp()) + "/x.npy",
            mode="w+",
            dtype=np.float32,
            shape=x.shape,
        )
        x[:] = rng.normal(size=(50, 3))
    y = rng.integers(0, 2, 50)
    g = np.arange(50) // 5
    original = np.array(x)
    runner = PhaseRunner(
        x,
        y,
        2,
        model=LinearModel(),
        family=MODELS["linear"],
        n_partitions=2,
        train_size=5,
        groups=g,
        device=torch.device("cpu"),
        generator=torch.Generator().manual_seed(0),
        chunk_rows=7,
    )
    assert (runner.store.data is not None) == owned
    full = standardise(original)
    for rows in (np.arange(0, 50, 2), np.arange(0, 50, 6)):
        runner.compact_to(rows)
        np.testing.assert_allclose(runner.store.standardised().numpy(), full[rows], rtol=1e-6)
        np.testing.assert_array_equal(runner.y.numpy(), y[rows])
    # the groups are indexed by input row: compaction leaves them whole
    np.testing.assert_array_equal(runner.groups, g)
    np.testing.assert_array_equal(np.asarray(x), original)  # the caller's matrix is never modified


def test_copy_false_standardises_in_place_with_identical_results(planted):
    x, y, _ = planted
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    opts = dict(target_size=600, train_size=200, slice_size=100, threshold=0.6, seed=1)
    ref = aflite.adversarial_filter(x32.copy(), y, **opts)
    mine = x32.copy()
    res = aflite.adversarial_filter(mine, y, copy=False, **opts)
    np.testing.assert_array_equal(res.kept, ref.kept)
    np.testing.assert_array_equal(res.removed_score, ref.removed_score)
    assert not np.allclose(mine, x32)  # the caller's matrix was used as the storage
    np.testing.assert_allclose(mine.mean(axis=0), 0.0, atol=1e-4)


def test_copy_false_leaves_what_it_cannot_own_and_raw_features_alone(planted):
    from sklearn.naive_bayes import GaussianNB

    x, y, _ = planted
    opts = dict(target_size=600, train_size=200, slice_size=100, threshold=0.6, seed=1)
    x64 = np.asarray(x, dtype=np.float64).copy()
    aflite.adversarial_filter(x64, y, copy=False, **opts)  # float64: needs a float32 copy anyway
    np.testing.assert_array_equal(x64, x)
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    raw = x32.copy()
    aflite.adversarial_filter(raw, y, copy=False, model=GaussianNB(), n_partitions=4, **opts)
    np.testing.assert_array_equal(raw, x32)  # a scikit-learn model is fitted on the raw values
