"""The Ray backend on a cluster of local nodes (``ray.cluster_utils.Cluster``), against one
process on the same rows: N=2,000,000 x d=256 float32 (2 GB) in 16 ``.npy`` parts, 4 nodes,
each node's object store 256 MiB (an eighth of the features).

For each family it prints the kept set's fingerprint on the cluster and in one process (the
same), the time of each, the driver's peak private memory above where it started (it holds
O(N): ids, labels, designs, scores), each worker's features and peak memory, and the bytes a
phase moved between the driver and the workers. On this machine the nodes share its cores,
so the point is memory and traffic, not speed.

    python benchmarks/bench_ray.py                        # N=2,000,000, d=256, 4 nodes
    python benchmarks/bench_ray.py --n 400000 --families ridge
    python benchmarks/bench_ray.py --smoke                # N=20,000, d=32, 2 nodes, 4 parts
    python benchmarks/bench_ray.py --choices 4 --n 500000 --d 128   # multiple-choice items
    python benchmarks/bench_ray.py --paper                # the arithmetic for 10^8 and 10^9 rows

``--paper`` prints, without running anything, the work and traffic of a phase at d=1,024 for
10^8 and 10^9 rows and SNLI x 1000 (5.5 x 10^8), from the costs of the passes above and the
hardware figures in ``CLUSTERS`` (assumed, not measured here): the node count where the
driver's share of the sums starts to take longer than the workers' products, and what a
64-node CPU and an 8-node GPU cluster would take for ten phases.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import aflite
from aflite.algorithm.numerics.shards import owned_nodes
from aflite.distributed import RayBackend, ShardedFeatures

SRC = str(Path(aflite.__file__).parents[1])
ENV = {"env_vars": {"PYTHONPATH": SRC}}


def write_parts(folder: Path, n: int, d: int, parts: int, seed: int = 0):
    """Embedding-like features (a decaying spectrum, class means in it) written part by part,
    so this process never holds them; the labels."""
    rng = np.random.default_rng(seed)
    rank = min(d, 64)
    mix = (rng.normal(size=(rank, d)) / np.arange(1, rank + 1)[:, None] ** 0.7).astype(np.float32)
    means = (rng.normal(size=(3, rank)) * 0.15).astype(np.float32)
    y = rng.integers(0, 3, n)
    paths, rows = [], -(-n // parts)
    for k, s in enumerate(range(0, n, rows)):
        yk = y[s : s + rows]
        z = rng.standard_normal((len(yk), rank), dtype=np.float32) + means[yk]
        x = z @ mix + 0.05 * rng.standard_normal((len(yk), d), dtype=np.float32)
        path = folder / f"part-{k:05d}.npy"
        np.save(path, x)
        paths.append(path)
        del x, z
    return ShardedFeatures(paths), y


def write_item_parts(folder: Path, n: int, k: int, d: int, parts: int, seed: int = 0):
    """Multiple-choice items (n, k, d) built as :func:`write_parts` builds rows, the right
    choice shifted along a direction of the spectrum, written part by part; the answers."""
    rng = np.random.default_rng(seed)
    rank = min(d, 64)
    mix = (rng.normal(size=(rank, d)) / np.arange(1, rank + 1)[:, None] ** 0.7).astype(np.float32)
    shift = (rng.normal(size=rank) * 0.15).astype(np.float32)
    y = rng.integers(0, k, n)
    paths, rows = [], -(-n // parts)
    for i, s in enumerate(range(0, n, rows)):
        yi = y[s : s + rows]
        z = rng.standard_normal((len(yi), k, rank), dtype=np.float32)
        z[np.arange(len(yi)), yi] += shift
        x = z @ mix + 0.05 * rng.standard_normal((len(yi), k, d), dtype=np.float32)
        path = folder / f"part-{i:05d}.npy"
        np.save(path, x)
        paths.append(path)
        del x, z
    return ShardedFeatures(paths), y


def private_memory() -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) << 10


@contextlib.contextmanager
def peak_growth():
    """The most this process's private memory grew by inside the block (sampled every 5 ms)."""
    base, peak, done = private_memory(), [0], threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], private_memory() - base)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


