"""Where the time of two SNLI-scale phases goes on CUDA (torch.profiler): the kernels, the
host-device copies and the synchronisations.

    python benchmarks/bench_gpu_profile.py                  # N=550,000, d=1,024, m=64
    python benchmarks/bench_gpu_profile.py --model ridge    # the exact family
"""

from __future__ import annotations

import argparse
import time

import torch
from _data import embedding_like
from torch.profiler import ProfilerActivity, profile

import aflite


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=550_000)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--partitions", type=lambda v: v if v == "auto" else int(v), default=64)
    ap.add_argument("--model", default="auto")
    ap.add_argument("--rows", type=int, default=22, help="rows of each table")
    args = ap.parse_args()
    n = args.n
    x, y = embedding_like(n, args.d)
    kw = dict(
        n_partitions=args.partitions,
        train_size=n // 10,
        slice_size=n // 20,
        threshold=0.0,
        device="cuda",
        model=args.model,
        progress=False,
        score_kept=False,
        copy=False,
    )
    small = dict(kw, n_partitions=8, train_size=2000, slice_size=500, copy=True)
    aflite.filter(x[:20_000], y[:20_000], target_size=19_000, **small)  # kernels, context
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        res = aflite.filter(x, y, target_size=n - 2 * (n // 20), **kw)
        torch.cuda.synchronize()
        total = time.perf_counter() - start
    print(
        f"{torch.cuda.get_device_name()}: N={n:,} d={args.d} model={args.model}: two phases "
        f"{total:.2f} s (upload and set-up included), phases "
        f"{[round(h.seconds, 3) for h in res.history]} s"
    )
    ka = prof.key_averages()
    print(ka.table(sort_by="self_cuda_time_total", row_limit=args.rows, max_name_column_width=60))
    print(ka.table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=60))


if __name__ == "__main__":
    main()
