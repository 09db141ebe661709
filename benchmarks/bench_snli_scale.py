"""AFLITE end to end at SNLI scale: N=550,000, d=1024, 3 classes, with the command line's
sizes (m=64, t=10%, k=5% of the input, down to n=50%: 10 phases).

Prints seconds per phase and in total, the fraction of the device's measured matmul throughput
the filter reached (same precision, measured in the same run), and the peak resident memory
against the size of the features. The threshold is 0 so the run always goes the whole way to
the target size. ``--schedule paper`` runs the WinoGrande schedule instead (t=55,000, k=500,
down to n=92,000: about 916 phases).

    python benchmarks/bench_snli_scale.py                       # CUDA when available
    python benchmarks/bench_snli_scale.py --device cpu          # the CLI's sizes on the CPU
    python benchmarks/bench_snli_scale.py --tf32                # TF32 matmuls on Ampere/Hopper
    python benchmarks/bench_snli_scale.py --model linear        # logistic regression
    python benchmarks/bench_snli_scale.py --device cpu --n 2000000 --memmap /tmp/x.npy
        # the features written to an .npy first and filtered from its memory map
    python benchmarks/bench_snli_scale.py --device cpu --n 20000 --schedule paper --target 12000 --train 2000
    python benchmarks/bench_snli_scale.py --smoke               # N=4,000, d=64, m=8, CPU

With ``--smoke`` the paper schedule is scaled to the smaller input: t=10% of N, k=N/40, down
to N - 4k (four phases).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from _data import embedding_like

import aflite
from aflite.config.presets import PRESETS


def matmul_peak(device: torch.device, n: int = 8192, reps: int = 10) -> float:
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    _reset_peak()
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - start)


def _status_bytes(key: str) -> int:
    """A memory figure of this process from /proc/self/status (Linux), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def _reset_peak() -> None:
    # "5" resets the peak resident size (VmHWM) to the current one, so the peak is the
    # filter's own and not the generator's temporaries
    Path("/proc/self/clear_refs").write_text("5")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, help="N (default 550,000; 4,000 with --smoke)")
    ap.add_argument("--d", type=int, help="d (default 1,024; 64 with --smoke)")
    ap.add_argument(
        "--schedule",
        choices=("cli", "paper"),
        default="cli",
        help="cli: the command line's defaults; paper: t=55,000, k=500, n=92,000",
    )
    ap.add_argument("--target", type=int, help="n (default: from --schedule)")
    ap.add_argument("--train", type=int, help="t (default: from --schedule)")
    ap.add_argument("--slice", type=int, help="k (default: from --schedule)")
    ap.add_argument(
        "--partitions",
        type=lambda v: v if v == "auto" else int(v),
        help="m (default auto: 512 with the exact family, 64 with logistic regression; 8 with "
        "--smoke)",
    )
    ap.add_argument("--device", default=None, help="auto (cpu with --smoke)")
    ap.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (CUDA)")
    ap.add_argument(
        "--model",
        default="ridge",
        help="the model family: ridge (exact, the default) or linear (logistic regression)",
    )
    ap.add_argument("--memmap", default=None, help="write the features here (.npy) and map it")
    ap.add_argument("--smoke", action="store_true", help="N=4,000, d=64, m=8, CPU: checks it runs")
    args = ap.parse_args()
    args.n = args.n or (4000 if args.smoke else 550_000)
    args.d = args.d or (64 if args.smoke else 1024)
    args.device = args.device or ("cpu" if args.smoke else "auto")
    args.partitions = args.partitions or (8 if args.smoke else PRESETS["practical"].n_partitions)
    cli = PRESETS["practical"]
    if args.schedule == "paper" and args.smoke:
        k = args.n // 40
        paper = {"target": args.n - 4 * k, "train": args.n // 10, "slice": k}
    else:
        paper = {"target": 92_000, "train": 55_000, "slice": 500}
    sizes = (
        paper
        if args.schedule == "paper"
        else {
            "target": round(cli.target_size * args.n),
            "train": round(cli.train_size * args.n),
            "slice": round(cli.slice_size * args.n),
        }
    )
    for name, value in sizes.items():
        if getattr(args, name) is None:
            setattr(args, name, value)

    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU"
    base_rss = _status_bytes("VmRSS")  # the interpreter and torch, before any feature
    if args.memmap:
        # written a chunk at a time, then mapped read-only: the filter reads the file's pages
        out = np.lib.format.open_memmap(args.memmap, "w+", np.float32, (args.n, args.d))
        _, y = embedding_like(args.n, args.d, out=out)
        out.flush()
        del out
        x = np.load(args.memmap, mmap_mode="r")
        base_rss = _status_bytes("VmRSS")
    else:
        x, y = embedding_like(args.n, args.d)
    print(
        f"{name}: N={args.n:,} d={args.d} m={args.partitions} t={args.train:,} k={args.slice} "
        f"-> n={args.target:,}; model={args.model}; tf32={args.tf32}"
    )
    peak = matmul_peak(device, 512 if args.smoke else 8192 if device.type == "cuda" else 2048)
    print(f"measured matmul peak: {peak / 1e12:.1f} TFLOP/s")

    # warm-up (CUDA context, kernels)
    warm = min(20_000, args.n // 2)
    aflite.filter(
        x[:warm],
        y[:warm],
        target_size=warm * 19 // 20,
        n_partitions=8,
        train_size=warm // 10,
        slice_size=warm // 40,
        threshold=0.0,
        device=device,
        model=args.model,
        progress=False,
    )
    if device.type == "cuda":
        torch.cuda.synchronize()
    _reset_peak()
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
        model=args.model,
        progress=True,
        score_kept=False,
        # as `aflite filter` does with the features it builds: standardised where they are
        copy=False,
    )
    if device.type == "cuda":
        torch.cuda.synchronize()
    total = time.perf_counter() - start
    per_phase = np.array([h.seconds for h in res.history])
    # the products each phase's solver counted (block passes, preconditioner, predictions)
    flops = sum(h.solver.get("flops", 0.0) for h in res.history)
    print(
        f"phases: {len(res.history)}; kept {len(res.kept):,}; stop: {res.stop_reason}; "
        f"solver {res.history[0].solver.get('solver')}; kept set fingerprint {res.fingerprint()}"
    )
    if device.type == "cuda":
        print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    print(
        f"seconds per phase: mean {per_phase.mean():.3f}, median {np.median(per_phase):.3f}, "
        f"first {per_phase[0]:.3f}, last {per_phase[-1]:.3f}"
    )
    hwm = _status_bytes("VmHWM")
    print(
        f"peak resident memory of the filter {hwm / 2**30:.2f} GiB = {hwm / x.nbytes:.2f}x the "
        f"features ({x.nbytes / 2**30:.2f} GiB), {(hwm - base_rss) / x.nbytes:.2f}x above the "
        f"{base_rss / 2**30:.2f} GiB of the interpreter and torch"
    )
    # the exact family does not count its products: its share of the peak is not given
    share = (
        f"; matmul work {flops / 1e12:.1f} TFLOP at {flops / total / 1e12:.1f} TFLOP/s "
        f"= {flops / total / peak:.0%} of the measured peak"
        if flops
        else ""
    )
    print(f"total: {total:.1f} s{share}")


if __name__ == "__main__":
    main()
