"""The batched ensemble against a plain loop of scikit-learn fits on the same partitions."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.linear import LinearEnsemble, batched_logistic_predict, gram_preconditioner
from aflite.algorithm.scoring import _moments, standardise_with_bias


def _correlated(n=600, d=24, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    mix = rng.normal(size=(8, d)) * (1.0 / np.arange(1, 9) ** 0.7)[:, None]
    means = rng.normal(size=(n_classes, 8)) * 0.6
    x = (rng.normal(size=(n, 8)) + means[y]) @ mix + 0.1 * rng.normal(size=(n, d))
    return x.astype(np.float32), y


def test_scores_match_sklearn_reference_loop():
    x, y = _correlated()
    ps = aflite.predictability_scores(x, y, n_partitions=16, train_size=150, seed=3, device="cpu")
    xs = standardise_with_bias(x)[:, :-1]
    correct = np.zeros(len(y))
    heldout = np.zeros(len(y))
    for j in range(ps.train_mask.shape[1]):
        tr = ps.train_mask[:, j]
        clf = LogisticRegression(C=1.0, max_iter=5000).fit(xs[tr], y[tr])
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
        heldout[~tr] += 1
    ref = correct / heldout
    np.testing.assert_array_equal(heldout, ps.n_heldout)
    # Tolerance: at most 2 of 16 predictions of any row differ, and the score vectors agree
    # closely (10 preconditioned L-BFGS steps vs a converged lbfgs fit).
    assert np.max(np.abs(ref - ps.scores)) <= 2 / 16 + 1e-9
    assert np.corrcoef(ref, ps.scores)[0, 1] >= 0.98
    assert abs(ref.mean() - ps.representation_bias) < 0.01


def test_converged_predictions_equal_sklearn():
    x, y = _correlated(n=400, d=10, seed=1)
    rng = np.random.default_rng(0)
    train = torch.zeros(len(y), 4)
    for j in range(4):
        train[rng.permutation(len(y))[:120], j] = 1.0
    model = LinearEnsemble(C=0.5, n_steps=60)
    xt = torch.from_numpy(x)
    std = _moments(x, torch.device("cpu"))
    chol = gram_preconditioner(xt, std, 120, 0.5)
    pred = batched_logistic_predict(
        xt, std, torch.as_tensor(y), train, 3, model=model, chol=chol
    ).numpy()
    xs = standardise_with_bias(x)[:, :-1]
    for j in range(4):
        tr = train[:, j].numpy().astype(bool)
        ref = LogisticRegression(C=0.5, max_iter=5000, tol=1e-8).fit(xs[tr], y[tr]).predict(xs)
        assert (ref == pred[:, j]).mean() >= 0.995


def test_sklearn_estimator_path_matches_linear_path():
    x, y = _correlated(n=300, d=8, seed=2)
    fast = aflite.predictability_scores(x, y, n_partitions=6, train_size=100, seed=0)
    slow = aflite.predictability_scores(
        x, y, n_partitions=6, train_size=100, seed=0, model=LogisticRegression(max_iter=2000)
    )
    np.testing.assert_array_equal(fast.train_mask, slow.train_mask)
    assert np.corrcoef(fast.scores, slow.scores)[0, 1] > 0.95


def test_string_labels_and_many_classes():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 7, 700)
    x = np.eye(7)[y] * 2 + rng.normal(size=(700, 7)) * 0.5
    names = np.array(["a", "b", "c", "d", "e", "f", "g"])[y]
    ps = aflite.predictability_scores(x, names, n_partitions=8, train_size=0.3, seed=0)
    assert ps.representation_bias > 0.9
