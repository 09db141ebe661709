"""The primal solver's preconditioner: the exact inverse of the Böhning bound against its
low-rank form (128 leading eigenvectors, one value for the rest), on the same parts.

Prints, per case, the mean and largest L-BFGS steps of one phase (m=64) and its seconds with
each form, the ratio, and which form the default rule (low-rank for parts of at most 2(d+1)
rows) takes. The scores agree to the solver's tolerance either way (the same optimum).

    OMP_NUM_THREADS=1 taskset -c 0 python benchmarks/bench_preconditioner.py
    python benchmarks/bench_preconditioner.py --cases demo,embeddings-20k
    python benchmarks/bench_preconditioner.py --smoke   # N=600, d=160, m=8: checks it runs
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _data import embedding_like, snli_labels, snli_minilm, snli_ngrams, snli_rows

import aflite
import aflite.algorithm.numerics.preconditioner as pc


def demo_features():
    from aflite.features.ngrams import ngram_features

    rows = snli_rows()
    x = ngram_features([[r["hypothesis"] for r in rows]], max_features=1024)
    return np.asarray(x, dtype=np.float32), snli_labels(rows)


CASES = {
    # name: (features, t)
    "demo": (demo_features, 600),
    "snli-ngrams-t750": (snli_ngrams, 750),
    "snli-minilm-t1500": (snli_minilm, 1500),
    "embeddings-20k": (lambda: embedding_like(20_000, 1024), 2000),
    "embeddings-40k-t4000": (lambda: embedding_like(40_000, 1024), 4000),
    "embeddings-100k-t10000": (lambda: embedding_like(100_000, 1024), 10_000),
}
SMOKE = {"embeddings-smoke": (lambda: embedding_like(600, 160), 60)}


def run(x, y, t, low_rank: bool, threads: int, m: int = 64):
    pc.LOW_RANK_T = float("inf") if low_rank else 0.0
    start = time.perf_counter()
    ps = aflite.predictability_scores(
        x, y, n_partitions=m, train_size=t, seed=0, device="cpu", threads=threads
    )
    return ps, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="N=600, d=160, m=8: checks it runs")
    args = ap.parse_args()
    cases = SMOKE if args.smoke else {name: CASES[name] for name in args.cases.split(",")}
    m = 8 if args.smoke else 64
    rule = pc.LOW_RANK_T
    x0, y0 = embedding_like(500, 64)
    aflite.predictability_scores(x0, y0, n_partitions=2, train_size=50)  # warm-up
    for name, (make, t) in cases.items():
        x, y = make()
        d1 = x.shape[1] + 1
        exact, s_exact = run(x, y, t, False, args.threads, m)
        low, s_low = run(x, y, t, True, args.threads, m)
        r = np.corrcoef(exact.scores, low.scores)[0, 1]
        default = "low-rank" if t <= rule * d1 else "exact"
        print(
            f"{name}: N={len(y):,} d={d1 - 1} t={t:,} (t/d {t / (d1 - 1):.2f}) | exact: mean "
            f"{exact.info['mean_iterations']:.1f} steps (max {exact.info['iterations']}), "
            f"{s_exact:.2f} s | low-rank: mean {low.info['mean_iterations']:.1f} "
            f"(max {low.info['iterations']}), {s_low:.2f} s | {s_exact / s_low:.2f}x | "
            f"scores r {r:.4f} | default: {default}",
            flush=True,
        )
    pc.LOW_RANK_T = rule


if __name__ == "__main__":
    main()
