"""AFLITE end to end at SNLI scale: N=550,000, d=1024, 3 classes, m=64, t=55,000, k=500,
down to n=92,000 (about 916 phases).

Prints seconds per phase and in total, and the fraction of the device's measured matmul
throughput the filter reached (same precision, measured in the same run). The threshold is 0 so
the run always goes the whole way to the target size.

    python benchmarks/bench_snli_scale.py                       # CUDA when available
    python benchmarks/bench_snli_scale.py --tf32                # TF32 matmuls on Ampere/Hopper
    python benchmarks/bench_snli_scale.py --device cpu --n 20000 --target 12000 --train 2000 --slice 500
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _data import embedding_like

import aflite


def matmul_peak(device: torch.device, n: int = 8192, reps: int = 10) -> float:
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=550_000)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--target", type=int, default=92_000)
    ap.add_argument("--train", type=int, default=55_000)
    ap.add_argument("--slice", type=int, default=500)
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (CUDA)")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU"
    x, y = embedding_like(args.n, args.d)
    print(
        f"{name}: N={args.n:,} d={args.d} m={args.partitions} t={args.train:,} k={args.slice} "
        f"-> n={args.target:,}; tf32={args.tf32}"
    )
    peak = matmul_peak(device, 8192 if device.type == "cuda" else 2048)
    print(f"measured matmul peak: {peak / 1e12:.1f} TFLOP/s")

    # warm-up (CUDA context, kernels)
    aflite.filter(
        x[:20_000],
        y[:20_000],
        target_size=19_000,
        n_partitions=8,
        train_size=2000,
        slice_size=500,
        threshold=0.0,
        device=device,
        progress=False,
    )
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    res = aflite.filter(
        x,
        y,
        target_size=args.target,
        n_partitions=args.partitions,
        train_size=args.train,
        slice_size=args.slice,
        threshold=0.0,
        device=device,
        progress=True,
        score_kept=False,
    )
    if device.type == "cuda":
        torch.cuda.synchronize()
    total = time.perf_counter() - start
    per_phase = np.array([h.seconds for h in res.history])
    # the products each phase's solver counted (block passes, preconditioner, predictions)
    flops = sum(h.solver.get("flops", 0.0) for h in res.history)
    print(f"phases: {len(res.history)}; kept {len(res.kept):,}; stop: {res.stop_reason}")
    print(
        f"seconds per phase: mean {per_phase.mean():.3f}, median {np.median(per_phase):.3f}, "
        f"first {per_phase[0]:.3f}, last {per_phase[-1]:.3f}"
    )
    print(
        f"total: {total:.1f} s; matmul work {flops / 1e12:.1f} TFLOP at {flops / total / 1e12:.1f} TFLOP/s "
        f"= {flops / total / peak:.0%} of the measured peak"
    )


if __name__ == "__main__":
    main()
