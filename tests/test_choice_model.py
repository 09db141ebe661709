"""The choice-wise linear model against obviously correct references, and AFLITE on
multiple-choice items (features of shape (N, K, d))."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.loop.partitions import block_design
from aflite.algorithm.models.choice.fit import ChoiceFit, _hits, choice_heldout_counts, fit_choices
from aflite.algorithm.models.choice.model import ChoiceModel
from aflite.algorithm.models.choice.settings import ChoiceEnsemble
from aflite.algorithm.numerics.blocks import plan_blocks
from aflite.algorithm.numerics.item_store import (
    check_choices,
    choice_chance,
    choice_store,
    pad_choices,
)
from aflite.algorithm.numerics.margins import NEG

CPU = torch.device("cpu")


def items(n=300, k=4, d=8, signal=1.0, seed=0):
    """Choices with a content signal: the right choice leans along a fixed direction."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k, d)) + 0.5
    y = rng.integers(0, k, n)
    x[np.arange(n), y] += signal * rng.normal(size=d) * 0.3 + signal * 0.4
    return x, y


def within_scale(x):
    """1 / standard deviation of each feature among an item's choices: every real (non-NaN)
    choice minus its item's mean, over all items."""
    centred = x - np.nanmean(x, axis=1, keepdims=True)
    flat = centred.reshape(-1, x.shape[2])
    return 1.0 / flat[~np.isnan(flat[:, 0])].std(axis=0)


def fit(x, y, train, model=ChoiceEnsemble()):
    store = choice_store(x, CPU)
    neg = torch.where(torch.as_tensor(~np.isnan(x[:, :, 0])), 0.0, NEG)
    yt = torch.as_tensor(y)
    tr = torch.as_tensor(train, dtype=torch.float32)
    return store, yt, neg, fit_choices(store, yt, neg, model, train=tr)


@pytest.mark.parametrize("c", [0.05, 1.0])
def test_two_choices_are_a_logistic_regression_on_the_difference(c):
    x, y = items(n=400, k=2, d=10, seed=1)
    rng = np.random.default_rng(2)
    train = rng.random((400, 3)) < 0.6
    _, _, _, out = fit(x, y, train, ChoiceEnsemble(C=c, tol=1e-6))
    z = (x[:, 0] - x[:, 1]) * within_scale(x)
    for j in range(3):
        ref = LogisticRegression(C=c, fit_intercept=False, tol=1e-10, max_iter=10_000)
        ref.fit(z[train[:, j]], (y[train[:, j]] == 0).astype(int))
        w = out.weights[:, j].double().numpy()
        np.testing.assert_allclose(w, ref.coef_[0], rtol=1e-3, atol=1e-3 * np.abs(ref.coef_).max())
        p_ours = 1.0 / (1.0 + np.exp(-z @ w))
        np.testing.assert_allclose(p_ours, ref.predict_proba(z)[:, 1], atol=1e-3)


