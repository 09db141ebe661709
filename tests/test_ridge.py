"""The exact least-squares family (``model="ridge"``): every form equals scikit-learn's
RidgeClassifier on the same training parts, in coefficients and held-out predictions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import RidgeClassifier

import aflite
from aflite.algorithm import RidgeEnsemble
from aflite.algorithm.models.ridge.direct import parts_of_mask, solve_spd
from aflite.algorithm.models.ridge.fit import Parts, choose_form, fit_ridge
from aflite.algorithm.models.ridge.kernel import KernelCache
from aflite.algorithm.numerics.store import FeatureStore, standardise


def _data(n=240, d=30, n_classes=3, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    if sparse:  # counts, mostly zero, as n-grams are
        x = (rng.random((n, d)) < 0.02).astype(np.float32) * rng.integers(1, 3, (n, d))
        x[np.arange(n), y % d] += 1.0
    else:
        x = rng.normal(size=(n, d)).astype(np.float32)
        x[:, 0] += y
    x[:, 3] = 2.5  # a constant feature
    return x.astype(np.float32), y


def _parts(n, p, t, seed):
    rng = np.random.default_rng(seed)
    mask = np.zeros((n, p), dtype=bool)
    for j in range(p):
        mask[rng.choice(n, t, replace=False), j] = True
    return mask


def _reference(xs, y, mask, alpha, n_classes):
    """Per part: scikit-learn's RidgeClassifier (float64) coefficients as (d+1, C) columns
    (a binary fit's one column is the second class's; the first is its negative) and its
    predictions of every row."""
    out = []
    for j in range(mask.shape[1]):
        tr = mask[:, j]
        present = np.unique(y[tr])
        clf = RidgeClassifier(alpha=alpha * tr.sum(), solver="cholesky").fit(xs[tr], y[tr])
        theta = np.zeros((xs.shape[1] + 1, n_classes))
        coef, intercept = np.atleast_2d(clf.coef_), np.atleast_1d(clf.intercept_)
        if len(present) == 2:
            theta[:-1, present[1]], theta[-1, present[1]] = coef[0], intercept[0]
            theta[:, present[0]] = -theta[:, present[1]]
        else:
            theta[:-1, present] = coef.T
            theta[-1, present] = intercept
        out.append((theta, present, clf.predict(xs)))
    return out


@pytest.mark.parametrize("form", ["primal", "dual", "sparse"])
@pytest.mark.parametrize("n_classes", [2, 3, 20])
def test_every_form_equals_scikit_learns_ridge_classifier_on_the_same_parts(form, n_classes):
    n = 400 if n_classes == 20 else 240
    x, y = _data(
        n=n, d=120 if form == "sparse" else 30, n_classes=n_classes, sparse=form == "sparse"
    )
    t = 160 if n_classes == 20 else 60
    mask = _parts(n, 6, t, seed=1)
    if n_classes > 2:  # one part without class 0
        mask[:, 5] = False
        mask[np.flatnonzero(y != 0)[:t], 5] = True
    store = FeatureStore(x, torch.device("cpu"), sparse_rows=True)
    assert (store.sparse is not None) == (form == "sparse")
    yt = torch.as_tensor(y)
    order, weight = parts_of_mask(torch.as_tensor(mask))
    fit, _ = fit_ridge(
        store,
        yt,
        Parts(order, weight),
        n_classes,
        RidgeEnsemble(alpha=0.5, form=form),
        kernel=KernelCache(),
        held_of=lambda pos: torch.as_tensor(~mask)[pos],
    )
    assert fit.report.form == form
    xs = standardise(x).astype(np.float64)
    for j, (theta, present, pred) in enumerate(_reference(xs, y, mask, 0.5, n_classes)):
        ours = fit.theta[:, j].numpy()
        scale = np.abs(theta[:, present]).max()
        np.testing.assert_allclose(ours[:, present], theta[:, present], rtol=0, atol=1e-6 * scale)
        logits = xs @ ours[:-1] + ours[-1] + fit.neg[j].numpy()
        np.testing.assert_array_equal(logits.argmax(axis=1), pred)
    if n_classes > 2:
        assert bool((fit.neg[5, 0] < -1e29) & (fit.neg[5, 1:] == 0).all())


@pytest.mark.parametrize("form", ["auto", "primal"])
@pytest.mark.parametrize("partitions", ["blocks", "uniform"])
def test_held_out_counts_equal_a_loop_of_scikit_learn_fits(partitions, form):
    x, y = _data(n=300, d=20)
    groups = np.arange(300) // 3
    ps = aflite.predictability_scores(
        x,
        y,
        n_partitions=12,
        train_size=80,
        model=RidgeEnsemble(form=form),
        groups=groups,
        partitions=partitions,
        seed=3,
    )
    assert form == "auto" or ps.info["solver"] == "ridge-primal"
    mask = ps.train_mask
    xs = standardise(x).astype(np.float64)
    correct = np.zeros(300)
    alpha = RidgeEnsemble().alpha  # the default penalty
    for j, (_, _, pred) in enumerate(_reference(xs, y, mask, alpha, 3)):
        correct += (pred == y) & ~mask[:, j]  # held-out predictions only
    held = (~mask).sum(axis=1)
    np.testing.assert_array_equal(ps.n_heldout, held)
    np.testing.assert_array_equal(ps.n_correct, correct)
    # a group never straddles a split
    for j in range(mask.shape[1]):
        assert (
            mask[:, j].reshape(-1, 3).all(axis=1) | ~mask[:, j].reshape(-1, 3).any(axis=1)
        ).all()


def test_every_form_gives_the_same_counts_on_sparse_features():
    # uniform parts: under blocks the primal forms deal larger blocks than the others
    x, y = _data(n=500, d=120, sparse=True)
    counts = []
    for form in ("primal", "dual", "sparse"):
        ps = aflite.predictability_scores(
            x,
            y,
            n_partitions=16,
            train_size=100,
            seed=0,
            model=RidgeEnsemble(form=form),
            partitions="uniform",
        )
        assert ps.info["form"] == form
        counts.append(ps.n_correct)
    for other in counts[1:]:
        np.testing.assert_array_equal(counts[0], other)


def test_scores_do_not_depend_on_threads_storage_order_or_precision_settings():
    x, y = _data(n=400, d=60, sparse=True)
    ids = [f"r{i:04d}" for i in range(400)]
    kw = dict(
        target_size=250,
        train_size=80,
        slice_size=30,
        n_partitions=16,
        seed=5,
        model="ridge",
        threshold=0.5,
        progress=False,
    )
    base = aflite.filter(x, y, ids=ids, threads=1, **kw)
    perm = np.random.default_rng(0).permutation(400)
    moved = aflite.filter(x[perm], y[perm], ids=[ids[i] for i in perm], threads=2, **kw)
    assert sorted(ids[i] for i in base.kept) == sorted(ids[perm[i]] for i in moved.kept)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = aflite.filter(x, y, ids=ids, threads=1, **kw)
        assert torch.get_float32_matmul_precision() == "medium"  # the caller's, put back
    finally:
        torch.set_float32_matmul_precision(before)
    np.testing.assert_array_equal(base.kept, low.kept)


def test_refinement_reaches_the_float64_solution_and_falls_back_when_float32_cannot():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 50, 50))
    m = torch.as_tensor(a @ a.transpose(0, 2, 1) + 0.5 * np.eye(50))
    q, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    m[2] = torch.as_tensor(q @ np.diag(np.logspace(0, 11, 50)) @ q.T)  # beyond float32's reach
    rhs = torch.as_tensor(rng.normal(size=(3, 50, 2)))
    x, info = solve_spd(m, rhs)
    ref = torch.linalg.solve(m, rhs)
    err = (x - ref).abs().amax(dim=(1, 2)) / ref.abs().amax(dim=(1, 2))
    assert float(err[:2].max()) < 1e-12  # float32 factor, float64 answer
    assert info["fallbacks"] == 1 and float(err[2]) < 1e-4  # float64 factor, as good as LU


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        RidgeEnsemble(alpha=0)
    with pytest.raises(ValueError, match="form"):
        RidgeEnsemble(form="qr")
    x, y = _data(n=100, d=10)  # dense: no sparse rows
    with pytest.raises(ValueError, match="mostly-zero"):
        aflite.predictability_scores(
            x, y, n_partitions=4, train_size=30, model=RidgeEnsemble(form="sparse")
        )


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_a_memory_map_scores_as_the_array_does(tmp_path, form):
    x, y = _data(n=300, d=40)
    path = tmp_path / "x.npy"
    np.save(path, x)
    kw = dict(
        n_partitions=8,
        train_size=60,
        seed=2,
        model=RidgeEnsemble(form=form),
        groups=np.arange(300) // 3,
    )
    mem = aflite.predictability_scores(np.load(path, mmap_mode="r"), y, **kw)
    arr = aflite.predictability_scores(x, y, **kw)
    np.testing.assert_array_equal(mem.n_correct, arr.n_correct)
    np.testing.assert_array_equal(mem.n_heldout, arr.n_heldout)


def test_multiple_choice_items_take_the_choice_wise_models():
    x = np.random.default_rng(0).normal(size=(60, 3, 5))
    y = np.arange(60) % 3
    ridge = aflite.predictability_scores(x, y, n_partitions=4, train_size=20, model="ridge")
    assert ridge.info["solver"] == "choice-ridge"
    # "auto" is ridge's other name; logistic regression's variant is "choice"
    ps = aflite.predictability_scores(x, y, n_partitions=4, train_size=20, model="auto")
    assert ps.info["solver"] == "choice-ridge"
    ps = aflite.predictability_scores(x, y, n_partitions=4, train_size=20, model="linear")
    assert ps.info["solver"] == "choice"
    with pytest.raises(ValueError, match="unknown model family 'ridg' .*did you mean 'ridge'"):
        aflite.predictability_scores(x, y, n_partitions=4, train_size=20, model="ridg")
    with pytest.raises(ValueError, match="primal form only: .* not form='dual'"):
        aflite.predictability_scores(
            x, y, n_partitions=4, train_size=20, model=RidgeEnsemble(form="dual")
        )


def test_the_primal_form_without_room_for_the_block_sums_gives_the_same_counts(monkeypatch):
    from aflite.algorithm.models.ridge import direct as ridge_direct

    x, y = _data(n=300, d=20)
    kw = dict(n_partitions=8, train_size=100, seed=1, model=RidgeEnsemble(form="primal"))
    blocks = aflite.predictability_scores(x, y, **kw)
    monkeypatch.setattr(ridge_direct, "BLOCK_BYTES", 0)  # each part's own rows instead
    rows = aflite.predictability_scores(x, y, **kw)
    np.testing.assert_array_equal(blocks.n_correct, rows.n_correct)


def test_the_earlier_iterative_form_is_read_as_the_direct_one():
    with pytest.warns(DeprecationWarning, match="form='primal'"):
        model = RidgeEnsemble(form="cg")
    assert model.form == "primal"


@pytest.mark.parametrize("alpha", [1e-8, 1e-11])
def test_a_tiny_penalty_still_equals_scikit_learn(alpha):
    # d > t and a tiny alpha: near-singular systems, which a float32 factor cannot refine
    # (a float64 factor takes over) and whose bound ||r|| / (alpha t) is loose
    x, y = _data(n=120, d=400)
    mask = _parts(120, 4, 40, seed=3)
    store = FeatureStore(x, torch.device("cpu"))
    order, weight = parts_of_mask(torch.as_tensor(mask))
    fit, counts = fit_ridge(
        store, torch.as_tensor(y), Parts(order, weight), 3,
        RidgeEnsemble(alpha=alpha, form="primal"),
        kernel=KernelCache(), held_of=lambda pos: torch.as_tensor(~mask)[pos],
    )  # fmt: skip
    xs = standardise(x).astype(np.float64)
    correct = np.zeros(120)
    for j, (_, _, pred) in enumerate(_reference(xs, y, mask, alpha, 3)):
        correct += (pred == y) & ~mask[:, j]
    np.testing.assert_array_equal(counts.correct.numpy(), correct)


def test_the_primal_form_keeps_the_same_rows_from_a_shuffled_input():
    """Many equal scores at the cut (two classes, a weak signal), ordered by the seed's draw
    in the rows' canonical order: the same rows whatever the storage order and threads."""
    rng = np.random.default_rng(0)
    n, d = 60_000, 32
    y = rng.integers(0, 2, n)
    x = (rng.normal(size=(n, d)) + 0.25 * np.eye(2, d)[y]).astype(np.float32)
    ids = np.array([f"r{i:06d}" for i in range(n)])
    perm = rng.permutation(n)
    kw = dict(n_partitions=64, train_size=6000, seed=0, partitions="uniform",
              model=RidgeEnsemble(form="primal"), threshold=0.0, slice_size=2056,
              target_size=n - 2056, progress=False, score_kept=False)  # fmt: skip
    a = aflite.filter(x, y, ids=list(ids), threads=1, **kw)
    b = aflite.filter(x[perm], y[perm], ids=list(ids[perm]), threads=2, **kw)
    assert a.history[0].solver["form"] == "primal"
    assert set(ids[a.kept]) == set(ids[perm][b.kept])


