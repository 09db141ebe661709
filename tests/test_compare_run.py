"""The compare experiment's one run loop (rows and items alike): what it fits, scores and
records per seed, checked on a stub front end against the filter called directly."""

from __future__ import annotations

import numpy as np
import pytest

from aflite.algorithm import PRESETS, FilterOptions
from aflite.experiments import compare_run
from aflite.experiments.compare_run import PreparedCompare, run_compare
from aflite.experiments.results import FILTERED, FULL, RANDOM
from aflite.experiments.sets import LabelledTexts
from aflite.experiments.sizes import check_sizes


def _planted(n, seed):
    """Two classes; half the rows carry the label in feature 0 (an artifact to filter)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    phi = rng.normal(size=(n, 6))
    phi[: n // 2, 0] += 4 * (2 * y[: n // 2] - 1)
    return phi, y.astype(str)


@pytest.fixture(scope="module")
def run():
    mp = pytest.MonkeyPatch()
    filtered = []  # every call of the filter: its arguments and result

    def spy(phi, y, **kw):
        res = real_filter(phi, y, **kw)
        filtered.append((phi, y, kw, res))
        return res

    real_filter = compare_run.adversarial_filter
    mp.setattr(compare_run, "adversarial_filter", spy)
    phi_tr, y_tr = _planted(120, 1)
    phi_dv, y_dv = _planted(60, 2)
    dev = LabelledTexts({"t": [str(i) for i in range(60)]}, y_dv)
    options = FilterOptions.of(PRESETS["practical"], n_partitions=8, min_bias=None, model="linear")
    calls = {"fit": [], "filtered_dev": [], "predicted": []}

    def fit(name, idx, seed):
        calls["fit"].append((name, idx.tolist(), seed))
        return name

    def score(model, set_name, entry, predicted):
        # the predictions dict is one per model and training set, shared by its sets
        calls["predicted"].append((model, set_name, sorted(predicted)))
        predicted[set_name] = np.zeros(len(entry[0]))
        return float(len(entry[0]))

    def filtered_dev(kept):
        calls["filtered_dev"].append(kept.tolist())
        return dev.subset(kept), phi_dv[kept], "own"

    prep = PreparedCompare(
        phi_train=phi_tr, y_train=y_tr, groups_train=None,
        phi_dev=phi_dv, y_dev=y_dv, groups_dev=None,
        options=options, dev_options=check_sizes(options, 120, 60),
        fixed={"dev": (dev, phi_dv, "own"), "other": (dev.subset(np.arange(9)), phi_dv[:9], "x")},
        evaluators=["a", "b"], fit=fit, score=score, filtered_dev=filtered_dev,
        chance=lambda entry: 0.25 if entry[2] == "x" else 0.5,
        gold=lambda entry: entry[0].labels, warm_up=3, details={"kind": "stub"},
    )  # fmt: skip
    try:
        res = run_compare(prep, seed=5, seeds=2, device="cpu", progress=False)
    finally:
        mp.undo()
    return res, calls, prep, filtered


def test_each_run_filters_as_the_filter_does_and_fits_each_training_set(run):
    res, calls, prep, filtered = run
    assert len(filtered) == 4  # D and dev, per run
    assert res.seeds == [5, 6] and res.eval_sets == ["dev", "dev (filtered)", "other"]
    assert res.to_dict()["details"] == {"kind": "stub"}
    fits = iter(calls["fit"])
    # D's models are fitted once, with the first seed, before any run
    assert [next(fits) for _ in range(2)] == [(e, list(range(120)), 5) for e in ("a", "b")]
    for run_seed, r in zip((5, 6), res.runs):
        (phi, y, kw, res_d), (phi_dev, y_dev, kw_dev, res_dev) = filtered[2 * (run_seed - 5) :][:2]
        common = dict(device="cpu", progress=False, seed=run_seed, groups=None, ids=None)
        # the options objects, handed to the filter as made
        assert (
            phi is prep.phi_train and y is prep.y_train and kw == {"options": prep.options} | common
        )
        assert kw["options"] is prep.options and kw_dev["options"] is prep.dev_options
        assert phi_dev is prep.phi_dev and y_dev is prep.y_dev
        assert kw_dev == {"options": prep.dev_options} | common
        want, want_dev = res_d.kept, res_dev.kept
        assert 0 < len(want) < 120 and len(want_dev) < 60  # something was removed
        assert calls["filtered_dev"][run_seed - 5] == want_dev.tolist()
        rand = np.random.default_rng(run_seed).choice(120, len(want), replace=False)
        for ev in ("a", "b"):
            assert next(fits) == (ev, sorted(rand.tolist()), run_seed)
            assert next(fits) == (ev, want.tolist(), run_seed)
        assert [(x["evaluator"], x["train"]) for x in r["rows"]] == [
            (e, t) for e in ("a", "b") for t in (FULL, RANDOM, FILTERED)
        ]
        assert r["sizes"] == {FULL: 120, RANDOM: len(want), FILTERED: len(want), "dev": 60,
                              "dev (filtered)": len(want_dev), "other": 9, "warm-up": 3}  # fmt: skip
        assert r["rows"][0]["dev (filtered)"] == len(want_dev)
        assert r["majority"] == {"dev": 0.5, "dev (filtered)": 0.5, "other": 0.25}
        kept_y = prep.y_train[want]
        assert r["label_counts"][FILTERED] == {c: int((kept_y == c).sum()) for c in ("0", "1")}
        assert r["label_counts"]["other"] == {"0": 5, "1": 4}
        assert set(r["bias"]) == {"D", "dev"}
    assert next(fits, None) is None


def test_a_models_sets_share_one_predictions_dict(run):
    calls = run[1]
    names = ["dev", "dev (filtered)", "other"]
    per_model = [calls["predicted"][i : i + 3] for i in range(0, len(calls["predicted"]), 3)]
    assert len(per_model) == 2 * 2 * 3  # seeds x evaluators x training sets
    for block in per_model:
        assert [c[2] for c in block] == [names[:k] for k in range(3)]
