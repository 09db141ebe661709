"""The feature matrix of a filtering run, standardised, on the compute device.

Features are standardised with the mean and standard deviation of *all input rows*, computed
once in float64 with a chunked two-pass (Chan) update, so an offset of 1e5 on every feature
loses nothing. Rows are centred before any product: folding the mean into the weights
(``x @ (s*W) - (mu*s) @ W``) cancels catastrophically when features carry a large offset.
The one exception is mostly-zero features whose means lie near zero, which the store also
keeps raw for the solver's sparse pass (:mod:`aflite.algorithm.numerics.sparse_rows`).

Rows are addressed by their position in the input. Rows that leave the set stay in storage
(masked out) until fewer than half of the stored rows are active; the active rows are then
compacted, in place when the buffer is ours.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.numerics.shards import ShardedFeatures, shard_bounds
from aflite.algorithm.numerics.sparse_rows import SparseRows

__all__ = [
    "FeatureStore",
    "chunk_moments",
    "feature_moments",
    "feature_scale",
    "merge_moments",
    "standardise",
]


def chunk_moments(x: Any, *, finite: bool = False) -> tuple[int, np.ndarray, np.ndarray]:
    """Rows, per-feature mean and sum of squared deviations (float64) of ``x``, one chunked
    pass (Chan et al.): chunks are centred on their own mean before squaring, so a large
    common offset does not cancel the variance away. ``finite``: a ValueError names the first
    row holding NaN or inf (for rows no earlier check read)."""
    n, d = x.shape
    mean = np.zeros(d, dtype=np.float64)
    m2 = np.zeros(d, dtype=np.float64)
    seen = 0
    step = max(1, 2**22 // max(1, d))
    for start in range(0, n, step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        if finite and not np.isfinite(block).all():
            bad = start + int(np.argwhere(~np.isfinite(block))[0][0])
            raise ValueError(f"features contain NaN or inf (first at row {bad})")
        k = block.shape[0]
        b_mean = block.mean(axis=0)
        b_m2 = ((block - b_mean) ** 2).sum(axis=0)
        seen, mean, m2 = merge_moments([(seen, mean, m2), (k, b_mean, b_m2)])
    return seen, mean, m2


def merge_moments(
    parts: list[tuple[int, np.ndarray, np.ndarray]],
) -> tuple[int, np.ndarray, np.ndarray]:
    """The moments of the rows of ``parts`` (each from :func:`chunk_moments`), merged in
    order: a shard's moments are merged as its chunks are, so one shard's are its own to the
    last bit."""
    seen, mean, m2 = 0, np.zeros_like(parts[0][1]), np.zeros_like(parts[0][2])
    for k, b_mean, b_m2 in parts:
        if k == 0:
            continue
        delta = b_mean - mean
        total = seen + k
        mean = mean + delta * (k / total)
        m2 = m2 + (b_m2 + delta * delta * (seen * k / total))
        seen = total
    return seen, mean, m2


def feature_moments(x: Any, *, finite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature mean and standard deviation (float64) over all rows: each shard's chunked
    moments (:func:`chunk_moments`), merged in shard order (the same on a cluster, where
    each worker sends its shards' moments)."""
    bounds = shard_bounds(x)
    parts = [
        chunk_moments(_rows_of(x, a, b), finite=finite) for a, b in zip(bounds[:-1], bounds[1:])
    ]
    n, mean, m2 = merge_moments(parts)
    return mean, np.sqrt(m2 / max(n, 1))


def _rows_of(x: Any, a: int, b: int) -> Any:
    """Rows ``a:b`` of ``x``: a part of a sharded input as it is, else a slice."""
    if isinstance(x, ShardedFeatures):
        i = int(np.searchsorted(x.bounds, a, side="right") - 1)
        if x.bounds[i] == a and x.bounds[i + 1] == b:
            return x.part(i)
    return x[a:b]