def test_auto_takes_the_cheaper_direct_form():
    wide = dict(n=20_000, d=1024, t=2000, p=64, n_classes=3)
    assert choose_form(RidgeEnsemble(), dual_ok=False, **wide) == "primal"
    # t well below d: the t x t systems on the kernel
    assert choose_form(RidgeEnsemble(), dual_ok=True, **dict(wide, t=300)) == "dual"
    assert choose_form(RidgeEnsemble(), dual_ok=True, **dict(wide, t=4000)) == "primal"


def test_primal_counts_do_not_depend_on_the_thread_count():
    x, y = _data(n=2000, d=40)
    kw = dict(n_partitions=16, train_size=400, seed=1, model=RidgeEnsemble(form="primal"))
    one = aflite.predictability_scores(x, y, threads=1, **kw)
    two = aflite.predictability_scores(x, y, threads=2, **kw)
    np.testing.assert_array_equal(one.n_correct, two.n_correct)


def _items(n=240, k=4, d=10, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    y = rng.integers(0, k, n)
    x[np.arange(n // 3), y[: n // 3], 0] += 1.5  # a give-away on a third of the items
    x[::7, 3] = np.nan  # some items have three choices
    y[::7] = np.minimum(y[::7], 2)
    return x, y


@pytest.mark.parametrize("partitions", ["blocks", "uniform"])
def test_items_take_a_choice_wise_ridge_equal_to_scikit_learn(partitions):
    """model='ridge' on (N, K, d): per part, Ridge(alpha * r, no intercept) on the part's real
    choices, centred and scaled per item as the store keeps them, with targets +1 for the
    answer and -1 for the others; an item is predicted by its choice of highest score."""
    from sklearn.linear_model import Ridge

    from aflite.algorithm.numerics.item_store import choice_store, valid_choices

    x, y = _items()
    n, k, d = x.shape
    ps = aflite.predictability_scores(
        x, y, n_partitions=6, train_size=0.3, model=RidgeEnsemble(alpha=0.5),
        partitions=partitions, seed=2,
    )  # fmt: skip
    assert ps.info["solver"] == "choice-ridge"
    z = choice_store(x, torch.device("cpu")).standardised().numpy().astype(np.float64)
    z = z.reshape(n, k, d)
    valid = valid_choices(x)
    target = np.where(np.arange(k)[None, :] == y[:, None], 1.0, -1.0)
    correct = np.zeros(n)
    for j in range(ps.train_mask.shape[1]):
        train = ps.train_mask[:, j]
        rows = valid & train[:, None]
        fit = Ridge(alpha=0.5 * rows.sum(), fit_intercept=False, solver="cholesky", tol=1e-12)
        fit.fit(z[rows], target[rows])
        score = np.where(valid, z @ fit.coef_, -np.inf)
        correct += (score.argmax(axis=1) == y) & ~train
    np.testing.assert_array_equal(ps.n_heldout, (~ps.train_mask).sum(axis=1))
    np.testing.assert_array_equal(ps.n_correct, correct)


def test_a_filter_on_items_with_ridge_removes_the_give_aways_and_leaves_chance():
    from test_choice_model import planted

    x, y, give = planted()
    n_give = int(give.sum())
    kw = dict(n_partitions=16, train_size=0.2, seed=0, model="ridge")
    res = aflite.filter(x, y, target_size=len(y) - n_give, slice_size=120, threshold=0.5, **kw)
    assert res.history[0].solver["solver"] == "choice-ridge"
    assert give[np.asarray(res.removed)].mean() > 0.95
    assert give[res.kept].mean() < 0.02
    assert res.final_bias < 0.32  # near the chance of four choices
    subset = np.random.default_rng(1).choice(len(y), len(res.kept), replace=False)
    assert aflite.representation_bias(x[subset], y[subset], **kw) > 0.45
    one = aflite.filter(x, y, target_size=len(y) - n_give, slice_size=120, threshold=0.5,
                        threads=1, **kw)  # fmt: skip
    assert one.fingerprint() == res.fingerprint()
