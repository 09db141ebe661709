"""Rows held in shards, and sums over shards in one fixed order.

A feature matrix too large for one machine is held as shards: fixed sets of rows, each held
whole by one worker. The shards are defined by the data, never by the workers: the parts of a
:class:`ShardedFeatures` input (one ``.npy`` file, or array, a part), or cuts of
``SHARD_ROWS`` rows of an array. Every sum over rows a phase needs (a gradient, a product of
every part's system, a Gram matrix) is computed shard by shard, each shard's partial in its
own fixed order, and the partials are added up along one binary tree over the shard numbers
(:func:`tree_value`): node (l, i) covers shards ``i 2^l`` to ``(i+1) 2^l - 1`` and is its
two children added. A worker holding a run of shards sends the largest whole subtrees it
holds (:func:`owned_nodes`, a few per worker), and the driver adds those along the same
tree; so the bits of every sum, and the kept set, do not depend on how many workers there
are or which shards each holds. One process runs the same tree over the same shards.

Importing this module loads no torch: an input's shards are read from NumPy headers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "SHARD_ROWS",
    "ShardedFeatures",
    "owned_nodes",
    "shard_bounds",
    "tree_height",
    "tree_value",
]

# Rows a shard of an array holds. Below this one shard holds every row and a phase runs as it
# always has; a cluster pays off beyond it (or on an input that brings its own parts).
SHARD_ROWS = 1 << 20


class ShardedFeatures:
    """An (N, d) feature matrix, or (N, K, d) multiple-choice items, held as parts, each part
    one shard: ``.npy`` files (opened as memory maps where they are read: by the worker that
    holds the shard on a cluster, so the driver never reads a feature), or arrays. Rows are
    numbered across the parts in order.

    Parameters
    ----------
    parts:
        Paths of ``.npy`` files of (n_i, d) real numbers (or (n_i, K, d) items), or arrays,
        all with the same trailing shape.
    nodes:
        Optionally, for each part, the Ray node (its id or IP address) whose worker must hold
        it: for files on a node's own disk. Default: any worker (a shared file system).

    Examples
    --------
    >>> import numpy as np, aflite
    >>> x = np.zeros((10, 3), dtype=np.float32)
    >>> aflite.ShardedFeatures.split(x, rows=4).shape
    (10, 3)
    """

    def __init__(self, parts: Sequence[Any], *, nodes: Sequence[str] | None = None) -> None:
        if isinstance(parts, (str, os.PathLike, np.ndarray)) or len(parts) == 0:
            raise ValueError("ShardedFeatures: give a list of one or more parts (files or arrays)")
        self.parts = [p if isinstance(p, np.ndarray) else str(Path(p)) for p in parts]
        shapes, dtypes = [], []
        for i, p in enumerate(self.parts):
            a = p if isinstance(p, np.ndarray) else _open(p)
            if a.ndim not in (2, 3) or a.shape[0] == 0:
                raise ValueError(
                    f"ShardedFeatures: part {i} has shape {a.shape}, not (n, d) rows or "
                    "(n, n_choices, d) items"
                )
            if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
                raise ValueError(f"ShardedFeatures: part {i} holds {a.dtype}, not real numbers")
            shapes.append(a.shape)
            dtypes.append(a.dtype)
        if len({len(s) for s in shapes}) != 1:
            kinds = {2: "rows (n, d)", 3: "items (n, n_choices, d)"}
            odd = next(i for i, s in enumerate(shapes) if len(s) != len(shapes[0]))
            raise ValueError(
                f"ShardedFeatures: part {odd} holds {kinds[len(shapes[odd])]}, part 0 "
                f"{kinds[len(shapes[0])]}: every part must hold the same kind"
            )
        if len({s[1:] for s in shapes}) != 1:
            what = "features" if len(shapes[0]) == 2 else "(choices, features)"
            raise ValueError(
                f"ShardedFeatures: every part needs the same number of {what}, got "
                + ", ".join(str(s[1:] if len(s) == 3 else s[1]) for s in shapes)
            )
        if nodes is not None and len(nodes) != len(self.parts):
            raise ValueError(f"ShardedFeatures: {len(nodes)} nodes for {len(self.parts)} parts")
        self.nodes = None if nodes is None else [str(n) for n in nodes]
        self.bounds = np.zeros(len(shapes) + 1, dtype=np.int64)
        np.cumsum([s[0] for s in shapes], out=self.bounds[1:])
        self.shape = (int(self.bounds[-1]), *(int(v) for v in shapes[0][1:]))
        self.dtype = np.result_type(*dtypes)
        self.ndim = len(self.shape)

    @classmethod
    def split(cls, x: np.ndarray, rows: int) -> ShardedFeatures:
        """``x`` cut into parts of ``rows`` rows (views, no copy)."""
        if rows < 1:
            raise ValueError(f"rows must be positive, got {rows}")
        return cls([x[s : s + rows] for s in range(0, len(x), rows)])

    @classmethod
    def save(cls, x: np.ndarray, folder: str | os.PathLike, rows: int) -> ShardedFeatures:
        """Write ``x`` as ``part-00000.npy``, ... of ``rows`` rows each into ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for k, s in enumerate(range(0, len(x), rows)):
            path = folder / f"part-{k:05d}.npy"
            np.save(path, np.ascontiguousarray(x[s : s + rows]))
            paths.append(path)
        return cls(paths)

    @property
    def n_parts(self) -> int:
        return len(self.parts)

    def part(self, i: int) -> np.ndarray:
        """Part ``i``'s rows: the array, or the file as a read-only memory map."""
        p = self.parts[i]
        return p if isinstance(p, np.ndarray) else _open(p)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        """Rows by a slice (step 1) or an array of row numbers, read from their parts."""
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step != 1:
                raise IndexError("ShardedFeatures: slices of step 1 only")
            rows = np.arange(start, stop)
        else:
            rows = np.asarray(key, dtype=np.int64).reshape(-1)
        out = np.empty((len(rows), *self.shape[1:]), dtype=self.dtype)
        which = np.searchsorted(self.bounds, rows, side="right") - 1
        for i in np.unique(which):
            at = which == i
            local = rows[at] - self.bounds[i]
            part = self.part(int(i))
            if len(local) and local[-1] - local[0] + 1 == len(local):  # a run: one slice
                out[at] = part[local[0] : local[-1] + 1]
            else:
                out[at] = part[local]
        return out

    def __repr__(self) -> str:
        kind = "arrays" if isinstance(self.parts[0], np.ndarray) else "files"
        return f"ShardedFeatures({self.n_parts} parts ({kind}), shape={self.shape})"


