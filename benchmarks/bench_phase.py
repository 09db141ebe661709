"""One AFLITE phase: the batched solver vs loops of scikit-learn fits, at equal accuracy.

For every case the batched ensemble scores the rows (m=64 partitions); a loop of scikit-learn
``LogisticRegression`` fits on the *same* partitions, run to a tight tolerance, is the
converged reference. Printed per case: Pearson r and top-500 overlap of the scores with the
reference, the solver's iterations and residual, the seconds of each, and two speed ratios:
against the converged loop, and against a loop whose tolerance was loosened until it agrees
with the reference as well as aflite does (the fair ratio at equal accuracy).

    python benchmarks/bench_phase.py                        # every case, full size (~1 h)
    python benchmarks/bench_phase.py --cases snli-ngrams-t300,phase-20k
    python benchmarks/bench_phase.py --quick                # smaller sizes, m=16

The last case (N=20,000, d=1024) also prints the phase's arithmetic rate against the
machine's sgemm peak measured in the same run.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _data import embedding_like, snli_minilm, snli_ngrams
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.storage import standardise

TIGHT = 1e-6
LOOSE = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6)


def _offset(make, value):
    def f():
        x, y = make()
        return x.astype(np.float64) + value, y

    return f


def _rows(make, n):
    def f():
        x, y = make()
        return x[:n], y[:n]

    return f


CASES = {
    # name: (features, t as rows or a fraction of N)
    "snli-ngrams-t300": (snli_ngrams, 300),
    "snli-ngrams-t1000": (snli_ngrams, 1000),
    "snli-ngrams-t3000": (snli_ngrams, 3000),
    "snli-minilm": (snli_minilm, 0.1),
    "synthetic-wide": (lambda: embedding_like(2000, 2000), 200),
    "classes-20": (lambda: embedding_like(6000, 256, n_classes=20), 0.1),
    "offset-1e4": (_offset(snli_minilm, 1e4), 0.1),
    "phase-20k": (lambda: embedding_like(20_000, 1024), 0.1),
}


def sklearn_loop(xs, y, mask, tol):
    correct = np.zeros(len(y))
    held = np.zeros(len(y))
    iters = []
    start = time.perf_counter()
    for j in range(mask.shape[1]):
        tr = mask[:, j]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LogisticRegression(tol=tol, max_iter=100_000).fit(xs[tr], y[tr])
        iters.append(int(clf.n_iter_[0]))
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
        held[~tr] += 1
    return correct / np.maximum(held, 1), time.perf_counter() - start, int(np.median(iters))


def agreement(ref, scores, top=500):
    r = float(np.corrcoef(ref, scores)[0, 1])
    a = set(np.argsort(-ref, kind="stable")[:top])
    b = set(np.argsort(-scores, kind="stable")[:top])
    return r, len(a & b) / top


def sgemm_peak(n=4096, reps=3):
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def run_case(name, make, t_spec, m, top):
    x, y = make()
    n, d = x.shape
    t = int(round(t_spec * n)) if isinstance(t_spec, float) else t_spec
    aflite.predictability_scores(x[:500], y[:500], n_partitions=2, train_size=50)  # warm-up
    start = time.perf_counter()
    ps = aflite.predictability_scores(x, y, n_partitions=m, train_size=t, seed=0, device="cpu")
    t_ours = time.perf_counter() - start
    info = ps.info
    xs = standardise(x)
    ref, t_ref, it_ref = sklearn_loop(xs, y, ps.train_mask, TIGHT)
    r, ov = agreement(ref, ps.scores, top)
    print(
        f"{name}: N={n} d={d} classes={len(np.unique(y))} m={m} t={t} | aflite {info['solver']}: "
        f"{t_ours:.2f} s, {info['iterations']} iterations (mean {info['mean_iterations']:.0f}), "
        f"residual {info['residual']:.1e} | r={r:.4f} top-{top}={ov:.3f}",
        flush=True,
    )
    print(f"  scikit-learn loop, tol={TIGHT:g} (converged, median {it_ref} iterations): "
          f"{t_ref:.1f} s -> {t_ref / t_ours:.1f}x", flush=True)
    for tol in LOOSE:
        scores, t_loose, it = sklearn_loop(xs, y, ps.train_mask, tol)
        r_l, ov_l = agreement(ref, scores, top)
        if r_l >= r and ov_l >= ov:
            print(f"  scikit-learn loop loosened to tol={tol:g} (median {it} iterations), "
                  f"r={r_l:.4f} top-{top}={ov_l:.3f}: {t_loose:.1f} s -> {t_loose / t_ours:.1f}x "
                  "at equal accuracy", flush=True)
            break
    else:
        print("  no loosened tolerance reached aflite's agreement", flush=True)
    return t_ours, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="1/4 of the rows, m=16, top-100")
    args = ap.parse_args()
    m, top = (16, 100) if args.quick else (args.partitions, 500)
    print(f"threads={torch.get_num_threads()} float32, aflite {aflite.__version__}, "
          f"LinearEnsemble defaults: {aflite.LinearEnsemble()}", flush=True)
    for name in args.cases.split(","):
        make, t_spec = CASES[name]
        if args.quick:
            full_make = make
            make = lambda full_make=full_make: _shrink(full_make)  # noqa: E731
            t_spec = t_spec if isinstance(t_spec, float) else max(20, t_spec // 4)
        t_ours, info = run_case(name, make, t_spec, m, top)
        if name == "phase-20k":
            peak = sgemm_peak()
            rate = info["flops"] / t_ours
            print(f"  phase arithmetic {rate / 1e9:.0f} GFLOP/s = {rate / peak:.0%} of this "
                  f"machine's sgemm peak ({peak / 1e9:.0f} GFLOP/s, 4096^3)", flush=True)


def _shrink(make):
    x, y = make()
    n = len(y) // 4
    return x[:n], y[:n]


if __name__ == "__main__":
    main()
