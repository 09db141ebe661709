"""What one Ray worker does: hold its shards of the rows, and run a phase's per-shard
functions on them (:mod:`aflite.algorithm.numerics.shard_set`).

A worker reads its shards where they are (a ``.npy`` file as a memory map, or rows the
driver sent once in chunks), sends back each shard's moments, then keeps the rows
standardised with the moments of all input rows; from then on it receives only weights,
designs and row numbers, and sends back partial sums and per-row counts. A function's
``reduce`` returns the largest subtrees of the shards' tree it holds whole
(:func:`~aflite.algorithm.numerics.shards.owned_nodes`), so the driver adds the same partials
along the same tree however the shards are spread.
"""

from __future__ import annotations

import os
import resource
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

__all__ = ["LostState", "ShardWorker", "pack", "unpack"]


class LostState(RuntimeError):
    """The worker does not hold what the call needs (it was restarted and lost its shards,
    or a phase's state): the driver gives the shards back and does the phase again."""


def pack(value: Any) -> Any:
    """Tensors as NumPy arrays (sent without a copy), in nested tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, tuple):
        return tuple(pack(v) for v in value)
    if isinstance(value, list):
        return [pack(v) for v in value]
    if isinstance(value, dict):
        return {k: pack(v) for k, v in value.items()}
    return value


def unpack(value: Any) -> Any:
    """The inverse of :func:`pack` for floating-point sums: arrays as CPU tensors."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fb":
        return torch.from_numpy(np.array(value))
    if isinstance(value, tuple):
        return tuple(unpack(v) for v in value)
    return value


class ShardWorker:
    """A Ray actor's state: its shards and the threads it computes on."""

    def __init__(self, threads: int, gpu: bool) -> None:
        self.threads = max(1, int(threads))
        self.device = torch.device("cuda" if gpu and torch.cuda.is_available() else "cpu")
        self.token = uuid.uuid4().hex  # a restarted worker has another: it holds nothing
        self.raw: dict[int, Any] = {}
        self.valid: dict[int, np.ndarray] = {}  # each shard's items' real choices, as read
        self.parts: dict[int, list[np.ndarray]] = {}
        self.shards: dict[int, Any] = {}

    def ping(self) -> tuple[str, int, str]:
        """This worker's token, process and node."""
        import ray

        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
        return self.token, os.getpid(), node

    def peak_rss(self) -> int:
        """The most memory this worker's process has held (bytes)."""
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def reset(self) -> None:
        """Drop every shard (an earlier run's)."""
        self.raw, self.valid, self.parts, self.shards = {}, {}, {}, {}

    def receive(self, shard: int, chunk: np.ndarray) -> None:
        """Rows of shard ``shard`` the driver sends, in order (an array input)."""
        self.parts.setdefault(shard, []).append(np.array(chunk))

    def read(self, sources: dict[int, tuple[Any, int, bool]]) -> dict[int, tuple]:
        """Open each shard (a ``.npy`` path, or None for the rows received; the input row of
        its first row; whether its items are still to be checked) and return its moments:
        rows' (:func:`~aflite.algorithm.numerics.store.chunk_moments`, checked finite; a row's
        number counted from the shard's start) or items'
        (:func:`~aflite.algorithm.numerics.item_store.item_moments`; an item's number counted
        from the input's start)."""
        from aflite.algorithm.numerics.item_store import item_moments
        from aflite.algorithm.numerics.store import chunk_moments

        out = {}
        for i, (source, first, check) in sources.items():
            if source is None:
                x = np.concatenate(self.parts.pop(i))
            else:
                x = np.load(source, mmap_mode="r", allow_pickle=False)
            self.raw[i] = x
            if x.ndim == 3:
                out[i] = item_moments(x, first, check=check)
                self.valid[i] = out[i][2]
            else:
                out[i] = chunk_moments(x, finite=True)
        return out

    def hold(self, moments: Any, shards: dict[int, tuple]) -> None:
        """Keep each shard's stored rows standardised with the moments of all input rows
        (items: centred on their real choices and scaled by the scale of all items):
        ``shards[i]`` = (the input row of its first row, its stored input rows)."""
        from aflite.algorithm.numerics.item_store import item_rows
        from aflite.algorithm.numerics.shard_set import Shard
        from aflite.algorithm.numerics.store import FeatureStore

        for i, (first, rows) in shards.items():
            x = self.raw.pop(i)
            local = np.asarray(rows) - first
            whole = len(local) == len(x)
            if x.ndim == 3:
                mine = x if whole else x[local]
                valid = self.valid.pop(i)[local]
                store = FeatureStore.from_standardised(
                    item_rows(mine, valid, moments), self.device, rows=rows,
                    bounds=[first, first + len(x)],
                )  # fmt: skip
                store.hold_choices(valid)
            else:
                # rows read from a file or received: ours to standardise in place
                mine = np.array(x if whole else x[local], dtype=x.dtype, order="C")
                store = FeatureStore(mine, self.device, in_place=True, moments=moments, rows=rows)
            self.shards[i] = Shard(i, store, torch.zeros(len(rows), dtype=torch.int64))

    def labels(self, labels: dict[int, np.ndarray]) -> None:
        """The class codes of each shard's stored rows; a phase's state is dropped."""
        self._check(labels)
        for i, y in labels.items():
            shard = self.shards[i]
            shard.y = torch.as_tensor(y, dtype=torch.int64, device=self.device)
            shard.state.clear()

    def compact(self, rows: dict[int, np.ndarray]) -> None:
        """Keep only ``rows[i]`` (input rows) of each shard."""
        self._check(rows)
        for i, keep in rows.items():
            shard = self.shards[i]
            pos = shard.store.compact_to(np.asarray(keep))
            shard.y = shard.y[torch.as_tensor(pos, device=shard.y.device)]
            shard.state.clear()

    def stored(self) -> dict[int, int]:
        """The bytes of features each shard holds."""
        return {i: s.store.n_stored * s.store.dim * 4 for i, s in self.shards.items()}

    def run(
        self,
        fn: Callable[..., Any],
        args: tuple,
        mine: list[int],
        each: dict[int, tuple] | None,
        reduce: bool,
        n_shards: int,
    ) -> dict:
        """``fn`` on each of the shards ``mine`` held here: ``{shard: result}``, or, to
        ``reduce``, ``{node: value}`` of the largest subtrees of the shards' tree they hold
        whole."""
        from aflite._internal.numerics import own_numerics
        from aflite._internal.threads import compute_threads
        from aflite.algorithm.numerics.shard_set import add_partials
        from aflite.algorithm.numerics.shards import owned_nodes, tree_value

        self._check({i: None for i in mine})
        with compute_threads(self.threads), own_numerics():

            def leaf(i: int) -> Any:
                try:
                    return fn(self.shards[i], *args, *((each or {}).get(i, ())))
                except KeyError as e:  # a phase's state this worker no longer holds
                    raise LostState(f"shard {i}: {e} is not held") from None

            if not reduce:
                return {i: pack(leaf(i)) for i in mine}
            nodes = owned_nodes(mine, n_shards)
            return {node: pack(tree_value(*node, n_shards, leaf, add_partials)) for node in nodes}

    def _check(self, wanted: dict) -> None:
        missing = [i for i in wanted if i not in self.shards]
        if missing:
            raise LostState(f"shards {missing} are not held here")
