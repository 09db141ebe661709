"""Do the filter defaults do real work without going below chance?

Runs the defaults of ``aflite filter`` (``aflite.PRESETS["practical"]``) on real data that
ships with the package or with scikit-learn, and evaluates the kept rows against a random
subset of the same size, with the filter's own features and model and with a different feature
set and model:

- the bundled SNLI slice, hypothesis only (3 classes, word n-grams; grouped by premise);
- its entailment/contradiction subset (2 classes, sentiment-like);
- scikit-learn's digits (10 classes, 8x8 images as pixels).

    python benchmarks/bench_defaults.py [--quick]
    python benchmarks/bench_defaults.py --smoke     # the first set, 400 rows, m=8: checks it runs
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.naive_bayes import MultinomialNB

import aflite
from aflite.data import bundled_snli
from aflite.features import ngram_features


def _cv(model, x, y) -> float:
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.mean(cross_val_score(model, x, y, cv=folds)))


def run(name, x, y, evaluations, groups=None, **options) -> None:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = aflite.filter(
            x,
            y,
            groups=groups,
            seed=0,
            progress=False,
            options=aflite.PRESETS["practical"],
            **options,
        )
    seconds = time.perf_counter() - start
    kept = np.zeros(len(y), bool)
    kept[res.kept] = True
    rnd = np.zeros(len(y), bool)
    rnd[np.random.default_rng(0).choice(len(y), kept.sum(), replace=False)] = True
    chance = np.unique(y[kept], return_counts=True)[1].max() / kept.sum()
    print(
        f"{name}: kept {kept.sum()} of {len(y)} in {len(res.history)} phases ({seconds:.1f} s), "
        f"stop={res.stop_reason}, bias {res.initial_bias:.3f} -> {res.final_bias:.3f}, "
        f"chance {chance:.3f}"
    )
    for label, xe, model in evaluations:
        acc_kept, acc_rnd = _cv(model, xe[kept], y[kept]), _cv(model, xe[rnd], y[rnd])
        flag = "BELOW CHANCE" if acc_kept < chance - 0.05 else ""
        print(f"  {label:<46} random {acc_rnd:.3f}  kept {acc_kept:.3f}  {flag}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="first 3,000 SNLI pairs only")
    ap.add_argument("--smoke", action="store_true", help="the first set, 400 rows, m=8")
    args = ap.parse_args()
    print("defaults:", aflite.PRESETS["practical"])
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()]
    small = {"n_partitions": 8} if args.smoke else {}
    max_iter = 100 if args.smoke else 2000  # the evaluator's fits
    if args.smoke:
        print("smoke run: the first set only, its first 400 rows, m=8")
        rows = rows[:400]
    elif args.quick:
        rows = rows[:3000]
    hyp = [r["hypothesis"] for r in rows]
    y = np.array([r["label"] for r in rows])
    same = ngram_features([hyp])
    chars = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2).fit_transform(hyp)
    evals = [
        ("logreg, word 1+2-grams (the filter's)", same, LogisticRegression(max_iter=max_iter)),
        ("naive Bayes, char 2-4-gram counts", chars, MultinomialNB()),
    ]
    groups = np.array([r["premise"] for r in rows])
    run("SNLI hypothesis-only", same, y, evals, groups=groups, **small)
    if args.smoke:
        return

    sel = np.flatnonzero(y != "neutral")
    words = CountVectorizer(ngram_range=(1, 2)).fit_transform([hyp[i] for i in sel])
    x2 = ngram_features([[hyp[i] for i in sel]])
    evals2 = [
        ("logreg, word 1+2-grams (the filter's)", x2, LogisticRegression(max_iter=2000)),
        ("naive Bayes, word counts", words, MultinomialNB()),
    ]
    run("SNLI entailment vs contradiction", x2, y[sel], evals2)

    d = load_digits()
    evals3 = [
        ("logreg, pixels (the filter's)", d.data, LogisticRegression(max_iter=2000)),
        ("naive Bayes, pixel counts", d.data, MultinomialNB()),
    ]
    run("digits", d.data.astype(np.float32), d.target, evals3)


if __name__ == "__main__":
    main()
