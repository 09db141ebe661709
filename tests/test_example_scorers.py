"""Per-example scorers: planted artifacts are easy and flipped labels hard for every scorer,
each formula against a small obviously-correct reference, rows aligned by id, same seed same
scores, the SNLI artifact, allenai/cartography's dynamics files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import planted_data

from aflite.errors import DataError
from aflite.scoring import (
    DynamicsOptions,
    TrainingDynamics,
    load_cartography_dynamics,
    record_dynamics,
    score_examples,
)
from aflite.scoring.aum import aum_from_logits
from aflite.scoring.crossfit import crossfit_folds, oof_prior, oof_probabilities
from aflite.scoring.datamap import datamap_metrics, datamap_regions
from aflite.scoring.el2n import el2n_from_probabilities
from aflite.scoring.forgetting import forgetting_events

EPOCHS = DynamicsOptions().epochs


@pytest.fixture(scope="module")
def planted_scores():
    """Planted give-away rows, 40 of them with a flipped label (their features still name
    the old class), scored by every scorer that needs no partial input."""
    x, y, planted = planted_data(n=1200)
    rng = np.random.default_rng(1)
    flipped = np.zeros(len(y), dtype=bool)
    flipped[rng.choice(np.flatnonzero(planted), 40, replace=False)] = True
    y = np.where(flipped, (y + 1) % 3, y)
    s = score_examples(x, y, seed=0, device="cpu")
    return s.frame(), planted & ~flipped, flipped, ~planted


def test_planted_rows_are_easy_and_flipped_rows_hard_for_every_scorer(planted_scores):
    df, easy, flipped, noise = planted_scores
    e, f, n = df[easy], df[flipped], df[noise]
    assert e.predictability.mean() > 0.95 and f.predictability.mean() < 0.05
    assert e.confidence.min() > 0.6 and e.confidence.mean() > 0.8
    assert f.confidence.max() < 0.3
    assert e.variability.max() < 0.1  # settled: the probability barely moves
    assert (e.region == "easy").mean() > 0.95 and (f.region == "hard").mean() > 0.95
    assert e.correctness.mean() > 0.99 and f.correctness.mean() < 0.05
    assert e.pvi.min() > 1.0 and f.pvi.max() < -0.5 and abs(n.pvi.mean()) < 0.2
    assert (e.aum > 0).mean() > 0.95 and (f.aum < 0).all()
    assert e.el2n.mean() < n.el2n.mean() < f.el2n.mean()
    assert (e.forgetting == 0).mean() > 0.95
    assert (f.forgetting == EPOCHS).all()  # never learned: counted as maximal
    assert n.forgetting.mean() > e.forgetting.mean()


# --- each formula against a tiny reference -------------------------------------------------


def _random_dynamics(n=9, r=2, e=5, c=3, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(n, r, e, c)).astype(np.float32)
    return TrainingDynamics(logits, rng.integers(0, c, n))


def _softmax(z):
    m = max(z)
    ex = [math.exp(v - m) for v in z]
    return [v / sum(ex) for v in ex]


def test_data_map_metrics_match_cartography_loop():
    td = _random_dynamics()
    out = datamap_metrics(td.gold_probability(), td.correct())
    for i in range(9):
        conf, var, corr = [], [], []
        for r in range(2):  # cartography's loop per row, then averaged over repeats
            probs = [_softmax(td.logits[i, r, ep].tolist())[td.gold[i]] for ep in range(5)]
            right = [int(np.argmax(td.logits[i, r, ep])) == td.gold[i] for ep in range(5)]
            mean = sum(probs) / 5
            conf.append(mean)
            var.append(math.sqrt(sum((p - mean) ** 2 for p in probs) / 5))  # np.std, ddof 0
            corr.append(sum(right) / 5)
        assert out["confidence"][i] == pytest.approx(np.mean(conf), abs=1e-6)
        assert out["variability"][i] == pytest.approx(np.mean(var), abs=1e-6)
        assert out["correctness"][i] == pytest.approx(np.mean(corr))


def _forgetting_reference(trend):
    # allenai/cartography's compute_forgetfulness, never-learned as the number of epochs
    if not any(trend):
        return len(trend)
    learnt, forgotten = False, 0
    for ok in trend:
        if learnt and not ok:
            learnt, forgotten = False, forgotten + 1
        elif not learnt and ok:
            learnt = True
    return forgotten


@pytest.mark.parametrize(
    "trend", [[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0, 1], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 0]]
)
def test_forgetting_events_match_the_reference(trend):
    c = np.asarray(trend, dtype=bool)[None, None, :]
    assert forgetting_events(c)[0] == _forgetting_reference(trend)


def test_forgetting_averages_repeats_and_matches_on_random_trends():
    rng = np.random.default_rng(3)
    c = rng.random((50, 3, 8)) < 0.5
    want = [np.mean([_forgetting_reference(list(c[i, r])) for r in range(3)]) for i in range(50)]
    np.testing.assert_allclose(forgetting_events(c), want)


def test_aum_and_el2n_match_loops():
    td = _random_dynamics()
    aum = aum_from_logits(td.logits, td.gold)
    el2n = el2n_from_probabilities(td.probabilities(), td.gold, 2)
    for i in range(9):
        margins, norms = [], []
        for r in range(2):
            for ep in range(5):
                z = td.logits[i, r, ep].tolist()
                margins.append(z[td.gold[i]] - max(v for j, v in enumerate(z) if j != td.gold[i]))
            p = _softmax(td.logits[i, r, 1].tolist())  # epoch 2, 1-based
            norms.append(math.sqrt(sum((p[j] - (j == td.gold[i])) ** 2 for j in range(3))))
        assert aum[i] == pytest.approx(np.mean(margins), abs=1e-5)
        assert el2n[i] == pytest.approx(np.mean(norms), abs=1e-6)
    with pytest.raises(ValueError, match="el2n_epoch"):
        el2n_from_probabilities(td.probabilities(), td.gold, 6)


def _small_problem(n=240, d=6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.8, size=n) > 0).astype(int)
    y[x[:, 2] > 1.2] = 2
    return x, y


def test_out_of_fold_probabilities_and_pvi_match_scikit_learn_per_fold():
    from sklearn.linear_model import LogisticRegression

    from aflite.algorithm.numerics.store import standardise

    x, y = _small_problem()
    folds = crossfit_folds(y, 4, repeats=2, rng=np.random.default_rng(0))
    probs, info = oof_probabilities(x, y, 3, folds, C=0.05)
    assert info["C"] == 0.05
    xs = standardise(x)
    want_p = np.empty((2, len(y)))
    want_null = np.empty((2, len(y)))
    for r in range(2):
        for k in range(4):
            tr, ho = folds[r] != k, folds[r] == k
            m = LogisticRegression(C=0.05, tol=1e-10, max_iter=10_000).fit(xs[tr], y[tr])
            want_p[r, ho] = m.predict_proba(xs[ho])[np.arange(ho.sum()), y[ho]]
            want_null[r, ho] = np.bincount(y[tr], minlength=3)[y[ho]] / tr.sum()
    got_p = probs[np.arange(2)[:, None], np.arange(len(y)), y[None, :]]
    np.testing.assert_allclose(got_p, want_p, atol=2e-3)
    prior = oof_prior(y, 3, folds)
    np.testing.assert_allclose(prior[np.arange(2)[:, None], np.arange(len(y)), y], want_null)
    s = score_examples(x, y, scorers=["pvi", "partial"], partial=x[:, :1], n_folds=4, repeats=2,
                       seed=0, device="cpu", C=0.05)  # fmt: skip
    # same folds as above: the call draws them first from the same seed
    np.testing.assert_array_equal(s.folds, folds)
    pvi = (-np.log2(want_null) + np.log2(want_p)).mean(axis=0)
    np.testing.assert_allclose(s.columns["pvi"], pvi, atol=5e-3)
    assert (s.columns["partial"] >= 0).all() and (s.columns["partial"] <= 1).all()


def test_auto_C_keeps_the_lowest_held_out_log_loss():
    x, y = _small_problem(n=300, d=40)
    folds = crossfit_folds(y, 5, rng=np.random.default_rng(0))
    _, info = oof_probabilities(x, y, 3, folds, C="auto")
    losses = info["log_loss"]
    assert len(losses) == 3 and losses[f"{info['C']:.6g}"] == min(losses.values())


def test_batched_training_matches_one_model_per_fold_with_autograd():
    """Full-batch steps (the row order cannot matter) against each fold's model trained
    alone: autograd gradients and Adam as in Kingma & Ba (2015), Algorithm 1."""
    import torch

    from aflite.algorithm.numerics.store import standardise

    x, y = _small_problem(n=120, d=5)
    folds = crossfit_folds(y, 3, rng=np.random.default_rng(0))
    opt = DynamicsOptions(epochs=4, batch_size=1000, lr=0.05, l2=0.01)
    td = record_dynamics(x, y, 3, folds, options=opt, device="cpu")
    xs = torch.as_tensor(standardise(x), dtype=torch.float32)
    yt = torch.as_tensor(y)
    for k in range(3):
        tr, ho = folds[0] != k, folds[0] == k
        params = [torch.zeros((5, 3), requires_grad=True), torch.zeros(3, requires_grad=True)]
        moments = [[torch.zeros_like(p), torch.zeros_like(p)] for p in params]
        for t in range(1, 5):
            w, b = params
            loss = torch.nn.functional.cross_entropy(xs[tr] @ w + b, yt[tr]) + 0.005 * (w**2).sum()
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g, m in zip(params, grads, moments):
                    m[0] = 0.9 * m[0] + 0.1 * g
                    m[1] = 0.999 * m[1] + 0.001 * g * g
                    m_hat, v_hat = m[0] / (1 - 0.9**t), m[1] / (1 - 0.999**t)
                    p -= 0.05 * m_hat / (v_hat.sqrt() + 1e-8)
                want = (xs[ho] @ w + b).numpy()
            np.testing.assert_allclose(td.logits[ho, 0, t - 1], want, atol=1e-4)


def test_regions_follow_the_documented_thresholds():
    conf = np.array([0.9, 0.9, 0.2, 0.2, 0.6, 0.4])
    var = np.array([0.01, 0.30, 0.02, 0.25, 0.04, 0.045])
    # top third by variability (0.30, 0.25) are ambiguous; the rest by confidence >= 0.5
    assert datamap_regions(conf, var).tolist() == ["easy", "ambiguous", "hard", "ambiguous",
                                                   "easy", "hard"]  # fmt: skip
    # a settled row (variability below ambiguous_min) is never ambiguous, whatever its rank
    assert datamap_regions(conf, var * 0.1).tolist() == ["easy", "easy", "hard", "hard",
                                                         "easy", "hard"]  # fmt: skip


# --- properties ---------------------------------------------------------------------------


def _rows(n=300, seed=0):
    """Text rows where 'nobody' gives label 1 away for a known third of them."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        lab = int(rng.integers(0, 2))
        words = [f"w{rng.integers(0, 12)}", f"x{rng.integers(0, 9)}"]
        if i % 3 == 0:
            words.append("nobody" if lab == 1 else "somebody")
        rows.append({"id": f"r{(i * 7919) % n:04d}", "text": " ".join(words), "label": lab})
    return rows


