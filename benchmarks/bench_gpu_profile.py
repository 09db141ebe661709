"""Where the time of two SNLI-scale phases goes on CUDA (torch.profiler): the kernels, the
host-device copies and the synchronisations.

    python benchmarks/bench_gpu_profile.py                  # N=550,000, d=1,024, m=64
    python benchmarks/bench_gpu_profile.py --model ridge    # the exact family
    python benchmarks/bench_gpu_profile.py --smoke          # N=2,000, d=16, m=8: checks it runs

With ``--smoke`` and no CUDA the two phases are profiled on the CPU.
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
    ap.add_argument("--n", type=int, help="N (default 550,000; 2,000 with --smoke)")
    ap.add_argument("--d", type=int, help="d (default 1,024; 16 with --smoke)")
    ap.add_argument(
        "--partitions", type=lambda v: v if v == "auto" else int(v), help="m (64; 8 with --smoke)"
    )
    ap.add_argument("--model", default="auto")
    ap.add_argument("--rows", type=int, default=22, help="rows of each table")
    ap.add_argument("--smoke", action="store_true", help="N=2,000, d=16, m=8: checks it runs")
    args = ap.parse_args()
    n = args.n = args.n or (2000 if args.smoke else 550_000)
    args.d = args.d or (16 if args.smoke else 1024)
    args.partitions = args.partitions or (8 if args.smoke else 64)
    cuda = torch.cuda.is_available() or not args.smoke
    if not cuda:
        print("no CUDA: the two phases are profiled on the CPU")
    x, y = embedding_like(n, args.d)
    kw = dict(
        n_partitions=args.partitions,
        train_size=n // 10,
        slice_size=n // 20,
        threshold=0.0,
        device="cuda" if cuda else "cpu",
        model=args.model,
        progress=False,
        score_kept=False,
        copy=False,
    )
    warm = min(20_000, n // 2)
    small = dict(kw, n_partitions=8, train_size=warm // 10, slice_size=warm // 40, copy=True)
    aflite.filter(x[:warm], y[:warm], target_size=warm * 19 // 20, **small)  # kernels, context
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        res = aflite.filter(x, y, target_size=n - 2 * (n // 20), **kw)
        sync()
        total = time.perf_counter() - start
    name = torch.cuda.get_device_name() if cuda else "CPU"
    print(
        f"{name}: N={n:,} d={args.d} model={args.model}: two phases "
        f"{total:.2f} s (upload and set-up included), phases "
        f"{[round(h.seconds, 3) for h in res.history]} s"
    )
    ka = prof.key_averages()
    if cuda:
        print(
            ka.table(sort_by="self_cuda_time_total", row_limit=args.rows, max_name_column_width=60)
        )
    print(ka.table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=60))


if __name__ == "__main__":
    main()
