"""`aflite demo` beside a busy core: unpinned against pinned to the free core alone.

Another program spins on one core (core 0 by default) for the whole benchmark. The demo runs
twice: pinned to the free core (what it can do with one core to itself), then unpinned, free to
start threads on both cores, one of which it has to share. Prints both wall times and their
ratio; with threads that never wait on each other the unpinned run should be no slower.

    python benchmarks/bench_busy.py [--busy-core 0] [--free-core 1]
    python benchmarks/bench_busy.py --smoke     # aflite filter on 400 pairs, m=8: checks it runs
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def spin(core: int, nice: int = 0) -> subprocess.Popen:
    code = (
        f"import os\nos.nice({nice})\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass\n"
    )
    return subprocess.Popen([sys.executable, "-c", code])


def demo(out: str, cores: set[int] | None, small: str | None = None) -> float:
    """Seconds of ``aflite demo``, or with ``small`` (a JSON Lines file of SNLI pairs) of
    ``aflite filter`` on it with m=8 and no report."""
    cmd = [sys.executable, "-m", "aflite", "demo", "--out-dir", out, "--quiet"]
    if small:
        cmd[3:4] = ["filter", small, "--text-fields", "hypothesis", "--id-field", "id"]
        cmd += ["--n-partitions", "8"]
        cmd.append("--no-report")
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
    ap.add_argument(
        "--smoke", action="store_true", help="aflite filter on 400 pairs, m=8: checks it runs"
    )
    args = ap.parse_args()
    what = "aflite demo"
    if args.smoke:
        # cores this process may run on: a machine with one has no free core beside the busy one
        cores = sorted(os.sched_getaffinity(0))
        args.busy_core, args.free_core = cores[0], cores[-1]
        what = "aflite filter on 400 pairs"
    # a smoke run's spinner yields to everything else on the machine
    busy = spin(args.busy_core, nice=19 if args.smoke else 0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            small = None
            if args.smoke:
                from aflite.data import bundled_snli

                small = os.path.join(tmp, "pairs.jsonl")
                lines = bundled_snli().read_text().splitlines(keepends=True)[:400]
                with open(small, "w") as fh:
                    fh.writelines(lines)
            pinned = demo(os.path.join(tmp, "pinned"), {args.free_core}, small)
            unpinned = demo(os.path.join(tmp, "unpinned"), None, small)
    finally:
        busy.kill()
    print(
        f"{what} with core {args.busy_core} busy: pinned to core {args.free_core} "
        f"{pinned:.1f} s, unpinned {unpinned:.1f} s -> {unpinned / pinned:.2f}x the pinned time"
    )


if __name__ == "__main__":
    main()
