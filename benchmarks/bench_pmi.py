"""Identity-word n-gram PMI at SNLI size: count 1.1 M sentences, then query one word.

The bundled SNLI slice (or ../shared's dev+test when present) is replicated to reach the
target number of sentences (premises and hypotheses both count as sentences).

    python benchmarks/bench_pmi.py [--sentences 1100000] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from aflite.audits.cooccurrence import CooccurrenceCounts, count_cooccurrences
from aflite.data import bundled_snli


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1_100_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--min-count", type=int, default=10)
    args = ap.parse_args()

    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "snli"
    files = sorted(shared.glob("*.jsonl")) if shared.exists() else [bundled_snli()]
    base = []
    for f in files:
        for line in f.read_text().splitlines():
            row = json.loads(line)
            base += [row["premise"], row["hypothesis"]]
    reps = -(-args.sentences // len(base))
    texts = (base * reps)[: args.sentences]
    print(f"{len(texts):,} sentences ({len(base):,} distinct, x{reps}), {args.jobs} processes")

    start = time.perf_counter()
    counts = count_cooccurrences(texts, min_count=args.min_count, n_jobs=args.jobs)
    t_count = time.perf_counter() - start
    print(
        f"counting: {t_count:.1f} s  ({len(counts.vocab):,} n-grams >= {args.min_count}, "
        f"{counts.cooc.nnz:,} co-occurring pairs, {counts.n_tokens:,} tokens)"
    )

    with tempfile.TemporaryDirectory() as d:
        path = counts.save(Path(d) / "counts.npz")
        start = time.perf_counter()
        loaded = CooccurrenceCounts.load(path)
        t_load = time.perf_counter() - start
        start = time.perf_counter()
        top = loaded.top_associations("woman", 10)
        t_query = time.perf_counter() - start
    print(f"load saved counts: {t_load:.2f} s; query 'woman': {t_query * 1000:.1f} ms")
    print("top associations of 'woman':", ", ".join(f"{g} ({p:.2f})" for g, p, _ in top))
    print(
        f"targets: counting < 60 s -> {'met' if t_count < 60 else 'missed'}; "
        f"query < 0.1 s -> {'met' if t_query < 0.1 else 'missed'}"
    )


if __name__ == "__main__":
    main()
