"""Identity-word n-gram PMI at SNLI size: count 1.1 M sentences, save, then query one word.

The bundled SNLI slice (or ../shared's dev+test when present) is replicated to reach the
target number of sentences (premises and hypotheses both count as sentences). Every copy is
counted (no sentence dedupe), so the work is that of 1.1 M distinct sentences; ``--dedupe``
times the audit's default instead, which on replicated text counts each sentence once.

    python benchmarks/bench_pmi.py [--sentences 1100000] [--jobs N] [--dedupe]
    python benchmarks/bench_pmi.py --smoke      # 4,000 sentences of the slice: checks it runs
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from aflite.audits import load_counts, save_counts
from aflite.audits.cooccurrence import count_cooccurrences
from aflite.data import bundled_snli


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, help="default 1,100,000 (4,000 with --smoke)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--min-count", type=int, default=10)
    ap.add_argument("--dedupe", action="store_true", help="count repeated sentences once")
    ap.add_argument("--smoke", action="store_true", help="4,000 sentences of the bundled slice")
    args = ap.parse_args()
    args.sentences = args.sentences or (4000 if args.smoke else 1_100_000)

    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "snli"
    use_shared = shared.exists() and not args.smoke
    files = sorted(shared.glob("*.jsonl")) if use_shared else [bundled_snli()]
    base = []
    for f in files:
        for line in f.read_text().splitlines():
            row = json.loads(line)
            base += [row["premise"], row["hypothesis"]]
    reps = -(-args.sentences // len(base))
    texts = (base * reps)[: args.sentences]
    print(f"{len(texts):,} sentences ({len(base):,} distinct, x{reps}), {args.jobs} processes")

    start = time.perf_counter()
    counts = count_cooccurrences(
        texts, min_count=args.min_count, n_jobs=args.jobs, dedupe_sentences=args.dedupe
    )
    t_count = time.perf_counter() - start
    print(
        f"counting: {t_count:.1f} s  ({counts.n_sentences:,} sentences counted, "
        f"{len(counts.vocab):,} n-grams >= {args.min_count}, "
        f"{counts.cooc.nnz:,} co-occurring pairs, {counts.n_tokens:,} tokens)"
    )

    with tempfile.TemporaryDirectory() as d:
        start = time.perf_counter()
        path = save_counts(Path(d) / "counts.npz", {counts.name: counts})
        t_save = time.perf_counter() - start
        size = path.stat().st_size / 2**20
        start = time.perf_counter()
        loaded = load_counts(path, text=False)
        t_load = time.perf_counter() - start
        t_query = []
        for _ in range(5):
            start = time.perf_counter()
            top = loaded.top_associations("woman", 10)
            t_query.append(time.perf_counter() - start)
        t_query = min(t_query)
        start = time.perf_counter()
        bigrams = loaded.top_associations("young boy", 10, ngrams="bigrams")
        t_bigram = time.perf_counter() - start
        start = time.perf_counter()
        with_text = load_counts(path)
        n_both, examples = with_text.example_sentences("woman", top[0].ngram, 3)
        t_examples = time.perf_counter() - start
    print(f"save: {t_save:.1f} s ({size:.0f} MiB with sentences and the n-gram index)")
    print(
        f"load saved counts: {t_load:.2f} s; query 'woman' (unigrams): {t_query * 1000:.1f} ms; "
        f"'young boy' (bigrams): {t_bigram * 1000:.1f} ms; load with text + 3 example "
        f"sentences: {t_examples:.2f} s"
    )
    print("top unigrams of 'woman':", ", ".join(f"{a.ngram} ({a.pmi:.2f})" for a in top))
    print("top bigrams of 'young boy':", ", ".join(a.ngram for a in bigrams[:5]))
    print(f"'woman' + '{top[0].ngram}': {n_both:,} sentences, e.g. {examples[0]!r}")
    print(
        f"targets: counting < 60 s -> {'met' if t_count < 60 else 'missed'}; "
        f"query < 0.1 s -> {'met' if t_query < 0.1 else 'missed'}"
    )


if __name__ == "__main__":
    main()
