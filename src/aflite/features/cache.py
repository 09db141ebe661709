"""On-disk cache of embeddings, keyed by input fingerprint + encoder + fields."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from aflite._internal.atomic import atomic_path

__all__ = ["default_cache_dir", "cached"]


def default_cache_dir() -> Path:
    return Path(os.environ.get("AFLITE_CACHE", Path.home() / ".cache" / "aflite"))


def cached(
    key_parts: list[str], compute: Callable[[], np.ndarray], cache_dir: str | os.PathLike | None
) -> tuple[np.ndarray, bool]:
    """Return (array, was_cached). The array is memory-mapped from ``<key>.npy`` when cached.

    ``cache_dir=None`` disables the cache.
    """
    if cache_dir is None:
        return compute(), False
    key = hashlib.sha256("\x1f".join(key_parts).encode()).hexdigest()[:24]
    path = Path(cache_dir) / "embeddings" / f"{key}.npy"
    if path.exists():
        return np.load(path, mmap_mode="r", allow_pickle=False), True
    arr = np.ascontiguousarray(compute(), dtype=np.float32)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
    return arr, False
