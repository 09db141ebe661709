"""Peak memory of a whole filter job on many short texts with n-gram features.

Builds N texts of 8 words drawn from the bundled SNLI hypotheses (default 200,000), writes them
as JSON Lines and runs the job that ``aflite filter --features ngrams`` runs (one phase, 2
partitions, no report). A thread samples RssAnon (what the process allocates; the page cache
of memory-mapped files is not counted) and prints the peak next to the dense feature matrix
(N x 1024 float32) and the memory in use before the features were built.

    python benchmarks/bench_ngram_memory.py [--n 200000]
    python benchmarks/bench_ngram_memory.py --smoke     # 2,000 texts: checks it runs
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def _anon_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, help="texts (default 200,000; 2,000 with --smoke)")
    ap.add_argument("--smoke", action="store_true", help="2,000 texts: checks it runs")
    args = ap.parse_args()
    args.n = args.n or (2000 if args.smoke else 200_000)

    import aflite.jobs.filter_job as filter_job
    from aflite.data import bundled_snli
    from aflite.jobs import FilterJob, run_filter_job

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()]
    words = np.array(" ".join(r["hypothesis"] for r in rows).split())
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(words), (args.n, 8))
    tmp = Path(tempfile.mkdtemp())
    data = tmp / "texts.jsonl"
    with open(data, "w") as fh:
        for i, ws in enumerate(words[idx].tolist()):
            fh.write(json.dumps({"id": i, "text": " ".join(ws), "label": int(i % 3)}) + "\n")
    del rows, idx

    peak = [0.0]
    before_features = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _anon_mib())
            time.sleep(0.02)

    # the memory in use once the rows are read and checked, just before Phi is built
    represent = filter_job.represent

    def marked(run, plan, **kw):
        before_features[0] = _anon_mib()
        return represent(run, plan, **kw)

    filter_job.represent = marked
    threading.Thread(target=sample, daemon=True).start()
    t0 = time.perf_counter()
    job = FilterJob(
        input=str(data),
        text=["text"],
        n_partitions=2,
        train_size=0.01,
        target_size=0.99,
        slice_size=0.01,
        min_bias=None,
        threshold=0.0,
        report=False,
        out_dir=str(tmp / "out"),
        cache_dir=None,
    )
    run_filter_job(job, progress=False, log=lambda _: None)
    done.set()
    dense = args.n * 1024 * 4 / 2**20
    above = peak[0] - before_features[0]
    print(f"N={args.n:,} texts, n-grams d=1024: dense matrix {dense:.0f} MiB")
    print(f"before features {before_features[0]:.0f} MiB, peak {peak[0]:.0f} MiB (RssAnon)")
    print(
        f"peak above the rows already read: {above:.0f} MiB = {above / dense:.2f}x the dense matrix"
    )
    print(f"wall {time.perf_counter() - t0:.0f} s")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
