"""The Ray backend: a filter whose rows are held in shards by Ray workers, each phase's sums
computed where the rows are; and embeddings with Ray Data.

:class:`RayBackend` starts (or joins) a Ray cluster and one worker actor per ``n_workers``;
the phase runner builds its store through it (:class:`~.ray_store.RayStore`: the driver
keeps O(N) numbers, the workers the features) and runs each family's phases through
:class:`~.ray_model.RayModel`. The partitions are drawn on the driver exactly as one
process draws them, and every sum over rows is added along the shards' tree, so a run keeps
the kept set of one process on the same shards, whatever the number of workers.

Point it at a cluster with ``RayBackend(address="auto")`` on a cluster node, or
``address="ray://HEAD:10001"`` from outside (or set ``RAY_ADDRESS``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aflite._internal.backends import register_backend
from aflite._internal.transfer import count_messages, payload_bytes
from aflite.algorithm.numerics.shards import SHARD_ROWS, ShardedFeatures

__all__ = ["RayBackend", "embed_to_parts", "embed_with_ray"]

START_SECONDS = 120  # a worker that is not up by then will not be: the cluster lacks room
REVIVE_TRIES = 240  # half-second waits for a restarting worker
DEAD = "dead"


def _ray():
    try:
        import ray
    except ImportError:
        from aflite.errors import MissingExtraError

        raise MissingExtraError("the Ray backend needs: pip install 'aflite[ray]'") from None
    return ray


class RayBackend:
    """Hold the rows in shards on ``n_workers`` Ray actors and run each phase's sums there.

    Parameters
    ----------
    n_workers:
        Worker actors (at most one per shard): one per node, each computing on
        ``num_cpus_per_worker`` threads, is the usual choice.
    address:
        Ray cluster address; None joins the running instance, or starts a local one.
    num_cpus_per_worker, num_gpus_per_worker:
        Resources each worker asks for (a worker with a GPU keeps its shards there).
    max_restarts:
        How often a worker that dies is restarted (or replaced) and its phase done again.
    runtime_env:
        Ray's runtime environment for the workers (e.g. ``{"env_vars": {...}}``).
    """

    def __init__(
        self,
        n_workers: int = 2,
        *,
        address: str | None = None,
        num_cpus_per_worker: float = 1,
        num_gpus_per_worker: float = 0,
        max_restarts: int = 3,
        runtime_env: dict | None = None,
    ) -> None:
        if n_workers < 1:
            raise ValueError(f"n_workers must be >= 1, got {n_workers}")
        self.n_workers = n_workers
        self.address = address
        self.num_cpus = num_cpus_per_worker
        self.num_gpus = num_gpus_per_worker
        self.max_restarts = max_restarts
        self.runtime_env = runtime_env
        self.workers: list[Any] = []
        self.nodes: list[str | None] = []
        self.tokens: list[str] = []
        self.restarts = 0  # workers given their shards back

    def phase_model(self, settings: Any, family: Any) -> Any:
        """The :class:`~aflite.algorithm.models.Model` that runs the registered ``family``
        (a :class:`~aflite.algorithm.models.ModelFamily`) with ``settings`` (None: its
        defaults) on this cluster."""
        from aflite.distributed.ray_model import RayModel

        return RayModel(self, family, settings)

    # --- workers ---
    def _init(self) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False,
                     runtime_env=self.runtime_env)  # fmt: skip
        return ray

    def _new_worker(self, node: str | None) -> Any:
        from aflite.distributed.ray_worker import ShardWorker

        ray = self._init()
        options: dict[str, Any] = dict(
            num_cpus=self.num_cpus,
            num_gpus=self.num_gpus,
            max_restarts=self.max_restarts,
            max_task_retries=0,  # a lost call is the phase's to do again, from the driver
        )
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        if node is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(_node_id(node), False)
        actor = ray.remote(ShardWorker).options(**options)
        return actor.remote(max(1, int(self.num_cpus)), self.num_gpus > 0)

    def place(self, n_shards: int, nodes: Sequence[str] | None, sizes: np.ndarray) -> list[int]:
        """Start the workers and give each shard one: on its node where ``nodes`` says, else
        runs of consecutive shards of about equal rows (so a worker sends one subtree's sum,
        or few)."""
        if nodes is not None:
            where = sorted(set(nodes))
            want: list[str | None] = list(where)
        else:
            want = [None] * min(self.n_workers, n_shards)
        for w, node in enumerate(want):
            if w >= len(self.workers):
                self.workers.append(self._new_worker(node))
                self.nodes.append(node)
        pings = [self._send(w, "ping", ()) for w in range(len(self.workers))]
        ready = self._started(pings)
        if ready < len(pings):
            raise RuntimeError(
                f"Ray started {ready} of {len(pings)} workers in {START_SECONDS} s: each asks "
                f"for {self.num_cpus} CPUs and {self.num_gpus} GPUs, more than the cluster has "
                "free; use fewer workers (n_workers) or less each"
            )
        self.tokens = [t for t, _, _ in self._receive(pings)]
        if nodes is not None:
            return [where.index(n) for n in nodes]
        return _runs(np.asarray(sizes), len(want))

    def revive(self) -> set[int]:
        """The workers that lost what they held (restarted by Ray, or dead and replaced):
        waits for each to answer."""
        lost: set[int] = set()
        for w in range(len(self.workers)):
            token = None
            for _ in range(REVIVE_TRIES):
                token = self._ping(w)
                if token == DEAD:
                    self.workers[w] = self._new_worker(self.nodes[w])
                elif token is not None:
                    break
                else:
                    time.sleep(0.5)
            if token is None or token == DEAD:
                raise RuntimeError(f"Ray worker {w} did not come back")
            if token != self.tokens[w]:
                lost.add(w)
                self.tokens[w] = token
        self.restarts += len(lost)
        return lost

    # --- calls, counted ---
    def put(self, value: Any, copies: int = 1) -> Any:
        """``value`` in the object store once, for ``copies`` workers to read."""
        count_messages(payload_bytes(value) * copies, 0, 0)
        return self._init().put(value)

    def call(self, w: int, method: str, args: tuple) -> Any:
        return self.call_each([(w, method, args)])[0]

    def call_each(self, calls: list[tuple[int, str, tuple]]) -> list[Any]:
        """Call ``method(*args)`` on worker ``w`` for each, all at once; the replies in the
        calls' order (a lost worker: :class:`~.ray_store.WorkerLost`)."""
        replies = self._receive([self._send(w, m, a) for w, m, a in calls])
        count_messages(payload_bytes([a for _, _, a in calls]), payload_bytes(replies), len(calls))
        return replies

    def memory(self) -> list[dict[str, Any]]:
        """Each worker's node, the feature bytes it holds and its peak memory."""
        every = range(len(self.workers))
        pings = self._receive([self._send(w, "ping", ()) for w in every])
        held = self._receive([self._send(w, "stored", ()) for w in every])
        peaks = self._receive([self._send(w, "peak_rss", ()) for w in every])
        return [
            {"node": node, "pid": pid, "feature_bytes": sum(h.values()), "peak_rss": peak}
            for (_, pid, node), h, peak in zip(pings, held, peaks)
        ]

    def close(self) -> None:
        for w in range(len(self.workers)):
            self._kill(w)
        self.workers, self.nodes, self.tokens = [], [], []

    # --- Ray itself ---
    def _send(self, w: int, method: str, args: tuple) -> Any:
        return getattr(self.workers[w], method).remote(*args)

    def _started(self, handles: list[Any]) -> int:
        ready, _ = self._init().wait(handles, num_returns=len(handles), timeout=START_SECONDS)
        return len(ready)

    def _receive(self, handles: list[Any]) -> list[Any]:
        from aflite.distributed.ray_store import WorkerLost, lost

        ray = self._init()
        try:
            return [ray.get(r) for r in handles]  # in order: the same sums whatever came first
        except Exception as e:
            if lost(e):
                raise WorkerLost(str(e)) from e
            if isinstance(e, ray.exceptions.RayTaskError) and isinstance(e.cause, Exception):
                raise e.cause from None  # the caller's mistake, as one process raises it
            raise

    def _ping(self, w: int) -> str | None:
        """Worker ``w``'s token; DEAD if it is gone for good, None while it restarts."""
        ray = self._init()
        died = getattr(ray.exceptions, "ActorDiedError", ())
        try:
            return ray.get(self.workers[w].ping.remote(), timeout=30)[0]
        except died:
            return DEAD
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            return None

    def _kill(self, w: int) -> None:
        _ray().kill(self.workers[w])