# assumed hardware: sustained flop/s a worker at float64 and float32 (aflite keeps full float32
# products, no TF32), the driver's network (bytes/s), the driver's cost of one call, and how
# fast a node reads its parts
CLUSTERS = {
    "64 CPU nodes (64 cores, 10 Gb/s)": dict(workers=64, f64=1e12, f32=2e12, net=1.25e9,
                                             call=1e-3, nodes=64, read=1e9),
    "8 GPU nodes (8 GPUs each, 100 Gb/s)": dict(workers=64, f64=25e12, f32=25e12, net=12.5e9,
                                                call=1e-3, nodes=8, read=2e9),
}  # fmt: skip
ROW_BYTES = 36  # a phase's design to the workers and counts back, per row (measured below)


def sums_sent(shards: int, workers: int) -> float:
    """The subtrees' sums a worker sends per step, on average, holding an equal run of
    consecutive shards (one where its run is a whole subtree)."""
    runs = np.array_split(np.arange(shards), workers)
    return float(np.mean([len(owned_nodes(list(r), shards)) for r in runs if len(r)]))


def paper() -> None:
    """The work and traffic of a phase, and cluster times, from the passes' costs."""
    d, c, shard = 1024, 3, 1 << 20
    print("\non paper: d=1,024, 3 classes, t=10%, k=5%, ten phases to half the rows")
    print("ridge: m=512, 8 blocks a part, 20 CG steps a phase (14-23 measured), Gram matrices")
    print("of each shard's part of a block once a phase; linear: m=64, 80 passes a phase")
    for n, name in ((1e8, "10^8 rows"), (1e9, "10^9 rows"), (5.5e8, "SNLI x 1000")):
        t, shards = 0.1 * n, int(round(n / shard))
        print(f"\n{name}: {n * d * 4 / 1e12:.2f} TB of features, {shards:,} shards, "
              f"{ROW_BYTES * n / 1e9:.1f} GB of rows' design and counts a phase")  # fmt: skip
        for family, m, steps in (("ridge", 512, 20), ("linear", 64, 80)):
            if family == "ridge":
                setup, step, msg, bits = (
                    2 * n * d * d,
                    shards * 2 * m * 8 * c * d * d,
                    m * c * d * 8,
                    "f64",
                )
            else:
                setup, step, msg, bits = 0.0, 4 * t * d * m * c, m * c * (d + 1) * 4, "f32"  # fmt: skip
            work = setup + steps * step
            print(f"  {family}: {work:.1e} flops a phase ({step:.1e} a step), {msg / 1e6:.1f} MB "
                  f"a message")  # fmt: skip
            for cluster, h in CLUSTERS.items():
                w, f, net = h["workers"], h[bits], h["net"]
                # per step the driver sends each worker the vectors and takes back the sums
                # of the subtrees it holds: at ``even`` workers that takes the products' time
                per = (1 + sums_sent(shards, w)) * msg
                even = (step * net / (per * f)) ** 0.5
                compute = work / (w * f)
                reduce = steps * w * (per / net + h["call"])
                rows = ROW_BYTES * n / net
                phase = compute + reduce + rows
                load = n * d * 4 / (h["nodes"] * h["read"])
                print(f"    {cluster}: the sums dominate beyond {even:,.0f} workers; a phase "
                      f"{phase:,.0f} s (products {compute:,.0f}, sums {reduce:,.0f}, rows "
                      f"{rows:,.0f}); ten phases and reading the parts {(10 * phase + load) / 60:,.1f} min")  # fmt: skip


