"""`aflite demo` beside a busy core: unpinned against pinned to the free core alone.

Another program spins on one core (core 0 by default) for the whole benchmark. The demo runs
twice: pinned to the free core (what it can do with one core to itself), then unpinned, free to
start threads on both cores, one of which it has to share. Prints both wall times and their
ratio; with threads that never wait on each other the unpinned run should be no slower.

    python benchmarks/bench_busy.py [--busy-core 0] [--free-core 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def spin(core: int) -> subprocess.Popen:
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


def demo(out: str, cores: set[int] | None) -> float:
    cmd = [sys.executable, "-m", "aflite", "demo", "--out-dir", out, "--quiet"]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "AFLITE_THREADS")}
    start = time.perf_counter()
    subprocess.run(
        cmd,
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        preexec_fn=(lambda: os.sched_setaffinity(0, cores)) if cores else None,
    )
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy-core", type=int, default=0)
    ap.add_argument("--free-core", type=int, default=1)
    args = ap.parse_args()
    busy = spin(args.busy_core)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pinned = demo(os.path.join(tmp, "pinned"), {args.free_core})
            unpinned = demo(os.path.join(tmp, "unpinned"), None)
    finally:
        busy.kill()
    print(
        f"aflite demo with core {args.busy_core} busy: pinned to core {args.free_core} "
        f"{pinned:.1f} s, unpinned {unpinned:.1f} s -> {unpinned / pinned:.2f}x the pinned time"
    )


if __name__ == "__main__":
    main()