def torch_reference(x, y, c):
    """Full-batch float64 fit of C * sum CE + 0.5 ||w||^2 with torch's L-BFGS (strong
    Wolfe), padded choices masked out of the softmax."""
    valid = torch.as_tensor(~np.isnan(x[:, :, 0]))
    xs = torch.as_tensor(np.nan_to_num(x * within_scale(x)))
    yt = torch.as_tensor(y)
    w = torch.zeros(x.shape[2], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS(
        [w],
        lr=1,
        max_iter=200,
        tolerance_grad=1e-8,
        tolerance_change=1e-14,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        logits = (xs @ w).masked_fill(~valid, float("-inf"))
        loss = c * torch.nn.functional.cross_entropy(logits, yt, reduction="sum") + 0.5 * w @ w
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().numpy()


def test_k_choices_with_padding_match_a_full_batch_torch_fit():
    x, y = items(n=300, k=5, d=12, seed=3)
    rng = np.random.default_rng(4)
    n_real = rng.integers(2, 6, len(y))
    y = np.minimum(y, n_real - 1)
    for i, m in enumerate(n_real):
        x[i, m:] = np.nan
    train = np.ones((len(y), 1), bool)
    _, _, _, out = fit(x, y, train, ChoiceEnsemble(C=0.5, tol=1e-6))
    ref = torch_reference(x, y, 0.5)
    np.testing.assert_allclose(
        out.weights[:, 0].double().numpy(), ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max()
    )


def test_block_passes_reach_the_fit_of_the_masks_on_the_same_parts():
    x, y = items(n=600, k=4, d=8, seed=5)
    store = choice_store(x, CPU)
    neg = torch.zeros((600, 4))
    yt = torch.as_tensor(y)
    design = block_design(
        600, 8, 150, block_rows=10, generator=torch.Generator().manual_seed(0), device=CPU
    )
    plan = plan_blocks(store, yt, design, torch.arange(600), 4, task_rows=64)
    model = ChoiceEnsemble(tol=1e-6)
    by_blocks = fit_choices(store, yt, neg, model, plan=plan)
    train = torch.zeros((600, 8))
    train[torch.arange(600)] = design.train_mask()
    by_masks = fit_choices(store, yt, neg, model, train=train)
    np.testing.assert_allclose(by_blocks.weights, by_masks.weights, rtol=1e-3, atol=1e-4)
    c1, h1 = choice_heldout_counts(store, yt, neg, by_blocks, plan=plan)
    c2, h2 = choice_heldout_counts(store, yt, neg, by_blocks, heldout=1.0 - train)
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(h1, h2)


def test_reordering_every_items_choices_changes_nothing():
    # one weight vector, no position term: the model cannot see where a choice sits
    x, y = items(n=200, k=3, d=6, seed=6)
    rng = np.random.default_rng(7)
    perm = np.argsort(rng.random((200, 3)), axis=1)
    xp = np.take_along_axis(x, perm[:, :, None], axis=1)
    yp = np.argsort(perm, axis=1)[np.arange(200), y]
    train = rng.random((200, 4)) < 0.5
    s1, y1, n1, a = fit(x, y, train, ChoiceEnsemble(tol=1e-6))
    s2, y2, n2, b = fit(xp, yp, train, ChoiceEnsemble(tol=1e-6))
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-4, atol=1e-5)
    held = torch.as_tensor(~train, dtype=torch.float32)
    np.testing.assert_array_equal(
        choice_heldout_counts(s1, y1, n1, a, heldout=held)[0],
        choice_heldout_counts(s2, y2, n2, b, heldout=held)[0],
    )


def test_a_shift_shared_by_an_items_choices_changes_nothing():
    # e.g. the context's share of a context-and-choice encoding: the same for every choice
    x, y = items(n=200, k=3, d=6, seed=9)
    shift = 1e3 * np.random.default_rng(10).normal(size=(200, 1, 6))
    train = np.random.default_rng(11).random((200, 3)) < 0.5
    _, _, _, a = fit(x, y, train, ChoiceEnsemble(tol=1e-6))
    _, _, _, b = fit(x + shift, y, train, ChoiceEnsemble(tol=1e-6))
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-4, atol=1e-5)