def test_same_seed_same_scores_other_seed_other_folds():
    x, y, _ = planted_data(n=300)
    a = score_examples(x, y, seed=3, device="cpu", epochs=3, n_partitions=8)
    b = score_examples(x, y, seed=3, device="cpu", epochs=3, n_partitions=8)
    c = score_examples(x, y, seed=4, device="cpu", epochs=3, n_partitions=8)
    for col in a.columns:
        np.testing.assert_array_equal(a.columns[col], b.columns[col])
    assert not np.array_equal(a.folds, c.folds)
    assert not np.array_equal(a.columns["aum"], c.columns["aum"])


def test_scores_stay_with_their_ids_when_rows_are_reordered():
    import pandas as pd

    import aflite

    df = pd.DataFrame(_rows())
    shuffled = df.sample(frac=1.0, random_state=5)
    for data in (df, shuffled):
        scores, corr = aflite.score_dataset(data, label="label", scorers=["pvi", "aum"],
                                            device="cpu", epochs=4)  # fmt: skip
        assert scores["id"].tolist() == data["id"].tolist()  # one row per input row, in order
        assert scores["label"].tolist() == data["label"].tolist()
        give_away = data["text"].str.contains("nobody|somebody").to_numpy()
        assert scores.pvi[give_away].quantile(0.1) > scores.pvi[~give_away].median()
        assert scores.pvi[give_away].mean() > scores.pvi[~give_away].mean() + 0.4
        assert list(corr.columns) == ["pvi", "aum"] and corr.loc["pvi", "aum"] > 0.5
    # scored in either order, the highest PVI belongs to the give-away rows, found by id
    give_away_ids = set(df.loc[df["text"].str.contains("nobody|somebody"), "id"])
    for data in (df, shuffled):
        s = aflite.score_dataset(data, label="label", scorers=["pvi"], device="cpu").scores
        assert len(set(s.nlargest(100, "pvi")["id"]) & give_away_ids) >= 70  # chance: 33


