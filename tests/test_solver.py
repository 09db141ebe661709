"""The batched solver against converged scikit-learn fits on the same partitions.

Each case mirrors a case of ``benchmarks/bench_phase.py`` at a size the suite can afford: real
SNLI n-grams at three training-part sizes (span and primal solvers), real MiniLM pair
features, wide synthetic features (d > t), 20 classes, and features with an offset of 1e4.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.numerics.store import standardise
from aflite.data import bundled_snli
from aflite.features.ngrams import ngram_features

DATA = Path(__file__).parent / "data"


def reference_scores(x, y, train_mask):
    """Scores of a loop of scikit-learn fits run to a tight tolerance."""
    xs = standardise(x)
    correct = np.zeros(len(y))
    held = np.zeros(len(y))
    for j in range(train_mask.shape[1]):
        tr = train_mask[:, j]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LogisticRegression(C=1.0, tol=1e-8, max_iter=20_000).fit(xs[tr], y[tr])
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
        held[~tr] += 1
    return correct / np.maximum(held, 1)


def agreement(ref, ours, top):
    """Pearson r, and the share of the reference's ``top`` most predictable rows that are
    among ours (ties at our cut-off count as in: with 16 partitions scores move in steps of
    1/14, so dozens of rows tie at any cut-off of a few hundred rows)."""
    r = np.corrcoef(ref, ours)[0, 1]
    top_ref = np.argsort(-ref, kind="stable")[:top]
    cut = np.sort(ours)[::-1][top - 1]
    return r, float(np.mean(ours[top_ref] >= cut))


def _snli_rows(n):
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()[:n]]


def snli_ngrams(n=900, max_features=512):
    rows = _snli_rows(n)
    x = ngram_features(
        [[r["premise"] for r in rows], [r["hypothesis"] for r in rows]], max_features=max_features
    )
    return x, np.unique([r["label"] for r in rows], return_inverse=True)[1]


def snli_minilm(offset=0.0):
    z = np.load(DATA / "snli_minilm_800.npz")
    u, v = z["u"].astype(np.float64), z["v"].astype(np.float64)
    x = np.concatenate([u, v, np.abs(u - v), u * v], axis=1) + offset
    rows = _snli_rows(len(u))
    return x, np.unique([r["label"] for r in rows], return_inverse=True)[1]


def wide_synthetic(n=400, d=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    mix = rng.normal(size=(64, d)) / np.arange(1, 65)[:, None] ** 0.7
    x = (rng.normal(size=(n, 64)) + 0.3 * rng.normal(size=(3, 64))[y]) @ mix
    return (x + 0.05 * rng.normal(size=(n, d))).astype(np.float32), y


def many_classes(n=1000, d=64, c=20, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    x = rng.normal(size=(n, d)) + 0.6 * rng.normal(size=(c, d))[y]
    return x.astype(np.float32), y


CASES = {
    "snli-ngrams-small-t": (snli_ngrams, 50, 16, "span"),
    "snli-ngrams-mid-t": (snli_ngrams, 150, 16, "span"),
    "snli-ngrams-large-t": (lambda: snli_ngrams(max_features=256), 400, 16, "primal"),
    "snli-minilm": (snli_minilm, 80, 16, "span"),
    "wide-synthetic": (wide_synthetic, 40, 16, "span"),
    "20-classes": (many_classes, 300, 16, "primal"),
    "offset-1e4": (lambda: snli_minilm(offset=1e4), 80, 16, "span"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_scores_agree_with_converged_sklearn_fits(case):
    make, t, m, solver = CASES[case]
    x, y = make()
    ps = aflite.predictability_scores(x, y, n_partitions=m, train_size=t, seed=0, device="cpu")
    assert ps.info["solver"] == solver
    assert ps.info["n_capped"] == 0
    assert ps.info["residual"] <= aflite.LinearEnsemble().tol
    ref = reference_scores(x, y, ps.train_mask)
    r, overlap = agreement(ref, ps.scores, top=len(y) // 10)
    assert r >= 0.98, (case, r)
    assert overlap >= 0.95, (case, overlap)


@pytest.mark.parametrize("solver", ["primal", "span"])
def test_both_solvers_reach_the_sklearn_optimum(solver):
    from aflite.algorithm.models.linear.ensemble import fit_ensemble
    from aflite.algorithm.numerics.store import FeatureStore

    x, y = many_classes(n=300, d=40, c=3)
    rng = np.random.default_rng(0)
    train = np.zeros((len(y), 4), dtype=bool)
    for j in range(4):
        train[rng.permutation(len(y))[:60], j] = True
    store = FeatureStore(x, torch.device("cpu"))
    model = aflite.LinearEnsemble(solver=solver, tol=1e-6)
    ens, _ = fit_ensemble(
        store, torch.as_tensor(y), torch.as_tensor(train, dtype=torch.float32), 3, model
    )
    xs = standardise(x)
    for j in range(4):
        ref = LogisticRegression(tol=1e-10, max_iter=20_000).fit(xs[train[:, j]], y[train[:, j]])
        np.testing.assert_allclose(ens.theta[:-1, j].numpy(), ref.coef_.T, atol=2e-3)
        np.testing.assert_allclose(ens.theta[-1, j].numpy(), ref.intercept_, atol=2e-3)


@pytest.mark.parametrize("gathered", [False, True])
def test_dense_and_gathered_primal_passes_reach_the_sklearn_optimum(gathered, monkeypatch):
    """Parts of different sizes (the gathered pass pads them) and a class absent from one
    part (its logit is ruled out) give scikit-learn's weights either way."""
    import aflite.algorithm.models.linear.ensemble as ensemble
    from aflite.algorithm.numerics.store import FeatureStore

    calls = []

    def rule(*args):
        calls.append(args)
        return gathered

    monkeypatch.setattr(ensemble, "use_gathered_rows", rule)
    x, y = many_classes(n=300, d=40, c=5)
    rng = np.random.default_rng(1)
    sizes = [60, 45, 52, 60]
    train = np.zeros((len(y), 4), dtype=bool)
    for j, size in enumerate(sizes):
        pool = np.flatnonzero(y != 4) if j == 2 else np.arange(len(y))
        train[rng.permutation(pool)[:size], j] = True
    store = FeatureStore(x, torch.device("cpu"))
    model = aflite.LinearEnsemble(solver="primal", tol=1e-6)
    ens, _ = ensemble.fit_ensemble(
        store, torch.as_tensor(y), torch.as_tensor(train, dtype=torch.float32), 5, model
    )
    assert len(calls) == 1 and calls[0][1] == max(sizes)
    xs = standardise(x)
    for j in range(4):
        ref = LogisticRegression(tol=1e-10, max_iter=20_000).fit(xs[train[:, j]], y[train[:, j]])
        cols = ref.classes_
        np.testing.assert_allclose(ens.theta[:-1, j, cols].numpy(), ref.coef_.T, atol=2e-3)
        # softmax intercepts are defined up to a common shift: compare them centred
        ours = ens.theta[-1, j, cols].numpy()
        np.testing.assert_allclose(
            ours - ours.mean(), ref.intercept_ - ref.intercept_.mean(), atol=3e-3
        )
    assert float(ens.neg[2, 4]) < -1e29 and float(ens.neg[0, 4]) == 0.0
    # the absent class's logit is ruled out while fitting, so it never gets a gradient
    assert not ens.theta[:, 2, 4].any()


