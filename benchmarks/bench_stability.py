"""One filtered set: how much of what the filter removes depends on the seed, and whether the
same seed removes the same rows whatever the storage order and the thread count.

For each data set, ``aflite.filter_dataset`` with the defaults of ``aflite filter`` (grouped
by premise) runs with seeds 0, 1 and 2. Printed: the removed sets' Jaccard index for every
pair of seeds, the time of a run and the kept set's fingerprint. Then seed 0 again on the rows shuffled, at another thread count:
its fingerprint must be seed 0's.

Data sets: the bundled SNLI slice (6,000 pairs) and SNLI 1.0 dev (9,842 pairs, from
../shared/data/snli when present), each on hypothesis-only word n-grams and on MiniLM pair
features of premise and hypothesis (all-MiniLM-L6-v2, from the packaged weights; embeddings
are cached, so only the first run pays for the encoder).

    python benchmarks/bench_stability.py [--cases slice-ngrams,slice-minilm,dev-ngrams,dev-minilm]
        [--seeds 3] [--set model=linear --set n_partitions=64] [--preset paper]
    python benchmarks/bench_stability.py --smoke  # slice n-grams, 400 rows, 2 seeds, m=8
"""

from __future__ import annotations

import argparse
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
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a filter option other than the default, e.g. model=linear",
    )
    ap.add_argument("--preset", default=None, help="e.g. paper: Algorithm 1 as published")
    ap.add_argument("--smoke", action="store_true", help="slice n-grams, 400 rows, 2 seeds, m=8")
    args = ap.parse_args()
    options = {} if args.preset is None else {"preset": args.preset}
    for item in args.set:
        key, value = item.split("=", 1)
        options[key] = int(value) if value.isdigit() else value
    if args.smoke:
        print("smoke run: slice-ngrams only (no MiniLM), its first 400 rows, 2 seeds, m=8")
        args.cases, args.seeds = "slice-ngrams", 2
        options.setdefault("n_partitions", 8)
    print(f"aflite {aflite.__version__}; options {options or 'the defaults'}", flush=True)
    for name in args.cases.split(","):
        source, features, text = CASES[name]
        if source == "dev" and not (SHARED / "dev.jsonl").exists():
            print(f"{name}: skipped ({SHARED} not found)")
            continue
        rows = _rows(source)[: 400 if args.smoke else None]
        runs = [run(rows, features, text, s, options) for s in range(args.seeds)]
        res = runs[0][2].result
        params = res.params
        jac = [len(a[0] & b[0]) / len(a[0] | b[0]) for a, b in itertools.combinations(runs, 2)]
        print(
            f"{name}: {len(rows)} rows, model {params.get('model_family')}, "
            f"m={params['n_partitions']}; removed {[len(r[0]) for r in runs]}",
            flush=True,
        )
        print(
            f"  seed-to-seed Jaccard {', '.join(f'{j:.3f}' for j in jac)} "
            f"(mean {np.mean(jac):.3f}); {np.mean([r[1] for r in runs]):.1f} s a run",
            flush=True,
        )
        perm = np.random.default_rng(1).permutation(len(rows))
        moved = run([rows[i] for i in perm], features, text, 0, options, threads=1)
        same = moved[0] == runs[0][0]
        print(
            f"  seed 0: fingerprint {runs[0][2].fingerprint}; rows shuffled, 1 thread: "
            f"{moved[2].fingerprint} ({'identical' if same else 'DIFFERENT'})",
            flush=True,
        )


if __name__ == "__main__":
    main()
