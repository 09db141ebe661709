"""The driver's side of rows held on Ray workers: which rows are stored where, and how a
phase's per-shard functions reach them.

:class:`RayStore` stands where one process keeps its
:class:`~aflite.algorithm.numerics.store.FeatureStore`: the phase runner asks it for store
positions, compaction and sizes, never for a feature. It holds O(N) numbers (the stored
rows); the features are read, standardised and kept by the workers, each holding whole
shards. :class:`RayShards` runs a function on every shard (``map``) or adds the shards'
partial sums along their tree (``reduce``), with Ray's own calls: arguments put in the
object store once, results fetched in a fixed order.

A worker that dies is restarted by Ray (``max_restarts``) or replaced; :meth:`RayStore.recover`
gives it its shards back as they are stored now, and the caller does its phase again from
the driver's state, so the result is the one an uninterrupted run gets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite.algorithm.numerics.item_store import scale_of
from aflite.algorithm.numerics.shards import ShardedFeatures, shard_bounds, tree_height, tree_value
from aflite.algorithm.numerics.store import StoredRows, feature_scale, merge_moments
from aflite.distributed.ray_worker import LostState, pack, unpack

__all__ = ["RayShards", "RayStore", "WorkerLost", "again", "lost"]

SEND_BYTES = 16 << 20  # rows of an array input go to a worker in messages of this size


class WorkerLost(RuntimeError):
    """A worker died, or lost what it held, during a call."""


class RayStore(StoredRows):
    """Rows held in shards by a backend's workers (see the module docstring). Built by the
    phase runner as a family's store: ``RayStore(backend, x, device, ...)``, ``x`` an array
    (cut into shards of ``SHARD_ROWS`` and sent once) or a
    :class:`~aflite.algorithm.numerics.shards.ShardedFeatures` (each worker reads its parts)."""

    sparse = None

    def __init__(
        self,
        backend: Any,
        x: Any,
        device: torch.device,
        *,
        chunk_rows: int | None = None,
        in_place: bool = False,
        sparse_rows: bool = False,
    ) -> None:
        self.backend, self.x = backend, x
        self.device = device
        # multiple-choice items (N, K, d) are held as rows of K*d (an item's choices side by
        # side), as one process's store of items holds them
        self.items = len(x.shape) == 3
        self.n_input, self.dim = x.shape[0], int(np.prod(x.shape[1:]))
        self.chunk_rows = chunk_rows or 65_536
        self.raw_float32 = np.dtype(x.dtype) == np.float32
        self.shard_bounds = shard_bounds(x)
        self.rows = np.arange(self.n_input, dtype=np.int64)
        self.labels: np.ndarray | None = None
        self.owner = backend.place(
            self.n_shards, getattr(x, "nodes", None), np.diff(self.shard_bounds)
        )
        backend.call_each([(w, "reset", ()) for w in sorted(set(self.owner))])
        moments = self._read(range(len(self.owner)))
        parts = [moments[i] for i in range(self.n_shards)]
        if self.items:  # the items' scale (what the workers hold them with) and each one's
            # real choices, in shard order
            self.moments: Any = scale_of([(sumsq, count) for sumsq, count, _ in parts])
            self.hold_choices(np.concatenate([valid for _, _, valid in parts]))
        else:
            n, mean, m2 = merge_moments(parts)
            std = np.sqrt(m2 / max(n, 1))
            self.moments = (mean, std)
            self.mean64, self.scale64 = mean, feature_scale(mean, std)
        self._hold(range(len(self.owner)))

    # --- sizes and positions: StoredRows's, and the shards' ---
    @property
    def n_shards(self) -> int:
        return len(self.shard_bounds) - 1

    def stored_shards(self) -> list[tuple[int, int]]:
        cut = np.searchsorted(self.rows, self.shard_bounds).tolist()
        return list(zip(cut[:-1], cut[1:]))

    def compact_to(self, rows: np.ndarray) -> np.ndarray:
        """Keep only ``rows`` (sorted input rows): each worker drops the others' features."""
        pos = self.positions(rows)
        self.rows = np.asarray(rows, dtype=np.int64).copy()
        if self.labels is not None:
            self.labels = self.labels[pos]
        again(lambda: self.backend.call_each(self._by_worker("compact", self._stored_rows())), self)
        return pos

    def standardised(self) -> torch.Tensor:
        raise ValueError("the features are held by the Ray workers, not by this process")

    def shard_set(self) -> RayShards:
        return RayShards(self)

    # --- what the workers hold ---
    def _stored_rows(self) -> dict[int, np.ndarray]:
        return {i: self.rows[a:b] for i, (a, b) in enumerate(self.stored_shards())}

    def _by_worker(self, method: str, per_shard: dict[int, Any]) -> list[tuple[int, str, tuple]]:
        grouped: dict[int, dict[int, Any]] = {}
        for i, value in per_shard.items():
            grouped.setdefault(self.owner[i], {})[i] = value
        return [(w, method, (values,)) for w, values in sorted(grouped.items())]

    def _read(self, shards: Any) -> dict[int, tuple]:
        """Each worker opens its shards; their moments."""
        x, sources = self.x, {}
        # the items of parts were checked by no one yet: where they are read (an array's were)
        check = isinstance(x, ShardedFeatures)
        for i in shards:
            a, b = int(self.shard_bounds[i]), int(self.shard_bounds[i + 1])
            if isinstance(x, ShardedFeatures) and not isinstance(x.parts[i], np.ndarray):
                sources[i] = (x.parts[i], a, check)
                continue
            part = x.part(i) if isinstance(x, ShardedFeatures) else x[a:b]
            step = max(1, SEND_BYTES // max(1, self.dim * part.itemsize))
            for s in range(0, len(part), step):
                chunk = np.ascontiguousarray(part[s : s + step])
                self.backend.call(self.owner[i], "receive", (i, chunk))
            sources[i] = (None, a, check)
        out: dict[int, tuple] = {}
        for reply in self.backend.call_each(self._by_worker("read", sources)):
            out.update(reply)
        return out

    def _hold(self, shards: Any) -> None:
        stored = self._stored_rows()
        keep = {i: (int(self.shard_bounds[i]), stored[i]) for i in shards}
        calls = [(w, m, (self.moments, *a)) for w, m, a in self._by_worker("hold", keep)]
        self.backend.call_each(calls)
        if self.labels is not None:
            self._send_labels(shards)

    def set_labels(self, y: np.ndarray) -> None:
        """The class codes of the stored rows (the model's ``attach``)."""
        self.labels = np.asarray(y, dtype=np.int64)
        again(lambda: self._send_labels(range(self.n_shards)), self)

    def _send_labels(self, shards: Any) -> None:
        cut = self.stored_shards()
        y = {i: self.labels[cut[i][0] : cut[i][1]] for i in shards}
        self.backend.call_each(self._by_worker("labels", y))

    def recover(self) -> None:
        """Give every worker that lost its shards (restarted, or replaced) what it held."""
        lost = self.backend.revive()
        shards = [i for i, w in enumerate(self.owner) if w in lost]
        if shards:
            self._read(shards)
            self._hold(shards)


class RayShards:
    """A :class:`~aflite.algorithm.numerics.shard_set.ShardSet` of the shards a
    :class:`RayStore`'s workers hold."""

    def __init__(self, store: RayStore) -> None:
        self.store = store
        self.n_shards = store.n_shards
        self.workers = sorted(set(store.owner))
        self.mine = {w: [i for i, o in enumerate(store.owner) if o == w] for w in self.workers}

    def map(self, fn: Any, *args: Any, each: Any = None) -> list[Any]:
        replies = self._run(fn, args, each, reduce=False)
        out: dict[int, Any] = {}
        for reply in replies:
            out.update(reply)
        return [out[i] for i in range(self.n_shards)]

    def reduce(self, fn: Any, *args: Any, each: Any = None) -> Any:
        from aflite.algorithm.numerics.shard_set import add_partials

        known: dict[tuple[int, int], Any] = {}
        for reply in self._run(fn, args, each, reduce=True):
            known.update({node: unpack(v) for node, v in reply.items()})
        n = self.n_shards

        def leaf(i: int) -> Any:
            raise RuntimeError(f"internal error: no worker sent shard {i}'s sum")

        return tree_value(tree_height(n), 0, n, leaf, add_partials, known)

    def _run(self, fn: Any, args: tuple, each: Any, reduce: bool) -> list[dict]:
        backend, owner, workers = self.store.backend, self.store.owner, self.workers
        per: dict[int, dict[int, tuple]] = {w: {} for w in workers}
        if each is not None:
            for i, extra in enumerate(each):
                per[owner[i]][i] = pack(tuple(extra))
        # the arguments every shard shares go into the object store once
        shared = backend.put(pack(tuple(args)), copies=len(workers))
        calls = [
            (w, "run", (fn, shared, self.mine[w], per[w] or None, reduce, self.n_shards))
            for w in workers
        ]
        return backend.call_each(calls)


def again(call: Any, store: RayStore) -> Any:
    """``call()``, again after the workers that were lost are given their shards back, at
    most the backend's ``max_restarts`` times."""
    limit = store.backend.max_restarts
    for attempt in range(limit + 1):
        try:
            return call()
        except WorkerLost:
            if attempt == limit:
                raise
            store.recover()
    raise AssertionError("unreachable")


def lost(error: BaseException) -> bool:
    """Whether a Ray error means a worker died or lost its state (else: the caller's)."""
    import ray.exceptions as rex

    gone = tuple(
        getattr(rex, name)
        for name in ("RayActorError", "ActorUnavailableError", "WorkerCrashedError")
        if hasattr(rex, name)
    )
    if isinstance(error, gone):
        return True
    if isinstance(error, rex.RayTaskError):
        return isinstance(error.cause, LostState) or lost(error.cause)
    return isinstance(error, (LostState, WorkerLost))
