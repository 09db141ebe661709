"""One filtered set: how much of what the filter removes depends on the seed, and whether the
same seed removes the same rows whatever the storage order and the thread count.

For each data set the filter runs with the defaults of ``aflite filter`` (the exact family,
512 partitions a phase) and seeds 0, 1 and 2. Printed: the removed sets' Jaccard index for
every pair of seeds, the time of a run and the kept set's fingerprint; beside them, the
figure seed 0 prints with ``--check-seed 1`` (it must be the Jaccard of seeds 0 and 1 run
apart). Then seed 0 again on the rows shuffled, at one thread: its kept set must be seed 0's.

Text sets run through ``aflite.filter_dataset`` (grouped by premise): the bundled SNLI slice
(6,000 pairs) and SNLI 1.0 dev (9,842 pairs, from ../shared/data/snli when present), each on
hypothesis-only word n-grams and on MiniLM pair features of premise and hypothesis
(all-MiniLM-L6-v2, from the packaged weights; embeddings are cached). Sets of dense features
where a training part holds more rows than there are features (t > d) run through
``aflite.filter`` on the matrices of ``bench_outcome.py``: scikit-learn's digits (1,797 x 64),
5,000 MNIST digits in PCA 100, SNLI dev hypotheses in TF-IDF + SVD 256 (grouped by premise),
HellaSwag contexts by their 20 most frequent activities (TF-IDF + SVD 256), and SNLI dev
MiniLM pairs at train size 0.2.

``--m-curve 128,512,2048`` runs every case at those partition counts instead of the default
and prints the mean Jaccard and time of each: what more partitions buy.

    python benchmarks/bench_stability.py [--cases slice-ngrams,digits,...] [--seeds 3]
        [--set model=linear --set n_partitions=64] [--preset paper] [--m-curve 128,512,2048]
    python benchmarks/bench_stability.py --smoke  # slice n-grams and digits, small, m=8
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import time
from pathlib import Path

import numpy as np

import aflite
from aflite.data import bundled_snli

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "snli"
MINILM = "sentence-transformers:all-MiniLM-L6-v2"


def _rows(name: str) -> list[dict]:
    path = bundled_snli() if name == "slice" else SHARED / "dev.jsonl"
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


CASES = {
    "slice-ngrams": ("slice", "ngrams", ["hypothesis"]),
    "slice-minilm": ("slice", MINILM, ["premise", "hypothesis"]),
    "dev-ngrams": ("dev", "ngrams", ["hypothesis"]),
    "dev-minilm": ("dev", MINILM, ["premise", "hypothesis"]),
}
# t > d: bench_outcome's matrices, filtered by aflite.filter
ARRAY_CASES = ("digits", "mnist-pca", "snli-tfidf", "activity", "dev-minilm-t20")
DEFAULT_CASES = ("slice-ngrams", "slice-minilm", "dev-ngrams", "dev-minilm", "digits",
                 "mnist-pca", "snli-tfidf")  # fmt: skip


def run(rows, features, text, seed, options, threads=None):
    start = time.perf_counter()
    out = aflite.filter_dataset(
        rows,
        label="label",
        text=text,
        id="id",
        group="premise",
        features=features,
        seed=seed,
        progress=False,
        threads=threads,
        **options,
    )
    seconds = time.perf_counter() - start
    removed = set(out.scores.loc[out.scores["split"] == "removed", "id"])
    return removed, seconds, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a filter option other than the default, e.g. model=linear",
    )
    ap.add_argument("--preset", default=None, help="e.g. paper: Algorithm 1 as published")
    ap.add_argument("--m-curve", default=None, help="partition counts, e.g. 128,512,2048")
    ap.add_argument("--smoke", action="store_true", help="slice n-grams and digits, small, m=8")
    args = ap.parse_args()
    options = {} if args.preset is None else {"preset": args.preset}
    for item in args.set:
        key, value = item.split("=", 1)
        options[key] = int(value) if value.isdigit() else value
    if args.smoke:
        print(
            "smoke run: slice-ngrams (no MiniLM), its first 400 rows, and 300 digits; 2 seeds, m=8"
        )
        args.cases, args.seeds = "slice-ngrams,digits", 2
        options.setdefault("n_partitions", 8)
    print(f"aflite {aflite.__version__}; options {options or 'the defaults'}", flush=True)
    curve = [None] if not args.m_curve else [int(m) for m in args.m_curve.split(",")]
    for name in args.cases.split(","):
        if name not in CASES and name not in ARRAY_CASES:
            raise SystemExit(f"unknown case {name!r}: {', '.join([*CASES, *ARRAY_CASES])}")
        runner = _array_runner(name, args.smoke) if name in ARRAY_CASES else None
        if name in CASES:
            source, features, text = CASES[name]
            if source == "dev" and not (SHARED / "dev.jsonl").exists():
                print(f"{name}: skipped ({SHARED} not found)")
                continue
            rows = _rows(source)[: 400 if args.smoke else None]
            runner = functools.partial(_text_run, rows, features, text)
        elif isinstance(runner, str):
            print(f"{name}: skipped ({runner})")
            continue
        for m in curve:
            opts = options if m is None else {**options, "n_partitions": m}
            _measure(name, runner, opts, args.seeds, shuffle=not args.m_curve)


def _text_run(rows, features, text, seed, options, shuffled=False, threads=None):
    """(removed ids, seconds, fingerprint, params, rows) of one filter_dataset run."""
    if shuffled:
        perm = np.random.default_rng(1).permutation(len(rows))
        rows = [rows[i] for i in perm]
    removed, seconds, out = run(rows, features, text, seed, options, threads=threads)
    return removed, seconds, out.fingerprint, out.result.params, len(rows)


def _array_runner(name, smoke):
    """A run of bench_outcome's case ``name`` (its matrix through aflite.filter), or why not."""
    import bench_outcome

    size = bench_outcome.SMOKE_SIZES.get(name, 300) if smoke else None
    case = bench_outcome.CASES[name](size)
    if isinstance(case, str):
        return case

    def one(seed, options, shuffled=False, threads=None):
        n = len(case.y)
        order = np.random.default_rng(1).permutation(n) if shuffled else np.arange(n)
        extra = {k: v for k, v in options.items() if k != "model"}
        if threads is not None:
            extra["threads"] = threads
        family = options.get("model", "ridge")
        kept, res, seconds = bench_outcome.filter_once(case, family, seed, order, extra)
        removed = set(case.ids[np.setdiff1d(np.arange(n), kept)].tolist())
        return removed, seconds, res.fingerprint(list(case.ids[order])), res.params, n

    return one