def test_gathered_rows_only_where_they_pay():
    from aflite.algorithm.models.linear.ensemble import use_gathered_rows

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert use_gathered_rows(6000, 600, 256, 20, 64, cpu)  # 20 classes: 2.6x measured
    assert not use_gathered_rows(20000, 2000, 1024, 3, 64, cpu)  # 3 classes: 0.5x
    assert not use_gathered_rows(6000, 600, 256, 20, 64, cuda)
    assert not use_gathered_rows(600_000, 60_000, 1024, 20, 64, cpu)  # 15 GiB of rows


def test_two_classes_match_a_binary_logistic_regression():
    from aflite.algorithm.models.linear.ensemble import fit_ensemble, predict_all
    from aflite.algorithm.numerics.store import FeatureStore

    x, y = many_classes(n=300, d=20, c=2)
    train = np.zeros((len(y), 1), dtype=bool)
    train[:150, 0] = True
    store = FeatureStore(x, torch.device("cpu"))
    ens, _ = fit_ensemble(
        store,
        torch.as_tensor(y),
        torch.as_tensor(train, dtype=torch.float32),
        2,
        aflite.LinearEnsemble(tol=1e-7),
    )
    ref = LogisticRegression(tol=1e-10, max_iter=20_000).fit(standardise(x)[:150], y[:150])
    np.testing.assert_array_equal(
        predict_all(store, ens)[:, 0].numpy(), ref.predict(standardise(x))
    )
    diff = ens.theta[:-1, 0, 1] - ens.theta[:-1, 0, 0]
    np.testing.assert_allclose(diff.numpy(), ref.coef_[0], atol=2e-3)


@pytest.mark.parametrize("offset", [1e3, 1e5])
def test_adding_a_constant_to_every_feature_changes_no_prediction(offset):
    x, y = many_classes(n=400, d=16, c=3)
    x = x.astype(np.float64)
    base = aflite.predictability_scores(x, y, n_partitions=8, train_size=100, seed=0)
    moved = aflite.predictability_scores(x + offset, y, n_partitions=8, train_size=100, seed=0)
    np.testing.assert_array_equal(base.n_correct, moved.n_correct)


@pytest.mark.parametrize(
    "transform",
    [
        lambda x: x * 1e6,  # huge scale
        lambda x: x * 1e-6,  # tiny scale
        lambda x: np.hstack([x, np.full((len(x), 3), 7.0)]),  # constant columns
        lambda x: np.vstack([x[:50]] * 4 + [x[200:]]),  # many duplicated rows
        lambda x: x + 1e8,  # an offset far beyond float32's precision
    ],
)
def test_no_valid_input_breaks_the_solver(transform):
    x, y = many_classes(n=400, d=16, c=3)
    x = transform(x.astype(np.float64))
    y = np.resize(y, len(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", aflite.ConvergenceWarning)
        ps = aflite.predictability_scores(x, y, n_partitions=8, train_size=60, seed=0)
    assert np.all((ps.scores >= 0) & (ps.scores <= 1))


def test_classes_absent_from_a_training_part_are_never_predicted():
    x, y = many_classes(n=400, d=8, c=20)
    ps = aflite.predictability_scores(x, y, n_partitions=8, train_size=30, seed=0)
    assert ps.info["n_capped"] == 0  # an absent class has no finite optimum: it is masked
    assert np.all(np.isfinite(ps.scores))


def test_the_iteration_cap_warns_and_is_recorded():
    x, y = snli_ngrams(n=400)
    model = aflite.LinearEnsemble(max_iter=3)
    with pytest.warns(aflite.ConvergenceWarning, match="iteration cap"):
        res = aflite.filter(x, y, target_size=300, train_size=100, n_partitions=4, model=model)
    solver = res.history[0].solver
    assert solver["iterations"] == 3 and solver["n_capped"] >= 1 and solver["residual"] > model.tol