def _open(path: str) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"ShardedFeatures: cannot read {path} as a .npy matrix: {e}") from None


def shard_bounds(x: Any) -> np.ndarray:
    """(S+1,) the first input row of every shard of ``x``, and N: a :class:`ShardedFeatures`'
    parts, else cuts of ``SHARD_ROWS`` rows."""
    if isinstance(x, ShardedFeatures):
        return x.bounds.copy()
    n = int(x.shape[0])
    return np.asarray([*range(0, n, SHARD_ROWS), n], dtype=np.int64)


def tree_height(n: int) -> int:
    """Levels above the leaves of the tree over ``n`` shards."""
    return max(0, (n - 1).bit_length())


def _span(level: int, i: int, n: int) -> tuple[int, int]:
    return i << level, min((i + 1) << level, n)


def owned_nodes(owned: Sequence[int], n: int) -> list[tuple[int, int]]:
    """The largest nodes of the tree over ``n`` shards whose shards are all in ``owned``:
    what a worker holding those shards sends (one node for an aligned run, about two per
    level otherwise)."""
    held = set(owned)
    out: list[tuple[int, int]] = []

    def visit(level: int, i: int) -> None:
        s, e = _span(level, i, n)
        inside = sum(1 for k in range(s, e) if k in held)
        if inside == e - s:
            out.append((level, i))
        elif inside:
            visit(level - 1, 2 * i)
            if (2 * i + 1) << (level - 1) < n:
                visit(level - 1, 2 * i + 1)

    if n:
        visit(tree_height(n), 0)
    return out


def tree_value(
    level: int,
    i: int,
    n: int,
    leaf: Callable[[int], Any],
    add: Callable[[Any, Any], Any],
    known: dict[tuple[int, int], Any] | None = None,
) -> Any:
    """Node (``level``, ``i``) of the tree over ``n`` shards: a ``known`` node's value, a
    leaf's ``leaf(shard)``, else its children added by ``add`` (a child past the last shard
    is absent: the node is its left child). Depth first, so one process holds a partial per
    level."""
    if known is not None and (level, i) in known:
        return known[(level, i)]
    if level == 0:
        return leaf(i)
    left = tree_value(level - 1, 2 * i, n, leaf, add, known)
    if (2 * i + 1) << (level - 1) >= n:
        return left
    return add(left, tree_value(level - 1, 2 * i + 1, n, leaf, add, known))