def _measure(name, runner, options, seeds, *, shuffle):
    # seed 0 with --check-seed 1: the figure a run prints, beside seeds 0 and 1 run apart
    runs = [runner(s, {**options, "check_seed": 1} if s == 0 else options) for s in range(seeds)]
    params = runs[0][3]
    jac = [len(a[0] & b[0]) / len(a[0] | b[0]) for a, b in itertools.combinations(runs, 2)]
    print(
        f"{name}: {runs[0][4]} rows, model {params.get('model_family')}, "
        f"m={params['n_partitions']}, t={params.get('train_size')}; "
        f"removed {[len(r[0]) for r in runs]}",
        flush=True,
    )
    print(
        f"  seed-to-seed Jaccard {', '.join(f'{j:.3f}' for j in jac)} "
        f"(mean {np.mean(jac):.3f}); {np.mean([r[1] for r in runs]):.1f} s a run",
        flush=True,
    )
    printed = params["seed_check"]["jaccard"]
    print(
        f"  printed by seed 0 with --check-seed 1: Jaccard {printed:.3f}; seeds 0 and 1 run "
        f"apart: {jac[0]:.3f} ({'equal' if abs(printed - jac[0]) < 5e-4 else 'DIFFERENT'}); "
        f"every pair {min(jac):.3f}-{max(jac):.3f}",
        flush=True,
    )
    if not shuffle:
        return
    moved = runner(0, options, shuffled=True, threads=1)
    same = moved[0] == runs[0][0]
    print(
        f"  seed 0: fingerprint {runs[0][2]}; rows shuffled, 1 thread: "
        f"{moved[2]} ({'identical' if same else 'DIFFERENT'})",
        flush=True,
    )


if __name__ == "__main__":
    main()
