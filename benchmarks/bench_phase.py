"""One AFLITE phase: the batched linear ensemble vs a loop of scikit-learn fits.

Both score the same N rows over the same m partitions (the batched run's training masks are
reused by the loop), so the score vectors are directly comparable.

    python benchmarks/bench_phase.py               # N=20,000, d=1024, m=64, t=N/10
    python benchmarks/bench_phase.py --cuda-n 550000   # also time CUDA at SNLI scale
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _data import embedding_like
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.scoring import standardise_with_bias


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--cuda-n", type=int, default=550_000)
    ap.add_argument("--top", type=int, default=500)
    args = ap.parse_args()

    x, y = embedding_like(args.n, args.d)
    t = args.n // 10
    print(
        f"N={args.n} d={args.d} classes=3 m={args.partitions} t={t} threads={torch.get_num_threads()}"
    )

    aflite.predictability_scores(x[:2000], y[:2000], n_partitions=4, train_size=200)  # warm-up
    start = time.perf_counter()
    fast = aflite.predictability_scores(
        x, y, n_partitions=args.partitions, train_size=t, seed=0, device="cpu"
    )
    t_fast = time.perf_counter() - start
    print(f"batched linear ensemble (cpu): {t_fast:8.2f} s")

    xs = standardise_with_bias(x)[:, :-1]
    correct = np.zeros(args.n)
    heldout = np.zeros(args.n)
    iters = []
    start = time.perf_counter()
    for j in range(args.partitions):
        tr = fast.train_mask[:, j]
        clf = LogisticRegression(max_iter=10_000).fit(xs[tr], y[tr])
        iters.append(int(clf.n_iter_[0]))
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
        heldout[~tr] += 1
    t_ref = time.perf_counter() - start
    ref = np.where(heldout > 0, correct / np.maximum(heldout, 1), np.nan)
    print(
        f"scikit-learn loop ({args.partitions} fits, lbfgs, median {int(np.median(iters))} iters): {t_ref:8.2f} s"
    )

    ok = ~np.isnan(ref) & ~np.isnan(fast.scores)
    r = np.corrcoef(ref[ok], fast.scores[ok])[0, 1]
    top_ref = set(np.argsort(-np.nan_to_num(ref, nan=-1), kind="stable")[: args.top])
    top_fast = set(np.argsort(-np.nan_to_num(fast.scores, nan=-1), kind="stable")[: args.top])
    overlap = len(top_ref & top_fast) / args.top
    print(f"speed-up: {t_ref / t_fast:.1f}x")
    print(f"Pearson r of scores: {r:.4f}")
    print(f"top-{args.top} overlap: {overlap:.3f}")
    print(f"representation bias: batched {np.nanmean(fast.scores):.4f}, loop {np.nanmean(ref):.4f}")

    if torch.cuda.is_available():
        xc, yc = embedding_like(args.cuda_n, args.d)
        aflite.predictability_scores(
            xc[:20000], yc[:20000], n_partitions=8, train_size=2000, device="cuda"
        )
        torch.cuda.synchronize()
        start = time.perf_counter()
        aflite.predictability_scores(
            xc, yc, n_partitions=args.partitions, train_size=args.cuda_n // 10, device="cuda"
        )
        torch.cuda.synchronize()
        print(
            f"CUDA ({torch.cuda.get_device_name()}), N={args.cuda_n}: {time.perf_counter() - start:.2f} s per phase"
        )
    else:
        print("CUDA: not available on this machine")


if __name__ == "__main__":
    main()
