"""Filtering multiple-choice items ends at chance, not below it: items whose choices the
features cannot tell apart score as guesses (1/K), so the chance stop measures the set as it
is; a random subset of the same size stays clearly above chance."""

from __future__ import annotations

import numpy as np
import pytest

import aflite
from aflite.algorithm.numerics.item_store import choice_chance


def zxq_items(n=80, seed=0):
    """K=3 items; the right choice of every other item starts with "zxq". Every other word is
    a fresh random string, seen once, so the n-grams (min_df=2) see nothing else: without
    "zxq" an item's choices look alike."""
    rng = np.random.default_rng(seed)

    def words(m):
        return " ".join("".join(rng.choice(list("abcdefghijklmnop"), 6)) for _ in range(m))

    rows = []
    for i in range(n):
        answer = int(rng.integers(3))
        endings = [words(3) for _ in range(3)]
        if i % 2 == 0:
            endings[answer] = "zxq " + endings[answer]
        rows.append({"id": str(i), "ctx": words(2), "endings": endings, "label": answer})
    return rows


def test_planted_items_filter_to_chance_not_below_while_a_random_subset_stays_above():
    rows = zxq_items()
    kw = dict(label="label", choices="endings", context="ctx", id="id", seed=0)
    r = aflite.filter_dataset(rows, **kw).result
    planted = np.arange(len(rows)) % 2 == 0
    assert r.stop_reason == "chance" and len(r.removed) >= 20  # real work, then the stop
    assert planted[r.removed].mean() > 0.9  # the give-aways go first
    # the kept set: at chance within the stop's margin, not below it (K=3: 1/3 <= chance)
    assert r.final_chance - 0.05 < r.final_bias <= r.final_chance + 0.02 + 1e-9
    # kept items whose choices look alike score as guesses, 1/3 on average, not 0
    alike = ~planted[r.kept]
    assert abs(np.nanmean(r.kept_scores[alike]) - 1 / 3) < 0.05
    # a random subset of the same size: its first phase measures it clearly above chance
    pick = np.random.default_rng(1).choice(len(rows), len(r.kept), replace=False)
    first = aflite.filter_dataset([rows[i] for i in pick], **kw).result.history[0]
    assert first.representation_bias > first.chance + 0.15


def test_choices_alike_in_a_precomputed_array_score_a_guess_and_the_chance_is_one_rule():
    # (N, K, d): a give-away feature on the right choice of 30% of the items; the other items'
    # choices are identical vectors; every 5th item offers two choices
    rng = np.random.default_rng(3)
    n, k = 300, 3
    x = np.zeros((n, k, 4))
    x[:, :, 1:] = rng.normal(size=(n, 1, 3))  # shared by an item's choices: no information
    n_real = np.where(np.arange(n) % 5 == 0, 2, 3)
    x[n_real == 2, 2] = np.nan
    y = rng.integers(0, n_real)
    give = rng.random(n) < 0.3
    x[np.flatnonzero(give), y[give], 0] = 1.0
    kw = dict(
        n_partitions=16,
        train_size=0.2,
        slice_size=30,
        threshold=0.6,
        min_bias=0.02,
        seed=0,
        threads=1,
    )
    r = aflite.filter(x, y, target_size=0.3, **kw)
    assert r.stop_reason == "chance" and give[r.removed].mean() > 0.9
    guesses = np.mean(1.0 / n_real[r.kept])
    assert abs(np.nanmean(r.kept_scores) - guesses) < 0.05 + give[r.kept].mean()
    assert r.final_bias > r.final_chance - 0.05
    # the kept set's chance is each phase's rule, per number of choices
    assert r.final_chance == pytest.approx(choice_chance(y[r.kept], n_real[r.kept]))
    assert r.history[0].chance == pytest.approx(choice_chance(y, n_real))
