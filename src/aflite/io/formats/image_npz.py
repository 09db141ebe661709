"""Images in an .npz: arrays ``images`` (N, H, W[, C]), ``labels`` (N) and optional ``ids``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.images import ImageArrays
from aflite.io.registry import ReadOptions, register_format

__all__ = ["ImageNpzTable"]


def _load(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    try:
        with np.load(path, allow_pickle=False) as z:
            if "images" not in z.files or "labels" not in z.files:
                raise DataError(
                    f"{path}: an image .npz needs arrays 'images' and 'labels' "
                    f"(has {', '.join(z.files) or 'none'})"
                )
            return z["images"], z["labels"], (z["ids"] if "ids" in z.files else None)
    except DataError:
        raise
    except ValueError as e:
        if "Object arrays" in str(e):
            raise DataError(
                f"{path}: holds Python objects (a pickled array), which are not loaded"
            ) from None
        raise DataError(f"{path}: not a readable .npz file ({' '.join(str(e).split())})") from None
    except Exception as e:  # a damaged zip archive raises several types
        raise DataError(f"{path}: not a readable .npz file ({type(e).__name__})") from None


@register_format(
    "image-npz", suffixes=(".npz",), images=True, description="images and labels as arrays"
)
class ImageNpzTable(ImageArrays):
    """Images from an .npz; subsets are .npz files with the arrays as stored."""

    suffix = ".npz"

    def __init__(
        self, path: str, raw: np.ndarray, labels: np.ndarray, ids: np.ndarray | None
    ) -> None:
        id_list = [str(v) for v in (ids if ids is not None else range(len(labels)))]
        super().__init__(path, raw, [str(v) for v in labels], id_list)
        # the arrays as stored, so subsets keep their dtypes (integer labels stay integers)
        self._stored = {"labels": labels, "ids": ids if ids is not None else np.asarray(id_list)}

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> ImageNpzTable:
        raw, labels, ids = _load(path)
        if raw.dtype.kind not in "biuf":
            raise DataError(f"{path}: 'images' must be numbers, got dtype {raw.dtype}")
        if raw.ndim not in (3, 4):
            raise DataError(
                f"{path}: images must be (N, H, W) or (N, H, W, C), got shape {raw.shape}"
            )
        for name, arr in (("labels", labels), ("ids", ids)):
            if arr is not None and arr.ndim != 1:
                raise DataError(
                    f"{path}: '{name}' must hold one value per image, got shape {arr.shape}"
                )
            if arr is not None and len(arr) != len(raw):
                raise DataError(f"{path}: {len(raw)} images but {len(arr)} {name}")
        if np.issubdtype(raw.dtype, np.floating) and not np.isfinite(raw).all():
            bad = int(np.argwhere(~np.isfinite(raw.reshape(len(raw), -1)))[0][0])
            raise DataError(f"{path}: row {bad + 1}: image contains NaN or inf")
        return cls(path, raw, labels, ids)

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        arrays = {k: np.asarray(v) for k, v in extra.items()}
        arrays.update(
            images=self.raw[rows],
            labels=self._stored["labels"][rows],
            ids=self._stored["ids"][rows],
        )
        with atomic_path(target) as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)