def test_groups_never_straddle_a_fold():
    y = np.arange(200) % 3
    groups = np.arange(200) // 4
    folds = crossfit_folds(y, 5, repeats=2, rng=np.random.default_rng(0), groups=groups)
    for r in range(2):
        for g in np.unique(groups):
            assert len(set(folds[r, groups == g])) == 1
        assert np.bincount(folds[r]).max() - np.bincount(folds[r]).min() <= 4
    plain = crossfit_folds(y, 5, rng=np.random.default_rng(0))
    for c in range(3):  # stratified: each class spread evenly over the folds
        counts = np.bincount(plain[0, y == c], minlength=5)
        assert counts.max() - counts.min() <= 1


@pytest.mark.slow  # about 4 s: n-grams and three fits of 6,000 rows
def test_snli_hypothesis_only_pvi_ranks_nobody_contradictions_high():
    import pandas as pd

    import aflite
    from aflite.data import bundled_snli

    df = pd.read_json(bundled_snli(), lines=True)
    scores, _ = aflite.score_dataset(df, label="label", text="hypothesis", scorers=["pvi"],
                                     device="cpu", seed=0)  # fmt: skip
    words = df["hypothesis"].str.lower().str.findall(r"[a-z]+")
    nobody = (words.apply(lambda w: "nobody" in w) & (df["label"] == "contradiction")).to_numpy()
    assert nobody.sum() >= 20
    pct = scores["pvi"].rank(pct=True).to_numpy()
    assert np.median(pct[nobody]) > 0.85
    assert scores["pvi"][nobody].mean() > 0.8  # bits of V-information over the class prior
    assert abs(scores["pvi"].mean()) < 0.5  # the slice as a whole: little usable information