def feature_scale(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """1/std per feature; 0 for a constant feature, which carries no information."""
    return np.where(
        std > 1e-12 * np.maximum(1.0, np.abs(mean)), 1.0 / np.where(std > 0, std, 1), 0.0
    )


def standardise(x: np.ndarray) -> np.ndarray:
    """The matrix the linear family sees: every feature centred and scaled by its standard
    deviation over all rows (constant features become 0). For references and tests; the
    filter standardises chunk by chunk."""
    return FeatureStore(np.asarray(x), torch.device("cpu")).standardised().numpy()


def memory_quarter_bytes() -> int:
    """A quarter of physical memory: the largest matrix copied rather than read in chunks."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4)
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def _ownable(x: np.ndarray, device: torch.device) -> bool:
    """Can the store standardise ``x`` where it is (and keep it as its storage)?"""
    return (
        device.type == "cpu"
        and type(x) is np.ndarray
        and x.dtype == np.float32
        and x.flags.c_contiguous
        and x.flags.writeable
    )


class StoredRows:
    """What every store of a phase's rows shares: the sorted input rows it holds (``rows``),
    their store positions, and when dropping the removed ones is worth a compaction."""

    COMPACT_BELOW = 0.5
    rows: np.ndarray
    # multiple-choice items: the rows held when the store was made, and each one's real
    # choices (n, K); none for rows of features
    _choices: tuple[np.ndarray, np.ndarray] | None = None

    def hold_choices(self, valid: np.ndarray) -> None:
        """Record which choices of each stored item are real (``valid``: (n_stored, K))."""
        self._choices = (self.rows.copy(), np.asarray(valid, dtype=bool))

    def real_choices(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), K) bool: the real choices of the items ``rows`` (input rows held when
        the store was made)."""
        if self._choices is None:
            raise ValueError("internal error: the store holds rows, not multiple-choice items")
        held, valid = self._choices
        return valid[np.searchsorted(held, rows)]

    @property
    def n_stored(self) -> int:
        return len(self.rows)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """Store positions of sorted input rows."""
        pos = np.searchsorted(self.rows, rows)
        if len(rows) and (pos.max() >= self.n_stored or not np.array_equal(self.rows[pos], rows)):
            raise RuntimeError("internal error: rows are not in the working set")
        return pos

    def needs_compaction(self, n_rows: int) -> bool:
        return n_rows < self.COMPACT_BELOW * self.n_stored


class FeatureStore(StoredRows):
    """Standardised float32 rows of the caller's matrix on ``device``.

    An in-memory matrix is copied once, already standardised (so every product reads a
    ready matrix). A memory map, or a matrix over a quarter of physical memory, is read as
    is and standardised chunk by chunk, so matrices larger than RAM work. ``sparse_rows``
    also keeps mostly-zero rows raw (``sparse``) for the solver's sparse block pass.
    """

    def __init__(
        self,
        x: Any,
        device: torch.device,
        *,
        chunk_rows: int | None = None,
        copy_limit_bytes: int | None = None,
        in_place: bool = False,
        sparse_rows: bool = False,
        moments: tuple[np.ndarray, np.ndarray] | None = None,
        rows: np.ndarray | None = None,
    ) -> None:
        """``x``: an (N, d) array, memory map or :class:`~.shards.ShardedFeatures`.
        ``moments`` (mean, std): the features' over all input rows, where ``x`` is one shard
        of them (a worker's); ``rows``: then the input rows ``x`` holds (default 0..N-1)."""
        self.device = device
        self.n_input, self.dim = x.shape
        self.chunk_rows = chunk_rows or (1 << 20 if device.type == "cuda" else 65_536)
        # the shards of the rows (input rows): sums over them run shard by shard
        self.shard_bounds = shard_bounds(x) if rows is None else np.asarray([0, self.n_input])
        sharded = isinstance(x, ShardedFeatures)
        # a sharded input's rows were read by no earlier check
        mean, std = moments if moments is not None else feature_moments(x, finite=sharded)
        scale = feature_scale(mean, std)
        # float64 for folding the mean into weights, float32 on the device for standardising
        self.mean64, self.scale64 = mean, scale
        self.mean32 = torch.as_tensor(mean, dtype=torch.float32, device=device)
        self.scale32 = torch.as_tensor(scale, dtype=torch.float32, device=device)
        limit = memory_quarter_bytes() if copy_limit_bytes is None else copy_limit_bytes
        big = self.n_input * self.dim * 4 > limit
        self.rows = (
            np.arange(self.n_input, dtype=np.int64)
            if rows is None
            else np.asarray(rows, dtype=np.int64)
        )
        # with ``sparse_rows``, mostly-zero features (n-grams) are also kept raw for the
        # solver's sparse pass, read before an in-place standardisation overwrites them. A GPU
        # keeps the dense products.
        self.sparse: SparseRows | None = None
        # float32 input is standardised by the same float32 arithmetic on every path, so its
        # sparse rows give the stored values exactly (float64 input is rounded once, after)
        self.raw_float32 = x.dtype == np.float32
        if sparse_rows and device.type == "cpu" and not big and not isinstance(x, np.memmap):
            self.sparse = SparseRows.from_dense(x, mean, scale, device)
        if in_place and _ownable(x, device):
            # the caller gave the matrix away: standardise it where it is, no second copy
            step = max(1, 2**22 // max(1, self.dim))
            mean32, scale32 = mean.astype(np.float32), scale.astype(np.float32)
            for s in range(0, self.n_input, step):
                np.subtract(x[s : s + step], mean32, out=x[s : s + step])
                np.multiply(x[s : s + step], scale32, out=x[s : s + step])
            self._raw = None
            self.data = torch.from_numpy(x)
        elif device.type == "cpu" and (isinstance(x, np.memmap) or big):
            self._raw: np.ndarray | None = x
            self.data: torch.Tensor | None = None
        else:
            self._raw = None
            self.data = self._standardised_copy(x, np.arange(self.n_input))

    @classmethod
    def from_standardised(
        cls,
        data: np.ndarray,
        device: torch.device,
        chunk_rows: int | None = None,
        *,
        rows: np.ndarray | None = None,
        bounds: Any = None,
    ) -> FeatureStore:
        """A store over rows that are already standardised (e.g. shipped to a worker):
        ``rows``, the input rows they are (default 0..n-1), in shards starting at the input
        rows ``bounds`` (default: one shard)."""
        self = cls.__new__(cls)
        self.device = device
        self.n_input, self.dim = data.shape
        self.chunk_rows = chunk_rows or (1 << 20 if device.type == "cuda" else 65_536)
        self.mean64 = np.zeros(self.dim)
        self.scale64 = np.ones(self.dim)
        self.mean32 = torch.zeros(self.dim, device=device)
        self.scale32 = torch.ones(self.dim, device=device)
        self.rows = (
            np.arange(self.n_input, dtype=np.int64)
            if rows is None
            else np.asarray(rows, dtype=np.int64)
        )
        self.shard_bounds = np.asarray([0, self.n_input] if bounds is None else bounds)
        self._raw = None
        self.sparse = None
        self.raw_float32 = True
        if isinstance(data, torch.Tensor):  # another store's rows, seen another way
            self.data = data.to(device=device, dtype=torch.float32)
        else:
            self.data = torch.as_tensor(np.ascontiguousarray(data, dtype=np.float32), device=device)
        return self

    def standardised(self) -> torch.Tensor:
        """All stored rows, standardised (materialised if read chunk by chunk)."""
        if self.data is not None:
            return self.data
        return torch.cat([xb for _, _, xb in self.chunks()])

    # --- reading ---
    def _standardise(self, block: np.ndarray) -> torch.Tensor:
        # subtract in the input's precision (float64 input centres exactly), then cast
        if block.dtype == np.float64:
            return to_device(((block - self.mean64) * self.scale64).astype(np.float32), self.device)
        t = to_device(np.asarray(block, dtype=np.float32), self.device)
        return (t - self.mean32) * self.scale32

    def _standardised_copy(self, x: np.ndarray, rows: np.ndarray) -> torch.Tensor:
        out = torch.empty((len(rows), self.dim), dtype=torch.float32, device=self.device)
        step = max(1, 2**22 // max(1, self.dim))
        contiguous = len(rows) == x.shape[0]
        for s in range(0, len(rows), step):
            block = x[s : s + step] if contiguous else x[rows[s : s + step]]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # read-only memory maps
                out[s : s + step] = self._standardise(np.asarray(block))
        return out

    def chunks(self) -> Iterator[tuple[int, int, torch.Tensor]]:
        """(start, end, standardised rows) over the stored rows."""
        n = self.n_stored
        for s in range(0, n, self.chunk_rows):
            e = min(n, s + self.chunk_rows)
            if self.data is not None:
                yield s, e, self.data[s:e]
            else:
                yield s, e, self._standardise(np.asarray(self._raw[self.rows[s:e]]))

    def read(self, start: int, end: int) -> torch.Tensor:
        """Standardised stored rows ``start:end``."""
        if self.data is not None:
            return self.data[start:end]
        return self._standardise(np.asarray(self._raw[self.rows[start:end]]))

    def ranges(self, step: int) -> list[tuple[int, int]]:
        """(start, end) ranges of ``step`` stored rows: the same cut whatever the thread count."""
        return [(s, min(self.n_stored, s + step)) for s in range(0, self.n_stored, step)]

    def gather(self, positions: torch.Tensor) -> torch.Tensor:
        """Standardised rows at the given store positions (any shape of index tensor)."""
        if self.data is not None:
            return self.data[positions]
        flat = to_host(positions.reshape(-1))
        rows = self._standardise(np.asarray(self._raw[self.rows[flat]]))
        return rows.reshape(*positions.shape, self.dim)

    # --- shards ---
    @property
    def n_shards(self) -> int:
        return len(self.shard_bounds) - 1

    def stored_shards(self) -> list[tuple[int, int]]:
        """Each shard's stored rows: a (start, end) range of store positions (the stored rows
        are sorted by input row, so a shard's are consecutive)."""
        cut = np.searchsorted(self.rows, self.shard_bounds).tolist()
        return list(zip(cut[:-1], cut[1:]))

    def view(self, start: int, end: int) -> FeatureStore:
        """The stored rows ``start:end`` as a store of their own (no copy; one shard; no raw
        sparse rows): what one shard's sums read."""
        out = copy.copy(self)
        out.rows = self.rows[start:end]
        out.data = None if self.data is None else self.data[start:end]
        out.sparse = None
        out.shard_bounds = np.asarray([0, end - start])
        return out

    # --- layout ---
    def compact_to(self, rows: np.ndarray) -> np.ndarray:
        """Keep only ``rows`` (sorted input positions); returns their old store positions."""
        pos = self.positions(rows)
        if self.data is not None:
            pos_t = to_device(pos, self.device)
            # pos is sorted and pos[i] >= i: copying front to back never overwrites a row
            # still to be read, so compaction needs no second buffer
            for s in range(0, len(pos), self.chunk_rows):
                idx = pos_t[s : s + self.chunk_rows]
                self.data[s : s + len(idx)] = self.data[idx]
            self.data = self.data[: len(pos)]
        else:
            self.data = self._standardised_copy(self._raw, np.asarray(rows))
            self._raw = None
        if self.sparse is not None:
            self.sparse = self.sparse.take(to_device(pos, self.device))
        self.rows = np.asarray(rows, dtype=np.int64).copy()
        return pos
