"""A phase's work over the shards of the rows (:mod:`.shards`): what each shard holds, how a
function runs on every shard, and how a phase's block design reaches them.

A family that runs over shards writes its per-shard work as a function ``fn(shard, *args)``
and asks a :class:`ShardSet` to ``map`` it (one result per shard, in shard order: a row's
counts) or to ``reduce`` it (the shards' partial sums added along the tree of
:func:`~.shards.tree_value`). :class:`LocalShards` runs them in this process, on views of
the one store; a distributed backend's shard set runs the same functions where the shards
live and adds the same partials along the same tree, so both give the same bits.

A shard learns a phase's block design as each of its current rows' block and place in the
dealing (:func:`design_payload`: O(rows) for the whole set, and the (B, P) incidence), not
as a rows x partitions mask, and rebuilds the design of its own rows (:func:`shard_design`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.numerics.blocks import BlockDesign
from aflite.algorithm.numerics.shards import tree_height, tree_value
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "LocalShards",
    "Shard",
    "ShardSet",
    "add_partials",
    "design_payload",
    "first_tasks",
    "on",
    "place_counts",
    "shard_design",
    "shards_of",
]


@dataclass
class Shard:
    """One shard where it is held: its stored rows (``store``, whose ``rows`` are input
    rows), their labels, and what a phase keeps between the calls it makes (``state``)."""

    index: int
    store: FeatureStore
    y: torch.Tensor
    state: dict[str, Any] = field(default_factory=dict)


class ShardSet(Protocol):
    """The shards of the stored rows, wherever they are held. ``each``: per shard number,
    more arguments for that shard's call only."""

    n_shards: int

    def map(self, fn: Callable[..., Any], *args: Any, each: Sequence[tuple] | None = None):
        """``[fn(shard, *args, *each[i]) for every shard i]``, in shard order."""
        ...

    def reduce(self, fn: Callable[..., Any], *args: Any, each: Sequence[tuple] | None = None):
        """Every shard's ``fn(shard, *args, *each[i])`` (a tensor, a tuple of tensors, or
        None for nothing) added along the shards' tree (:func:`add_partials`)."""
        ...


def add_partials(a: Any, b: Any) -> Any:
    """``a + b`` of two partial sums: tensors, tuples of tensors, or None (nothing). New
    tensors: a partial may be a worker's buffer or another node's value."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(add_partials(x, y) for x, y in zip(a, b))
    return a + b.to(a.device)


def on(shard: Shard, value: Any) -> Any:
    """A value a shard was sent (a tensor, or an array from another process), as a tensor on
    the shard's device; None stays None."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(value)
    return value.to(shard.store.device)


class LocalShards:
    """The shards of one store in this process: a view of the stored rows per shard."""

    def __init__(self, store: FeatureStore, y: torch.Tensor) -> None:
        self.store = store
        self.shards = [
            Shard(i, store.view(a, b), y[a:b]) for i, (a, b) in enumerate(store.stored_shards())
        ]
        self.n_shards = len(self.shards)

    def _args(self, i: int, args: tuple, each: Sequence[tuple] | None) -> tuple:
        return args if each is None else (*args, *each[i])

    def map(self, fn: Callable[..., Any], *args: Any, each: Sequence[tuple] | None = None):
        return [fn(s, *self._args(s.index, args, each)) for s in self.shards]

    def reduce(self, fn: Callable[..., Any], *args: Any, each: Sequence[tuple] | None = None):
        n = self.n_shards

        def leaf(i: int) -> Any:
            return fn(self.shards[i], *self._args(i, args, each))

        return tree_value(tree_height(n), 0, n, leaf, add_partials)


def shards_of(store: Any, y: torch.Tensor) -> ShardSet:
    """The shards of a store's rows: a store held elsewhere gives its own (``shard_set()``, a
    distributed backend's), this process's store views of itself (labels ``y``, stored rows')."""
    remote = getattr(store, "shard_set", None)
    return remote() if remote is not None else LocalShards(store, y)


def design_payload(
    design: BlockDesign, positions: torch.Tensor, store: Any
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per shard of ``store``: its current rows (input rows, ascending), each one's block and
    its place in the design's dealing (``design.order``). ``positions``: the store positions
    of the current rows the design dealt."""
    order = to_host(design.order)
    sizes = np.diff(to_host(design.bounds))
    block_of_slot = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    dealt = store.rows[to_host(positions)[order]]  # the input row in each place of the dealing
    slot = np.argsort(dealt, kind="stable")
    rows = dealt[slot]
    block = block_of_slot[slot]
    cut = np.searchsorted(rows, store.shard_bounds)
    return [(rows[a:b], block[a:b], slot[a:b].astype(np.int64)) for a, b in zip(cut[:-1], cut[1:])]


def shard_design(
    shard: Shard,
    rows: np.ndarray,
    block: np.ndarray,
    slot: np.ndarray,
    incidence: torch.Tensor,
    *,
    every_block: bool = False,
) -> tuple[BlockDesign, torch.Tensor]:
    """The design of a shard's current ``rows`` (its payload from :func:`design_payload`)
    and their store positions: the shard's rows of each block, in the order the dealing put
    them. Blocks without a row here are left out, or kept empty (``every_block``: the design
    of a whole phase)."""
    dev = shard.store.device
    order = np.argsort(slot, kind="stable")
    n_blocks = int(incidence.shape[0])
    counts = np.bincount(block, minlength=n_blocks)
    keep = np.arange(n_blocks) if every_block else np.nonzero(counts)[0]
    bounds = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(counts[keep], out=bounds[1:])
    inc = to_device(incidence, dev)
    design = BlockDesign(
        to_device(order.astype(np.int64), dev),
        to_device(bounds, dev),
        inc if every_block else inc[to_device(keep.astype(np.int64), dev)],
    )
    return design, to_device(shard.store.positions(rows), dev)


def first_tasks(task_rows: Sequence[Sequence[int]], at_least: int) -> tuple[list[tuple], int]:
    """Per shard, how many of its first tasks to take (as ``each`` arguments), shard after
    shard, until they hold ``at_least`` rows (``task_rows``: each shard's rows a task); and
    how many rows they hold: a preconditioner's sample, the same whatever the workers."""
    take, rows = [], 0
    for counts in task_rows:
        n = 0
        while rows < at_least and n < len(counts):
            rows += counts[n]
            n += 1
        take.append((n,))
    return take, rows


def place_counts(
    store: Any, per_shard: Sequence[tuple], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """(N_store,) correct and held-out counts from every shard's (input rows, correct,
    held out) of its rows."""
    correct = torch.zeros(store.n_stored, dtype=torch.float32, device=device)
    held = torch.zeros_like(correct)
    for rows, c, h in per_shard:
        pos = to_device(store.positions(rows), device)
        correct[pos] = to_device(c, device)
        held[pos] = to_device(h, device)
    return correct, held