# --- dynamics logged by allenai/cartography -----------------------------------------------


def _write_cartography(folder, td, order_seed=0):
    rng = np.random.default_rng(order_seed)
    folder.mkdir(parents=True, exist_ok=True)
    for ep in range(td.logits.shape[2]):
        lines = []
        for i in rng.permutation(len(td.gold)):  # each epoch in its own order
            rec = {"guid": td.ids[i], f"logits_epoch_{ep}": td.logits[i, 0, ep].tolist(),
                   "gold": int(td.gold[i])}  # fmt: skip
            lines.append(json.dumps(rec))
        (folder / f"dynamics_epoch_{ep}.jsonl").write_text("\n".join(lines) + "\n")


def test_cartography_files_load_and_score_by_id(tmp_path):
    import aflite

    rows = _rows(60)
    td = _random_dynamics(n=60, r=1, e=4)
    td.ids = [r["id"] for r in rows]
    _write_cartography(tmp_path / "run" / "training_dynamics", td)
    loaded = load_cartography_dynamics(tmp_path / "run")
    assert loaded.logits.shape == (60, 1, 4, 3)
    order = [td.ids.index(g) for g in loaded.ids]
    np.testing.assert_allclose(loaded.logits, td.logits[order], rtol=1e-6)
    np.testing.assert_array_equal(loaded.gold, td.gold[order])
    scores, _ = aflite.score_dataset(rows[::-1], label="label", dynamics=tmp_path / "run",
                                     scorers=["datamap", "aum", "forgetting", "el2n"])  # fmt: skip
    want = datamap_metrics(td.gold_probability(), td.correct())
    want_aum = aum_from_logits(td.logits, td.gold)
    for k, rid in enumerate(scores["id"]):
        i = td.ids.index(rid)
        assert scores["confidence"][k] == pytest.approx(want["confidence"][i], abs=1e-6)
        assert scores["variability"][k] == pytest.approx(want["variability"][i], abs=1e-6)
        assert scores["aum"][k] == pytest.approx(want_aum[i], abs=1e-5)
        assert scores["forgetting"][k] == forgetting_events(td.correct())[i]


def test_cartography_mistakes_are_one_line_errors(tmp_path):
    td = _random_dynamics(n=5, r=1, e=3)
    td.ids = [10, 11, 12, 13, 14]
    _write_cartography(tmp_path / "a", td)
    (tmp_path / "a" / "dynamics_epoch_1.jsonl").unlink()
    with pytest.raises(DataError, match=r"dynamics_epoch_1\.jsonl is missing"):
        load_cartography_dynamics(tmp_path / "a")
    _write_cartography(tmp_path / "b", td)
    f = tmp_path / "b" / "dynamics_epoch_2.jsonl"
    f.write_text("\n".join(f.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(DataError, match="is not in every epoch's file"):
        load_cartography_dynamics(tmp_path / "b")
    _write_cartography(tmp_path / "c", td)
    with open(tmp_path / "c" / "dynamics_epoch_0.jsonl", "a") as fh:
        fh.write("{not json\n")
    with pytest.raises(DataError, match=r"dynamics_epoch_0\.jsonl:6: not a JSON object"):
        load_cartography_dynamics(tmp_path / "c")
    with pytest.raises(DataError, match="no dynamics_epoch_N.jsonl files"):
        load_cartography_dynamics(tmp_path)
    import aflite

    _write_cartography(tmp_path / "d", td)
    rows = [{"id": 10 + i, "text": "a b", "label": i % 2} for i in range(6)]  # id 15: none
    with pytest.raises(DataError, match="d: no training dynamics for id '15'"):
        aflite.score_dataset(rows, label="label", dynamics=tmp_path / "d", scorers=["aum"])