def test_a_tie_for_the_top_is_a_guess_among_the_tied_never_a_pick_by_position():
    n, p = 3000, 8
    keys = torch.arange(n) * 7 + 3  # input positions: any ints
    w = torch.ones((2, p))
    three = torch.zeros((n, 3, 2))  # all choices alike: a three-way tie
    two = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]).expand(n, 3, 2)  # right duplicated
    for x, t in ((three, 3), (two, 2)):
        for y in (0, 1):
            hits = _hits(x, torch.full((n,), y), torch.zeros(n, 3), w, keys)
            # the share of the (item, model) pairs won is 1/t, whatever the right position
            assert abs(float(hits.mean()) - 1 / t) < 0.02, (t, y, float(hits.mean()))
    # where the right choice sits does not change the draw: the same items win
    a = _hits(three, torch.zeros(n, dtype=torch.long), torch.zeros(n, 3), w, keys)
    b = _hits(three, torch.full((n,), 2), torch.zeros(n, 3), w, keys)
    assert torch.equal(a, b)
    # the draw depends on the item and the model, not on a task's row order
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    c = _hits(three[perm], torch.zeros(n, dtype=torch.long), torch.zeros(n, 3), w, keys[perm])
    assert torch.equal(c, a[perm])
    # a choice scoring above the right one: never a hit; the right one alone on top: always
    x = torch.tensor([[[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]]).expand(n, 3, 2)
    yz = torch.zeros(n, dtype=torch.long)
    assert _hits(x, yz, torch.zeros(n, 3), torch.tensor([[1.0], [0.0]]), keys).sum() == 0
    assert _hits(x, yz, torch.zeros(n, 3), torch.tensor([[0.0], [1.0]]), keys).min() == 1
    # a padded choice is not in the tie: a two-way tie of choices 0 and 2
    padded = _hits(
        x, yz, torch.tensor([[0.0, NEG, 0.0]]).expand(n, 3), torch.tensor([[1.0], [0.0]]), keys
    )
    assert abs(float(padded.mean()) - 0.5) < 0.03
    masked = torch.tensor([[[0.0, 0.0], [5.0, 0.0], [-1.0, 0.0]]])
    assert (
        _hits(
            masked, yz[:1], torch.tensor([[0.0, NEG, 0.0]]), torch.tensor([[1.0], [0.0]]), keys[:1]
        ).item()
        == 1.0
    )


def planted(n=1200, k=4, d=16, share=0.3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    y = rng.integers(0, k, n)
    give = rng.random(n) < share
    x[:, :, 0] = 0.0
    x[np.flatnonzero(give), y[give], 0] = 1.0  # the right choice carries a give-away
    return x, y, give


def test_planted_give_aways_are_removed_first_and_leave_chance():
    x, y, give = planted()
    n_give = int(give.sum())
    kw = dict(n_partitions=16, train_size=0.2, seed=0, threads=1)
    res = aflite.filter(x, y, target_size=len(y) - n_give, slice_size=120, threshold=0.5, **kw)
    removed = np.asarray(res.removed)
    assert give[removed].mean() > 0.95
    assert give[res.kept].mean() < 0.02
    assert res.final_bias < 0.32  # near the chance of four choices
    assert res.history[0].chance == pytest.approx(choice_chance(y, np.full(len(y), 4)))
    subset = np.random.default_rng(1).choice(len(y), len(res.kept), replace=False)
    random_bias = aflite.representation_bias(x[subset], y[subset], **kw)
    assert random_bias > 0.45
    assert res.params["model"].startswith("ChoiceEnsemble(")


def test_answers_always_at_one_position_are_not_predictable_from_it():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(600, 4, 8))
    y = np.zeros(600, dtype=int)  # every answer first; the content carries nothing
    ps = aflite.predictability_scores(x, y, n_partitions=16, train_size=0.3, seed=0, threads=1)
    assert ps.representation_bias < 0.4


def test_same_result_at_one_and_two_threads():
    x, y, _ = planted(n=600, d=8, seed=3)
    x[::7, 3] = np.nan  # some items have three choices
    y[::7] = np.minimum(y[::7], 2)
    kw = dict(
        target_size=400, n_partitions=8, train_size=0.25, slice_size=60, threshold=0.5, seed=0
    )
    one = aflite.filter(x, y, threads=1, **kw)
    two = aflite.filter(x, y, threads=2, **kw)
    np.testing.assert_array_equal(one.kept, two.kept)
    np.testing.assert_array_equal(one.removed_score, two.removed_score)
    assert [h.solver for h in one.history] == [h.solver for h in two.history]


def test_uniform_partitions_run_too():
    x, y, give = planted(n=400, d=8, seed=4)
    ps = aflite.predictability_scores(
        x, y, n_partitions=8, train_size=0.3, partitions="uniform", seed=0, threads=1
    )
    assert np.nanmean(ps.scores[give]) > 0.9 > 0.5 > np.nanmean(ps.scores[~give])
    assert ps.info["solver"] == "choice"


def test_chance_is_the_best_position_only_guess():
    assert choice_chance(np.array([0, 0, 1, 2]), np.full(4, 4)) == 0.5
    assert choice_chance(np.array([0, 1, 2, 3]), np.full(4, 4)) == 0.25
    # one item of two choices, three of three, answers spread: at least 1/K per group
    assert choice_chance(np.array([1, 0, 1, 2]), np.array([2, 3, 3, 3])) == 0.5


def test_pad_choices_and_its_padding_is_masked():
    x = pad_choices([np.ones((2, 3)), np.zeros((4, 3))])
    assert x.shape == (2, 4, 3) and np.isnan(x[0, 2:]).all() and not np.isnan(x[1]).any()
    store = choice_store(x, CPU)
    assert torch.isfinite(store.data).all() and (store.data[0, 6:] == 0).all()


@pytest.mark.parametrize(
    ("features", "labels", "kw", "match"),
    [
        (np.zeros((5, 2, 2, 2)), [0] * 5, {}, "features must be 2-D"),
        (np.zeros((5, 3)), [0] * 5, {"model": "choice"}, r"shape \(n_items, n_choices"),
        (np.zeros((5, 1, 2)), [0] * 5, {}, "at least 2 choices"),
        (np.zeros((5, 3, 2)), [0, 1, 2, 3, 0], {}, r"item 3: answer 3 is not a choice position"),
        (np.zeros((5, 3, 2)), ["a", "b", "c", "a", "b"], {}, "0-based answer positions"),
        (np.zeros((5, 3, 2)), [0, 1, 2], {}, "one answer per item"),
        (
            pad_choices([np.ones((3, 2))] * 4 + [np.ones((2, 2))]),
            [0, 1, 2, 0, 2],
            {},
            "item 4: answer 2 points at a padded",
        ),
        (
            pad_choices([np.ones((3, 2))] * 4 + [np.ones((1, 2))]),
            [0] * 5,
            {},
            "item 4 has fewer than 2 choices",
        ),
        (
            np.where(np.arange(2) == 0, np.nan, np.zeros((5, 3, 2))),
            [0] * 5,
            {},
            "NaN or inf in item 0, choice 0",
        ),
    ],
)
def test_bad_multiple_choice_input_is_one_clear_error(features, labels, kw, match):
    with pytest.raises(ValueError, match=match):
        aflite.predictability_scores(features, labels, train_size=2, **kw)


def test_other_models_and_backends_are_refused_for_choices():
    x, y = items(n=50, k=3, d=4)
    with pytest.raises(ValueError, match=r"\(model family 'sklearn'\) fits no multiple-choice"):
        aflite.predictability_scores(x, y, model=LogisticRegression(), train_size=10)
    with pytest.raises(ValueError, match=r"\(model family 'sklearn'\) fits no multiple-choice"):
        aflite.filter(x, y, target_size=40, train_size=10, model=LogisticRegression(),
                      backend=object())  # fmt: skip
    with pytest.raises(ValueError, match="C must be a positive number"):
        ChoiceEnsemble(C=0)
    assert isinstance(aflite.MODELS["choice"].target(ChoiceEnsemble(C=0.3)), ChoiceModel)


def test_fit_reports_convergence():
    x, y = items(n=200, k=4, d=6, seed=8)
    _, _, _, out = fit(x, y, np.ones((200, 2), bool))
    assert isinstance(out, ChoiceFit)
    assert out.report.solver == "choice" and out.report.n_capped == 0
    assert out.report.residual <= 10 * 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_choices(x, y)