def mb(b: float) -> str:
    return f"{b / 2**20:,.0f} MB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--store-mb", type=int, default=256, help="each node's object store")
    ap.add_argument("--phases", type=int, default=1)
    ap.add_argument("--families", default=None, help="default: linear,ridge (choice, "
                    "choice-ridge with --choices)")  # fmt: skip
    ap.add_argument("--choices", type=int, default=0, help="multiple-choice items of K choices")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--paper", action="store_true", help="only the arithmetic on paper")
    args = ap.parse_args()
    if args.paper:
        paper()
        return
    if args.smoke:
        args.n, args.d, args.nodes, args.parts, args.store_mb = 20_000, 32, 2, 4, 80
    import ray
    from ray.cluster_utils import Cluster

    folder = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    if args.choices:
        parts, y = write_item_parts(folder, args.n, args.choices, args.d, args.parts)
        args.families = args.families or "choice,choice-ridge"
    else:
        parts, y = write_parts(folder, args.n, args.d, args.parts)
        args.families = args.families or "linear,ridge"
    features = args.n * max(1, args.choices) * args.d * 4
    k = args.n // 20
    kw = dict(target_size=args.n - args.phases * k, slice_size=k, train_size=0.1,
              threshold=0.0, seed=0, score_kept=False)  # fmt: skip
    what = f" items of {args.choices} choices," if args.choices else ""
    print(
        f"N={args.n:,}{what} d={args.d}: {mb(features)} of features in {args.parts} parts, "
        f"{args.nodes} local nodes, object store {args.store_mb} MiB each, "
        f"{args.phases} phase(s) of k={k:,}"
    )
    store = args.store_mb << 20
    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": store, "include_dashboard": False},
    )
    for _ in range(args.nodes - 1):
        nodes.add_node(num_cpus=1, object_store_memory=store)
    ray.init(address=nodes.address, log_to_driver=False, runtime_env=ENV)
    results = {}
    backend = RayBackend(n_workers=args.nodes, runtime_env=ENV)
    try:
        # a small run first: what a run imports, and the workers started
        small = ShardedFeatures.split(np.ones((60 * args.nodes, 4), np.float32), 60)
        aflite.filter(small, np.arange(60 * args.nodes) % 2, backend=backend,
                      target_size=0.9, train_size=0.3, slice_size=0.05)  # fmt: skip
        for family in args.families.split(","):
            with peak_growth() as driver:
                start = time.perf_counter()
                res = aflite.filter(parts, y, model=family, backend=backend, **kw)
                seconds = time.perf_counter() - start
            results[family] = (res, seconds, driver[0], backend.memory())
    finally:
        backend.close()
        ray.shutdown()
        nodes.shutdown()
    for family, (res, seconds, driver, held) in results.items():
        with peak_growth() as one:
            start = time.perf_counter()
            local = aflite.filter(parts, y, model=family, **kw)
            local_seconds = time.perf_counter() - start
        same = "the same" if local.fingerprint() == res.fingerprint() else "ANOTHER SET"
        print(f"\n{family}: kept set fingerprint {res.fingerprint()} on Ray, "
              f"{local.fingerprint()} in one process ({same})")  # fmt: skip
        print(f"  time: Ray {seconds:.1f} s, one process {local_seconds:.1f} s")
        print(f"  driver peak memory above its start: {mb(driver)} "
              f"({driver / features:.3f} x the features; one process: {mb(one[0])})")  # fmt: skip
        for w in held:
            print(f"  worker on node {w['node'][:8]}: holds {mb(w['feature_bytes'])} of "
                  f"features, peak memory {mb(w['peak_rss'])}")  # fmt: skip
        for i, rec in enumerate(res.history):
            r = rec.solver
            steps = r.get("iterations", r.get("cg_steps"))
            # the exact family on items takes no steps: its blocks' sums come back once
            how = f"{steps} steps" if steps is not None else f"{r.get('blocks')} blocks' sums"
            moved = r["sent_bytes"] + r["received_bytes"]
            print(f"  phase {i}: sent {mb(r['sent_bytes'])}, received "
                  f"{mb(r['received_bytes'])} in {r['messages']} messages, {how} "
                  f"({moved / features:.3f} x the features)")  # fmt: skip
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    if args.smoke:
        paper()


if __name__ == "__main__":
    main()
