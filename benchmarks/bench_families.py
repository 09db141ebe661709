"""Does the exact least-squares family (``model="ridge"``) measure what logistic regression
measures? Its scores against logistic regression on the *same* partitions, beside
how closely each family agrees with itself across two seeds.

For every data set: one phase (m partitions, t = 10% of the rows) of ``linear`` (logistic
regression at its default tolerance, 1e-4: its float32 solver stalls near there, and a
classifier that ends more than 10x above its tolerance is left out of every score, so a
tighter one leaves most of them out; the count left out is printed) and of ``ridge`` at each
``--alphas`` value, for seeds 0 and
1, on independent uniform parts, which the same seed draws alike for both families (block
partitions are dealt in family-sized blocks). Printed per data set: Pearson r and top-10%
overlap of ridge against logistic on the same parts, logistic seed 0 against seed 1, ridge
seed 0 against seed 1, and the mean scores (the representation bias) of both.

    python benchmarks/bench_families.py [--cases demo,pairs,minilm,snli2,planted,digits,emb3,emb5,emb20]
        [--alphas 0.1,0.3,1] [--partitions 64]
    python benchmarks/bench_families.py --smoke    # planted, N=400, m=8, alpha 1: checks it runs
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _data import embedding_like, snli_minilm, snli_ngrams, snli_rows

import aflite


def _demo():
    rows = snli_rows()
    x = aflite.featurize(rows, text="hypothesis", label="label")
    return x.astype(np.float32), np.unique([r["label"] for r in rows], return_inverse=True)[1]


def _snli2():
    x, y = _demo()
    keep = y != 1  # entailment against contradiction
    return x[keep], (y[keep] == 2).astype(int)


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data.astype(np.float32), d.target


def _planted(n=4000, d=64, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, d)).astype(np.float32)
    art = rng.random(n) < 0.3
    x[art, 0] += 3.0 * (y[art] - 1)
    return x, y


CASES = {
    "demo": ("bundled SNLI slice, hypothesis n-grams", _demo),
    "pairs": ("bundled SNLI slice, premise+hypothesis n-grams", lambda: snli_ngrams()),
    "minilm": ("bundled SNLI slice, MiniLM pairs", lambda: snli_minilm()),
    "snli2": ("entailment vs contradiction, hypothesis n-grams", _snli2),
    "planted": ("planted artifact, 3 classes", _planted),
    "digits": ("scikit-learn digits, 10 classes", _digits),
    "emb3": ("embedding-like, 3 classes", lambda: embedding_like(6000, 256, n_classes=3)),
    "emb5": ("embedding-like, 5 classes", lambda: embedding_like(6000, 256, n_classes=5)),
    "emb20": ("embedding-like, 20 classes", lambda: embedding_like(6000, 256, n_classes=20)),
}


def agree(a: np.ndarray, b: np.ndarray, share: float = 0.1) -> tuple[float, float]:
    k = max(1, int(share * len(a)))
    top_a = set(np.argsort(-a, kind="stable")[:k])
    top_b = set(np.argsort(-b, kind="stable")[:k])
    return float(np.corrcoef(a, b)[0, 1]), len(top_a & top_b) / k


def phase(x, y, model, seed, m):
    return aflite.predictability_scores(
        x, y, n_partitions=m, train_size=0.1, seed=seed, model=model, partitions="uniform"
    )


def scores(x, y, model, seed, m):
    return phase(x, y, model, seed, m).scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--alphas", default="0.1,0.3,1")
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--json", default=None, help="write the figures here too")
    ap.add_argument("--smoke", action="store_true", help="planted, N=400, m=8, alpha 1")
    args = ap.parse_args()
    cases = {name: CASES[name] for name in args.cases.split(",")}
    if args.smoke:
        cases = {"planted": ("planted artifact, 3 classes", lambda: _planted(400, 16))}
        args.alphas, args.partitions = "1", 8
    alphas = [float(a) for a in args.alphas.split(",")]
    m = args.partitions
    out = {}
    for name, (what, make) in cases.items():
        x, y = make()
        t = int(round(0.1 * len(y)))
        runs = [phase(x, y, aflite.LinearEnsemble(), s, m) for s in (0, 1)]
        logistic = [ps.scores for ps in runs]
        left_out = sum(ps.info.get("n_left_out", 0) for ps in runs)
        r_ll, top_ll = agree(*logistic)
        print(
            f"{name}: {what}; N={len(y)} d={x.shape[1]} classes={len(np.unique(y))} "
            f"t={t} (t/d {t / x.shape[1]:.2f}), m={m}",
            flush=True,
        )
        print(
            f"  logistic seed 0 vs 1: r {r_ll:.3f}, top-10% {top_ll:.2f}; "
            f"bias {logistic[0].mean():.3f}; classifiers left out {left_out} of {2 * m}",
            flush=True,
        )
        row = {"logistic_seeds": [r_ll, top_ll], "t_over_d": t / x.shape[1]}
        for alpha in alphas:
            ridge = [scores(x, y, aflite.RidgeEnsemble(alpha=alpha), s, m) for s in (0, 1)]
            r_rl, top_rl = agree(ridge[0], logistic[0])
            r_rr, top_rr = agree(*ridge)
            ok = "agrees" if r_rl >= r_ll else "does not agree"
            print(
                f"  ridge alpha={alpha:g}: vs logistic on the same parts r {r_rl:.3f}, top-10% "
                f"{top_rl:.2f} ({ok} as closely as two logistic seeds); ridge seed 0 vs 1 r "
                f"{r_rr:.3f}, top-10% {top_rr:.2f}; bias {ridge[0].mean():.3f}",
                flush=True,
            )
            row[f"ridge_{alpha:g}"] = {"vs_logistic": [r_rl, top_rl], "seeds": [r_rr, top_rr]}
        out[name] = row
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
