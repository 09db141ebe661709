"""No shape breaks a phase: over the number of rows, features, partitions (1 to 1,024), the
training size (a count or a fraction), the classes (2 to 20), groups, dense and mostly-zero
features, both partition designs and every form of the exact family, a phase either gives
the reference answer (scikit-learn's RidgeClassifier on the same parts, for the exact
family; valid counts for logistic regression) or stops at once with a one-line error that
names the option."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.linear_model import RidgeClassifier

import aflite
from aflite.algorithm.numerics.store import standardise

FORMS = ["auto", "primal", "dual", "sparse"]


@st.composite
def shapes(draw):
    n = draw(st.integers(12, 160))
    d = draw(st.sampled_from([1, 2, 5, 17, 64, 130]))
    n_classes = draw(st.integers(2, min(20, n // 3)))
    m = draw(st.sampled_from([1, 2, 3, 4, 7, 16, 64, 1024]))
    if draw(st.booleans()):
        t = draw(st.integers(1, n + 2))  # a count, now and then too large
    else:
        t = draw(st.sampled_from([0.05, 0.1, 0.3, 0.5, 0.9, 0.99]))
    return {
        "n": n,
        "d": d,
        "n_classes": n_classes,
        "m": m,
        "t": t,
        "sparse": draw(st.booleans()),
        "groups": draw(st.sampled_from([None, 1, 3])),
        "partitions": draw(st.sampled_from(["blocks", "uniform"])),
        "seed": draw(st.integers(0, 3)),
    }


def _data(shape):
    rng = np.random.default_rng(shape["seed"])
    n, d = shape["n"], shape["d"]
    y = np.arange(n) % shape["n_classes"]
    rng.shuffle(y)
    if shape["sparse"]:
        x = (rng.random((n, d)) < 0.03).astype(np.float32) * rng.integers(1, 3, (n, d))
    else:
        x = rng.normal(size=(n, d)).astype(np.float32)
    x[:, 0] += y  # something to learn
    groups = None if shape["groups"] is None else np.arange(n) // shape["groups"]
    return x, y, groups


def _reference_counts(x, y, mask, alpha):
    """Correct held-out predictions of scikit-learn's RidgeClassifier fitted on each part;
    decisions equal to float64 rounding are a tie, won by the class listed first (as
    scikit-learn does for exactly equal values)."""
    xs = standardise(x).astype(np.float64)
    fits = []
    for j in range(mask.shape[1]):
        tr = mask[:, j]
        present = np.unique(y[tr])
        if len(present) < 2:  # one class: predicts it everywhere
            fits.append((present, None, None))
            continue
        clf = RidgeClassifier(alpha=alpha * tr.sum(), solver="cholesky").fit(xs[tr], y[tr])
        coef, intercept = np.atleast_2d(clf.coef_), np.atleast_1d(clf.intercept_)
        if len(present) == 2:
            coef, intercept = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept])
        fits.append((present, coef, intercept))
    w_max = max((np.linalg.norm(f[1], axis=1).max() for f in fits if f[1] is not None), default=0)
    b_max = max((np.abs(f[2]).max() for f in fits if f[2] is not None), default=0)
    scale = np.linalg.norm(xs, axis=1) * w_max + b_max
    correct = np.zeros(len(y), dtype=np.int64)
    for j, (present, coef, intercept) in enumerate(fits):
        if coef is None:
            pred = np.full(len(y), present[0])
        else:
            dec = xs @ coef.T + intercept
            near = dec >= dec.max(axis=1, keepdims=True) - 1e-9 * scale[:, None]
            pred = present[near.argmax(axis=1)]
        correct += (pred == y) & ~mask[:, j]
    return correct


def _run(shape, model):
    x, y, groups = _data(shape)
    try:
        return aflite.predictability_scores(
            x, y, n_partitions=shape["m"], train_size=shape["t"], model=model, groups=groups,
            partitions=shape["partitions"], seed=shape["seed"],
        ), (x, y)  # fmt: skip
    except ValueError as e:  # a user's mistake: one line, naming the option
        message = str(e)
        assert "\n" not in message
        assert any(name in message for name in ("train_size", "form", "n_partitions")), message
        return None, (x, y)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes(), form=st.sampled_from(FORMS))
def test_the_exact_family_on_any_shape_equals_scikit_learn(shape, form):
    if shape["m"] == 1024 and shape["n"] > 40:  # the reference loop's time
        shape["m"] = 64
    ps, (x, y) = _run(shape, aflite.RidgeEnsemble(form=form))
    if ps is None:
        return
    assert ps.train_mask.shape == (shape["n"], shape["m"])
    np.testing.assert_array_equal(ps.n_heldout, (~ps.train_mask).sum(axis=1))
    alpha = aflite.RidgeEnsemble().alpha
    np.testing.assert_array_equal(ps.n_correct, _reference_counts(x, y, ps.train_mask, alpha))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes())
def test_logistic_regression_on_any_shape_gives_valid_counts(shape):
    shape["m"] = min(shape["m"], 64)  # the time of a test
    ps, _ = _run(shape, aflite.LinearEnsemble(max_iter=200))
    if ps is None:
        return
    held = (~ps.train_mask).sum(axis=1)
    np.testing.assert_array_equal(ps.n_heldout, held)
    assert (ps.n_correct >= 0).all() and (ps.n_correct <= held).all()
    scores = ps.scores[~np.isnan(ps.scores)]
    assert ((scores >= 0) & (scores <= 1)).all()


@pytest.mark.parametrize("m", [1, 2, 4, 8])
@pytest.mark.parametrize("n, d", [(3000, 32), (5000, 64)])
def test_few_partitions_of_many_rows_equal_scikit_learn(n, d, m):
    # few partitions of parts far larger than the features: a shape that once crashed
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = rng.integers(0, 3, n)
    x[:, 0] += y
    ps = aflite.predictability_scores(x, y, n_partitions=m, train_size=0.1, model="ridge")
    alpha = aflite.RidgeEnsemble().alpha
    np.testing.assert_array_equal(ps.n_correct, _reference_counts(x, y, ps.train_mask, alpha))
