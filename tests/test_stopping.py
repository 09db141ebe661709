"""Stopping that fits the data: the chance level, the chance stop, class-balanced slices, the
scikit-learn path and the job-level defaults."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import planted_data

import aflite
from aflite.algorithm import PRESETS, FilterOptions


def _majority(y):
    return np.bincount(y).max() / len(y)


def test_every_phase_records_the_chance_level_of_its_set(planted):
    x, y, _ = planted
    res = aflite.filter(x, y, target_size=0.4, train_size=150, slice_size=50, seed=0)
    rows = np.arange(len(y))
    for h in res.history:
        current = np.setdiff1d(rows, res.removed[res.removed_phase < h.phase])
        assert h.size_before == len(current)
        assert h.chance == pytest.approx(_majority(y[current]))
    assert res.initial_chance == pytest.approx(_majority(y))
    assert res.final_chance == pytest.approx(_majority(y[res.kept]))


@pytest.mark.slow
def test_low_threshold_without_chance_stop_goes_below_chance_and_the_stop_prevents_it():
    """Algorithm 1 with a low tau keeps removing until the kept rows are anti-predictable (the
    defect); with min_bias it stops within the margin of chance and removes less."""
    x, y, planted = planted_data(n=1200, share=0.3, seed=3)
    opts = dict(target_size=0.3, train_size=150, slice_size=40, threshold=0.3, seed=0)
    plain = aflite.filter(x, y, **opts)
    stopped = aflite.filter(x, y, min_bias=0.03, **opts)
    assert plain.final_bias < plain.final_chance - 0.03
    assert stopped.stop_reason == "chance" and "min_bias" in stopped.stop_message
    assert stopped.final_bias > stopped.final_chance - 0.05
    assert len(stopped.kept) > len(plain.kept)
    # the planted rows are still what goes first
    assert planted[stopped.removed].sum() / planted.sum() > 0.8
    last = stopped.history[-1]
    assert last.representation_bias <= last.chance + 0.03


@pytest.mark.slow
def test_class_balanced_slices_keep_the_label_shares():
    rng = np.random.default_rng(0)
    n = 1500
    y = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    x = rng.normal(size=(n, 10)).astype(np.float32)
    easy = (y == 0) & (rng.random(n) < 0.8)  # an artifact that only class 0 carries
    x[easy, 0] += 4.0
    opts = dict(target_size=0.6, train_size=200, slice_size=60, threshold=0.0, seed=0)
    drift = aflite.filter(x, y, **opts)
    even = aflite.filter(x, y, balance="classes", **opts)
    share = np.bincount(y, minlength=3) / n
    assert np.abs(np.bincount(y[drift.kept], minlength=3) / len(drift.kept) - share).max() > 0.1
    kept_share = np.bincount(y[even.kept], minlength=3) / len(even.kept)
    assert np.abs(kept_share - share).max() < 0.01
    assert even.params["kept_class_counts"] == np.bincount(y[even.kept], minlength=3).tolist()


def test_multinomial_nb_gets_non_negative_counts():
    from sklearn.naive_bayes import MultinomialNB

    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    counts = rng.poisson(1.0, size=(n, 20)).astype(np.float32)
    planted = rng.random(n) < 0.3
    counts[planted, y[planted]] += 5  # a give-away word per class
    res = aflite.filter(
        counts,
        y,
        target_size=0.5,
        train_size=150,
        slice_size=30,
        n_partitions=16,
        model=MultinomialNB(),
        seed=0,
    )
    # (standardised features would be negative, and MultinomialNB refuses those)
    assert planted[res.removed].sum() / planted.sum() > 0.8  # random removal: 0.5
    assert "MultinomialNB" in res.params["model"]


@pytest.mark.parametrize("name", ["LinearRegression", "KMeans"])
def test_non_classifiers_are_refused_before_any_work(name):
    import sklearn.cluster
    import sklearn.linear_model

    est = getattr(sklearn.linear_model, name, None) or getattr(sklearn.cluster, name)
    x, y, _ = planted_data(n=200)
    with pytest.raises(ValueError, match="must be a classifier; .* is not"):
        aflite.filter(x, y, target_size=100, train_size=50, model=est())


def test_integer_threshold_counts_have_no_float_ties():
    import torch

    from aflite.algorithm.loop.selection import select_slice

    # 42 of 60 correct is exactly 0.7 (42/60 in float32 is 0.69999999); 41 of 60 is below
    correct = np.array([42, 41, 60, 0])
    heldout = np.array([60, 60, 60, 60])
    picked, scores, n_eligible = select_slice(
        correct,
        heldout,
        np.zeros(4, dtype=np.int64),
        k=4,
        threshold=0.7,
        strategy="slicing",
        balance=None,
        generator=torch.Generator().manual_seed(0),
        device=torch.device("cpu"),
    )
    assert n_eligible == 2 and sorted(picked.tolist()) == [0, 2]


def test_job_defaults_turn_the_chance_stop_on_and_the_api_does_not():
    import inspect

    from aflite.jobs import FilterJob

    job = FilterJob(input="x.jsonl")
    practical = PRESETS["practical"]
    assert job.min_bias == practical.min_bias > 0
    assert (job.threshold, job.train_size, job.slice_size) == (
        practical.threshold,
        practical.train_size,
        practical.slice_size,
    )
    assert "min_bias" not in inspect.signature(aflite.filter).parameters  # one table
    assert FilterOptions().min_bias is None and FilterOptions().threshold == 0.75
    changed = FilterOptions.of(practical, threshold=0.6, train_size=0.4)
    assert changed.changed_from(practical) == {"train_size": 0.4}


def test_a_run_that_stops_far_from_its_target_says_which_flag_to_change(planted):
    import dataclasses

    from aflite.jobs.filter_job import stop_hint

    rng = np.random.default_rng(0)
    y2 = rng.integers(0, 2, 800)
    weak = (y2[:, None] + rng.normal(scale=3.0, size=(800, 4))).astype(np.float32)
    run = aflite.filter(weak, y2, target_size=0.4, train_size=150, slice_size=200, threshold=0.95)
    assert run.stop_reason == "threshold" and len(run.kept) > 1.4 * run.params["target_size"]
    assert stop_hint(run, 0.95) is None  # stopped far from the target, but at chance
    stuck = dataclasses.replace(run, final_bias=run.final_chance + 0.1)  # still predictable
    hint = stop_hint(stuck, 0.95)
    assert hint.startswith("note: stopped on the threshold") and "--threshold (now 0.95)" in hint
    assert "\n" not in hint
    x, y, _ = planted
    done = aflite.filter(x, y, target_size=0.4, train_size=150, slice_size=50, seed=0)
    assert stop_hint(done, 0.75) is None  # near chance: nothing to change
