"""On-disk cache of embeddings, keyed by input fingerprint + encoder + fields."""

from __future__ import annotations

import hashlib
import os
import warnings
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

    ``cache_dir=None`` disables the cache. A cache folder that cannot be read or written
    gives one warning, and the array is computed (and not stored).
    """
    if cache_dir is None:
        return compute(), False
    key = hashlib.sha256("\x1f".join(key_parts).encode()).hexdigest()[:24]
    path = Path(cache_dir) / "embeddings" / f"{key}.npy"
    try:
        if path.is_file():
            return np.load(path, mmap_mode="r", allow_pickle=False), True
    except ValueError:
        pass  # a damaged entry: computed again and replaced below
    except OSError as e:
        _warn_once(cache_dir, e)
    arr = np.ascontiguousarray(compute(), dtype=np.float32)
    try:
        # several processes may share a cache: spare parts written in the last hour
        with atomic_path(path, stale_after=3600) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, arr, allow_pickle=False)
    except OSError as e:
        _warn_once(cache_dir, e)
    return arr, False


_warned: set[str] = set()


def _warn_once(cache_dir: str | os.PathLike, e: Exception) -> None:
    """One warning per cache folder and process; the run goes on without the cache."""
    key = str(cache_dir)
    if key in _warned:
        return
    _warned.add(key)
    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    warnings.warn(
        f"embedding cache {cache_dir} is not usable ({why}); continuing without it",
        RuntimeWarning,
        stacklevel=3,
    )
