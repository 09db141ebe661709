"""Peak memory of a filter run at SNLI scale on the CPU: N=550,000, d=1024 float32 (2.2 GB).

Runs a few phases with a large slice so the working set shrinks past the point where storage is
compacted, once with the features in RAM and once memory-mapped from a .npy file (the way to
filter matrices larger than RAM). Memory is sampled from /proc/self/status in a thread: RssAnon
is what aflite allocates; RssFile is page cache of the mapped file, which the kernel can drop.

    python benchmarks/bench_memory.py [--n 550000] [--d 1024] [--partitions 8]
    python benchmarks/bench_memory.py --smoke     # N=2,000, d=32, memory-mapped only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def _status() -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def child(path: str, mode: str, partitions: int) -> None:
    import threading

    import numpy as np

    import aflite

    x = np.load(path, mmap_mode="r" if mode == "mmap" else None)
    n = x.shape[0]
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    base = _status()
    peak = dict(base)
    stop = False

    def sample():
        while not stop:
            for k, v in _status().items():
                peak[k] = max(peak.get(k, 0), v)
            time.sleep(0.02)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    start = time.perf_counter()
    res = aflite.filter(
        x,
        y,
        target_size=int(n / 6),
        n_partitions=partitions,
        train_size=int(n / 10),
        slice_size=int(n * 0.27),
        threshold=0.0,
        seed=0,
        device="cpu",
        progress=False,
    )
    seconds = time.perf_counter() - start
    stop = True
    th.join()
    feat = x.nbytes
    extra = peak["RssAnon"] - base["RssAnon"]
    total = peak["VmHWM"]
    print(
        f"{mode:5s}: {len(res.history)} phases, {seconds:.1f} s, kept {len(res.kept):,}; "
        f"features {feat / 2**30:.2f} GiB; filter's own allocations at peak "
        f"{extra / 2**30:.2f} GiB = {extra / feat:.2f}x features; "
        f"process peak RSS (runtime + features + filter) {total / 2**30:.2f} GiB = {total / feat:.2f}x features"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, help="N (default 550,000; 2,000 with --smoke)")
    ap.add_argument("--d", type=int, help="d (default 1,024; 32 with --smoke)")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="N=2,000, d=32, memory-mapped only")
    args = ap.parse_args()
    args.n = args.n or (2000 if args.smoke else 550_000)
    args.d = args.d or (32 if args.smoke else 1024)
    if args.child:
        child(args.child[0], args.child[1], args.partitions)
        return
    import numpy as np

    sys.path.insert(0, os.path.dirname(__file__))
    from _data import embedding_like

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "features.npy")
        x, _ = embedding_like(args.n, args.d)
        np.save(path, x)
        del x
        print(
            f"N={args.n:,} d={args.d} float32, m={args.partitions}, t=N/10, slice 0.27N, target N/6"
        )
        if args.smoke:
            print("smoke run: the features in RAM skipped, memory-mapped only")
        for mode in ("mmap",) if args.smoke else ("ram", "mmap"):
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    path,
                    mode,
                    "--partitions",
                    str(args.partitions),
                ],
                check=True,
            )


if __name__ == "__main__":
    main()
