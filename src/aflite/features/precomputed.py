"""Pre-computed feature matrices: .npy, .npz, .safetensors, or a Parquet list column."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = ["load_precomputed"]


def load_precomputed(spec: str, *, n_rows: int, ids: Sequence[Any] | None = None) -> np.ndarray:
    """Load ``FILE`` or ``FILE#KEY`` (array name in .npz/.safetensors, column in Parquet).

    Rows align by position, or by id when the file also holds ids (an ``ids`` array in
    .npz/.safetensors, an ``id`` column in Parquet) and ``ids`` are given. A .npy file is
    memory-mapped, so matrices larger than RAM work.
    """
    path, _, key = spec.partition("#")
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{path}: no such feature file")
    suffix = p.suffix.lower()
    file_ids = None
    if suffix == ".npy":
        with _readable(path, "npy"):
            x = np.load(p, mmap_mode="r", allow_pickle=False)
    elif suffix == ".npz":
        with _readable(path, "npz"), np.load(p, allow_pickle=False) as z:
            names = [n for n in z.files if n != "ids"]
            name = key or (
                "features" if "features" in names else names[0] if len(names) == 1 else None
            )
            if name is None or name not in z.files:
                raise DataError(
                    f"{path}: say which array with {path}#NAME (arrays: {', '.join(z.files)})"
                )
            x = z[name]
            file_ids = z["ids"] if "ids" in z.files else None
    elif suffix == ".safetensors":
        from safetensors.numpy import load_file

        with _readable(path, "safetensors"):
            tensors = load_file(str(p))
        names = [n for n in tensors if n != "ids"]
        name = key or ("features" if "features" in names else names[0] if len(names) == 1 else None)
        if name is None or name not in tensors:
            raise DataError(
                f"{path}: say which tensor with {path}#NAME (tensors: {', '.join(tensors)})"
            )
        x = tensors[name]
        file_ids = tensors.get("ids")
    elif suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        with _readable(path, "parquet"):
            tbl = pq.read_table(p)
        name = key or "features"
        if name not in tbl.column_names:
            raise DataError(f"{path}: no column '{name}' (columns: {', '.join(tbl.column_names)})")
        col = tbl.column(name).to_pylist()
        lengths = {len(v) if v is not None else -1 for v in col}
        if -1 in lengths or len(lengths) != 1:
            bad = next(i for i, v in enumerate(col) if v is None or len(v) != len(col[0]))
            raise DataError(f"{path}: row {bad + 1}: field '{name}' has a missing or ragged vector")
        x = np.asarray(col, dtype=np.float32)
        file_ids = np.asarray(tbl.column("id").to_pylist()) if "id" in tbl.column_names else None
    else:
        raise DataError(
            f"{path}: unknown feature file type (use .npy, .npz, .safetensors, .parquet)"
        )

    if x.dtype.kind not in "iuf":  # booleans too: the filter standardises real numbers
        raise DataError(f"{path}: features must be numbers, got dtype {x.dtype}")
    if x.ndim != 2:
        raise DataError(f"{path}: features must be a 2-D matrix, got shape {x.shape}")
    if 0 in x.shape:
        raise DataError(f"{path}: features must be non-empty, got shape {x.shape}")
    if file_ids is not None and ids is not None:
        if file_ids.ndim != 1 or len(file_ids) != x.shape[0]:
            raise DataError(
                f"{path}: 'ids' must list one id per feature row ({x.shape[0]} rows, "
                f"ids of shape {file_ids.shape})"
            )
        pos: dict[str, int] = {}
        for i, v in enumerate(file_ids.tolist()):
            if str(v) in pos:
                raise DataError(
                    f"{path}: row {i + 1}: field 'ids' duplicates id {v!r} "
                    f"(first at row {pos[str(v)] + 1})"
                )
            pos[str(v)] = i
        try:
            order = np.array([pos[str(v)] for v in ids], dtype=np.int64)
        except KeyError as e:
            raise DataError(f"{path}: no features for id {e.args[0]}") from None
        x = x[order]
    elif x.shape[0] != n_rows:
        raise DataError(f"{path}: {x.shape[0]} feature rows but the data has {n_rows} rows")
    step = max(1, 2**24 // max(1, x.shape[1]))
    for s in range(0, x.shape[0], step):
        block = np.asarray(x[s : s + step])
        if not np.isfinite(block).all():
            r = s + int(np.argwhere(~np.isfinite(block))[0][0])
            raise DataError(f"{path}: row {r + 1}: features contain NaN or inf")
    return x


@contextlib.contextmanager
def _readable(path: str, kind: str) -> Iterator[None]:
    """numpy's errors for a file it cannot load, as one line naming the file."""
    try:
        yield
    except DataError:
        raise
    except ValueError as e:
        if "Object arrays" in str(e) or "Python objects" in str(e):
            raise DataError(
                f"{path}: holds Python objects (a pickled array), which are not loaded; "
                "save a numeric matrix"
            ) from None
        why = " ".join(str(e).split())
        raise DataError(f"{path}: not a readable .{kind} file ({why})") from None
    except Exception as e:
        # a damaged file raises many types (OSError, EOFError, zipfile.BadZipFile, a header
        # numpy cannot parse: SyntaxError, tokenize.TokenError; safetensors' own error)
        why = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
        raise DataError(f"{path}: not a readable .{kind} file ({why})") from None
