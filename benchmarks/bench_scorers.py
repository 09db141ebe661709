"""Every per-example scorer on 20,000 rows of 1,536-d features: seconds per scorer.

Features: MiniLM pair features [u, v, |u-v|, u*v] of SNLI 1.0 dev+test (19,666 pairs; the
first 334 repeated to reach 20,000) from ``--snli-dir`` with the packaged all-MiniLM-L6-v2
(embedded once and cached, see ``_data.snli_devtest_minilm``), and hypothesis-only MiniLM
features (the v of each pair, 384-d) as the partial input. Without the SNLI files, or with
``--synthetic``, an embedding-like synthetic matrix (``_data.embedding_like``) and its first
384 columns stand in, and the output says so.

    taskset -c 1 env OMP_NUM_THREADS=1 python benchmarks/bench_scorers.py
    python benchmarks/bench_scorers.py --smoke   # 300 synthetic rows, d=96, 2 epochs
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _data import embedding_like, snli_devtest_minilm

SCORERS = ["predictability", "datamap", "pvi", "aum", "el2n", "forgetting", "partial"]


def features(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    snli = Path(args.snli_dir)
    if not args.synthetic and not args.smoke and (snli / "dev.jsonl").exists():
        x, y, _ = snli_devtest_minilm(snli)
        rows = np.resize(np.arange(len(y)), args.rows)  # the first rows again past 19,666
        x, y = x[rows], y[rows]
        what = f"SNLI dev+test MiniLM pair features ({min(len(rows), 19_666)} distinct pairs)"
        return x, y, np.ascontiguousarray(x[:, 384:768]), what
    d = 96 if args.smoke else 1536
    x, y = embedding_like(args.rows, d, 3, rank=min(256, d), seed=0)
    return x, y, np.ascontiguousarray(x[:, : d // 4]), "synthetic embedding-like features"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, help="default 20,000 (300 with --smoke)")
    ap.add_argument("--snli-dir", default=str(Path(__file__).parents[2] / "shared/data/snli"))
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, help="default 10 (2 with --smoke)")
    ap.add_argument(
        "--smoke", action="store_true", help="300 synthetic rows, d=96, 2 epochs: checks it runs"
    )
    args = ap.parse_args()
    args.rows = args.rows or (300 if args.smoke else 20_000)
    args.epochs = args.epochs or (2 if args.smoke else 10)

    import torch

    from aflite.scoring import score_examples

    x, y, partial, what = features(args)
    print(f"{what}: {x.shape[0]} rows x {x.shape[1]}, partial input {partial.shape[1]}-d")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), device {args.device}")
    t0, c0 = time.perf_counter(), time.process_time()
    s = score_examples(
        x, y, scorers=SCORERS, partial=partial, seed=0, device=args.device, epochs=args.epochs
    )
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"  {'scorer':<15} {'wall':>7}   {'CPU':>7}")
    for name, sec in s.info["seconds"].items():
        print(f"  {name:<15} {sec:7.1f} s {s.info['cpu_seconds'][name]:7.1f} s")
    print(f"  {'total':<15} {total:7.1f} s {cpu:7.1f} s")
    print("(datamap records the dynamics that aum, el2n and forgetting read; pvi fits the")
    print(" partial-input model that partial reads. CPU: this process's own time; the wall")
    print(" time is longer when other processes share the core)")
    full = s.info.get("model_full", {})
    print(f"chosen C: Phi {full.get('C')}, partial {s.info.get('model_partial', {}).get('C')}")
    print(f"representation bias {s.info['predictability']['representation_bias']:.3f}")
    print("Spearman correlation:")
    print(s.correlation().round(2).to_string())


if __name__ == "__main__":
    main()
