"""Would bfloat16 products pay on this CPU? The block pass's two products in float32 and in
bfloat16, and what bfloat16 would cost in accuracy, on the bundled SNLI slice.

Printed: the seconds of one block pass's products (forward + gradient, in the pass's
class-major layout) at the phase's real shapes in each precision; the share of a phase's
L-BFGS iterations spent above a relative gradient of 1e-2 (the only ones a bfloat16
gradient, good to ~3 digits, could serve); and the share of held-out predictions that
change when the prediction pass runs in bfloat16.

With ``--case phase-20k`` (synthetic embeddings, N=20,000, d=1,024, m=64, t=2,000): the
float32 phase's seconds, and what the same phase would take if every product of every pass
ran in bfloat16 (the phase's time less its passes times the per-pass saving): a bound no
bfloat16 scheme can beat, since the last iterations need float32 gradients.

    python benchmarks/bench_bf16.py [--rows 6000]
    python benchmarks/bench_bf16.py --case phase-20k
    python benchmarks/bench_bf16.py --smoke     # 400 rows (phase-20k: N=2,000, d=64), m=8
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _data import embedding_like, snli_rows

import aflite
from aflite.algorithm.loop.partitions import block_design
from aflite.algorithm.numerics.blocks import default_block_rows, plan_blocks
from aflite.algorithm.numerics.store import FeatureStore
from aflite.features.ngrams import ngram_features


def timed(fn, reps=20):
    fn()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def pass_products(x, y, m, t, c, reps=20):
    """Seconds of one block pass's products in float32 and in bfloat16, and its plan."""
    n, d = x.shape
    cpu = torch.device("cpu")
    store = FeatureStore(x, cpu)
    gen = torch.Generator().manual_seed(0)
    design = block_design(n, m, t, block_rows=default_block_rows(d, cpu), generator=gen, device=cpu)
    plan = plan_blocks(store, torch.as_tensor(y), design, torch.arange(n), c, ones=True)
    fp32 = bf16 = 0.0
    for task in plan.tasks:
        xt = plan.rows_ones(task)  # (g, b, d+1)
        g, b, d1 = xt.shape
        sc = task.members.shape[1] * c
        w = torch.randn(g, sc, d1) * 0.01  # class-major weights, as the pass lays them out
        r = torch.randn(g, sc, b)
        fp32 += timed(
            lambda xt=xt, w=w, r=r: (torch.bmm(w, xt.transpose(1, 2)), torch.bmm(r, xt)), reps
        )
        xb, wb, rb = xt.bfloat16(), w.bfloat16(), r.bfloat16()
        bf16 += timed(
            lambda xb=xb, wb=wb, rb=rb: (torch.bmm(wb, xb.transpose(1, 2)), torch.bmm(rb, xb)), reps
        )
    return fp32, bf16, store, plan


def phase_20k(
    n: int = 20_000, d: int = 1024, m: int = 64, repeats: int = 3, reps: int = 20
) -> None:
    x, y = embedding_like(n, d)
    t, c = n // 10, 3
    fp32, bf16, _, _ = pass_products(x, y, m, t, c, reps)
    aflite.predictability_scores(x[:500], y[:500], n_partitions=2, train_size=50, threads=1)
    best, info = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        ps = aflite.predictability_scores(x, y, n_partitions=m, train_size=t, seed=0, threads=1)
        best, info = min(best, time.perf_counter() - start), ps.info
    passes = info["iterations"] + 1  # every pass runs over all members until the phase ends
    bound = best - passes * (fp32 - bf16)
    print(
        f"synthetic embeddings N={n:,} d={d:,} t={t} m={m}: block pass products float32 "
        f"{fp32 * 1e3:.1f} ms, bfloat16 {bf16 * 1e3:.1f} ms ({fp32 / bf16:.1f}x)"
    )
    print(
        f"float32 phase {best:.2f} s (best of {repeats}), {passes} passes, products "
        f"{passes * fp32:.2f} s; every product in bfloat16: at least {bound:.2f} s "
        f"({best / bound:.2f}x faster)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, help="SNLI rows (default 6,000; 400 with --smoke)")
    ap.add_argument("--case", choices=("snli", "phase-20k"), default="snli")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, m=8: checks it runs")
    args = ap.parse_args()
    args.rows = args.rows or (400 if args.smoke else 6000)
    torch.set_num_threads(1)
    reps = 2 if args.smoke else 20
    if args.case == "phase-20k":
        phase_20k(*((2000, 64, 8, 1) if args.smoke else ()), reps=reps)
        return
    rows = snli_rows()[: args.rows]
    x = ngram_features([[r["hypothesis"] for r in rows]])
    y = np.unique([r["label"] for r in rows], return_inverse=True)[1]
    n, d = x.shape
    t, m, c = n // 10, 8 if args.smoke else 64, 3
    fp32, bf16, store, plan = pass_products(x, y, m, t, c, reps)
    print(
        f"SNLI hypothesis n-grams N={n} d={d} t={t} m={m}: block pass products "
        f"float32 {fp32 * 1e3:.1f} ms, bfloat16 {bf16 * 1e3:.1f} ms ({fp32 / bf16:.1f}x)"
    )

    # iterations above a relative gradient of 1e-2: solve once at 1e-2, once at the default
    loose = aflite.predictability_scores(
        x, y, n_partitions=m, train_size=t, seed=0, threads=1, model=aflite.LinearEnsemble(tol=1e-2)
    )
    full = aflite.predictability_scores(x, y, n_partitions=m, train_size=t, seed=0, threads=1)
    share = loose.info["mean_iterations"] / full.info["mean_iterations"]
    print(
        f"mean iterations to 1e-2: {loose.info['mean_iterations']:.0f} of "
        f"{full.info['mean_iterations']:.0f} to the default tol ({share:.0%} of the phase)"
    )

    # held-out predictions that change in bfloat16, with the converged classifiers
    from aflite.algorithm import LinearEnsemble
    from aflite.algorithm.models.linear.ensemble import fit_ensemble

    ens, _ = fit_ensemble(store, torch.as_tensor(y), None, c, LinearEnsemble(), plan=plan)
    theta, neg = ens.theta, ens.neg
    flips = total = 0
    for task in plan.tasks:
        xt = plan.rows(task).reshape(-1, d)
        w = theta[:d].reshape(d, m * c)
        bias = (theta[d] + neg).reshape(m * c)
        p32 = torch.addmm(bias, xt, w).view(-1, m, c).argmax(2)
        p16 = (xt.bfloat16() @ w.bfloat16()).float().add(bias).view(-1, m, c).argmax(2)
        held = task.held[:, None, :].expand(*task.w.shape, m).reshape(-1, m) > 0
        real = (task.w.reshape(-1) > 0)[:, None] & held
        flips += int(((p32 != p16) & real).sum())
        total += int(real.sum())
    print(
        f"held-out predictions changed by a bfloat16 prediction pass: {flips} of {total} "
        f"({flips / total:.2%})"
    )


if __name__ == "__main__":
    main()
