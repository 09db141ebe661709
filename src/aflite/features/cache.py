"""On-disk cache of embeddings, keyed by input fingerprint + encoder content + fields,
and verified before use."""

from __future__ import annotations

import hashlib
import json
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
    key_parts: list[str],
    compute: Callable[[], np.ndarray],
    cache_dir: str | os.PathLike | None,
    *,
    n_rows: int | None = None,
) -> tuple[np.ndarray, bool]:
    """Return (array, was_cached). The array is memory-mapped from ``<key>.npy`` when cached.

    Every entry has a sidecar ``<key>.json`` with its shape, dtype and SHA-256; an entry is
    used only when all three match (and ``n_rows`` when given), so a damaged or edited entry
    is computed again and replaced. ``cache_dir=None`` disables the cache. A cache folder that
    cannot be read or written gives one warning, and the array is computed (and not stored).
    """
    if cache_dir is None:
        return compute(), False
    key = hashlib.sha256("\x1f".join(key_parts).encode()).hexdigest()[:24]
    path = Path(cache_dir) / "embeddings" / f"{key}.npy"
    meta = path.with_suffix(".json")
    try:
        if path.is_file():
            arr = _verified(path, meta, n_rows)
            if arr is not None:
                return arr, True
    except OSError as e:
        _warn_once(cache_dir, e)
    arr = np.ascontiguousarray(compute(), dtype=np.float32)
    try:
        # several processes may share a cache: spare parts written in the last hour
        with atomic_path(path, stale_after=3600) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, arr, allow_pickle=False)
            # the digest of the bytes this process wrote: another process renaming its own
            # entry into place meanwhile must not lend this record its digest
            digest = _digest(tmp)
        doc = {"shape": list(arr.shape), "dtype": str(arr.dtype), "sha256": digest}
        with atomic_path(meta, stale_after=3600) as tmp:
            tmp.write_text(json.dumps(doc))
    except OSError as e:
        _warn_once(cache_dir, e)
    return arr, False


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _verified(path: Path, meta: Path, n_rows: int | None) -> np.ndarray | None:
    """The entry, memory-mapped, if its sidecar vouches for it; None otherwise."""
    try:
        doc = json.loads(meta.read_text())
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, FileNotFoundError):
        return None  # damaged, or written by a run killed between the two files
    if (
        list(arr.shape) != doc.get("shape")
        or str(arr.dtype) != doc.get("dtype")
        or (n_rows is not None and arr.shape[0] != n_rows)
        or _digest(path) != doc.get("sha256")
    ):
        warnings.warn(
            f"embedding cache entry {path} does not match its record; computing it again",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return arr


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