def _runs(sizes: np.ndarray, k: int) -> list[int]:
    """Each of ``len(sizes)`` consecutive shards' worker, ``k`` workers of one run each: the
    cuts at the shard boundaries nearest to equal rows."""
    n = len(sizes)
    edges = np.concatenate([[0], np.cumsum(sizes)])
    cuts = [0]
    for j in range(1, k):
        lo, hi = cuts[-1] + 1, n - (k - j)
        ideal = j * edges[-1] / k
        cuts.append(lo + int(np.argmin(np.abs(edges[lo : hi + 1] - ideal))))
    cuts.append(n)
    return [w for w in range(k) for _ in range(cuts[w], cuts[w + 1])]


def _node_id(node: str) -> str:
    """A Ray node id for a node named by its id or its IP address."""
    import ray

    for n in ray.nodes():
        if node in (n.get("NodeID"), n.get("NodeManagerAddress")) and n.get("Alive"):
            return n["NodeID"]
    raise ValueError(f"ShardedFeatures: no live Ray node {node!r}")


class _Encoder:
    def __init__(self, model: str) -> None:
        from aflite.features.encoders import load_encoder

        self.st = load_encoder(model, "cuda" if torch.cuda.is_available() else "cpu")

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        emb = self.st.encode(
            list(batch["text"]),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return {"i": batch["i"], "emb": emb.astype(np.float32)}


def _encoder_pool(
    address: str | None, num_gpus: float | None, concurrency: int | None
) -> tuple[Any, float, int]:
    """Ray, connected (to ``address``), the GPUs an encoder actor takes (one each where the
    cluster has GPUs, unless ``num_gpus`` says) and how many actors run (``concurrency``, else
    one a GPU or a CPU)."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    resources = ray.cluster_resources()
    gpus = num_gpus if num_gpus is not None else (1 if resources.get("GPU", 0) >= 1 else 0)
    workers = concurrency or max(
        1, int(resources.get("GPU", 0)) if gpus else int(resources.get("CPU", 1))
    )
    return ray, gpus, workers


def embed_with_ray(
    texts: Sequence[str],
    model: str,
    *,
    batch_size: int = 256,
    concurrency: int | None = None,
    num_gpus: float | None = None,
    address: str | None = None,
) -> np.ndarray:
    """Embed ``texts`` with a sentence-transformers model over Ray Data (``map_batches`` with
    one encoder actor per worker; GPU actors when the cluster has GPUs). Rows come back in
    input order."""
    ray, gpus, workers = _encoder_pool(address, num_gpus, concurrency)
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    out = ds.map_batches(
        _Encoder,
        fn_constructor_kwargs={"model": model},
        batch_size=batch_size,
        concurrency=workers,
        num_gpus=gpus,
        batch_format="numpy",
    )
    idx, embs = [], []
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        idx.append(batch["i"])
        embs.append(batch["emb"])
    order = np.argsort(np.concatenate(idx))
    return np.concatenate(embs)[order]


class _PartEncoder(_Encoder):
    def encode(self, texts: list[str], path: str, batch_size: int) -> int:
        emb = self.st.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)  # fmt: skip
        tmp = f"{path}.part"
        with open(tmp, "wb") as f:  # whole or absent: a reader never sees half a part
            np.save(f, emb.astype(np.float32))
        os.replace(tmp, path)
        return len(emb)


def embed_to_parts(
    texts: Sequence[str],
    model: str,
    folder: str | os.PathLike,
    *,
    rows: int = SHARD_ROWS,
    batch_size: int = 256,
    concurrency: int | None = None,
    num_gpus: float | None = None,
    address: str | None = None,
) -> ShardedFeatures:
    """Embed ``texts`` on Ray workers, each writing the embeddings of its parts (``rows`` texts
    a part) as ``part-00000.npy``, ... into ``folder``, storage every node reaches at that
    path: the embeddings never come to this process. The parts, as
    :class:`~aflite.ShardedFeatures`, are what ``aflite.filter(..., backend=RayBackend(...))``
    then reads where its workers are."""
    from ray.util import ActorPool

    ray, gpus, workers = _encoder_pool(address, num_gpus, concurrency)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(list(texts[s : s + rows]), str(out / f"part-{k:05d}.npy"))
            for k, s in enumerate(range(0, len(texts), rows))]  # fmt: skip
    encoder = ray.remote(num_gpus=gpus)(_PartEncoder)
    actors = [encoder.remote(model) for _ in range(min(workers, len(jobs)))]
    try:
        pool = ActorPool(actors)
        list(pool.map(lambda a, job: a.encode.remote(job[0], job[1], batch_size), jobs))
    finally:
        for a in actors:
            ray.kill(a)
    return ShardedFeatures([path for _, path in jobs])


@register_backend("ray", description="rows in shards held by Ray workers; embeddings on Ray")
def _start_ray_backend(address: str | None = None) -> RayBackend:
    return RayBackend(address=address)
