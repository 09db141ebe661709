"""Image data sets: what the image formats share (:class:`ImageArrays`), and
:func:`read_images` / :func:`is_image_input` for callers that want images only.

The formats are in :mod:`aflite.io.formats.image_folder` (a folder of class sub-folders) and
:mod:`aflite.io.formats.image_npz` (an .npz of arrays). Their tables have the fields ``id``,
``label`` and, for folders, ``path``, and ``images``: (N, H, W, C) float32 in [0, 1].
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.io.base import BaseTable, ImageTable
from aflite.io.registry import detect_format, read_table

__all__ = [
    "IMAGE_SUFFIXES",
    "ImageArrays",
    "ImageTable",
    "is_image_input",
    "read_images",
    "to_float",
]

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"}


def to_float(images: np.ndarray, where: str = "images") -> np.ndarray:
    """(N, H, W[, C]) numbers -> (N, H, W, C) float32, scaled to [0, 1] when above 1."""
    x = images.astype(np.float32)
    if x.ndim == 3:
        x = x[..., None]
    if x.ndim != 4:
        raise DataError(
            f"{where}: images must be (N, H, W) or (N, H, W, C), got shape {images.shape}"
        )
    if x.size and x.max() > 1.0:
        x /= 255.0
    return x


class ImageArrays(BaseTable):
    """Images with their labels and ids (and, for files, their paths), as read: ``raw`` is
    the array as stored, ``images`` the float version models use."""

    def __init__(
        self,
        path: str,
        raw: np.ndarray,
        labels: list[str],
        ids: list[str],
        paths: list[str] | None = None,
    ) -> None:
        super().__init__(path, ["id", "label"] + (["path"] if paths is not None else []))
        self.raw = raw
        self.images = to_float(raw, path)
        self.labels, self.ids, self.paths = labels, ids, paths

    def __len__(self) -> int:
        return len(self.labels)

    def values(self, name: str) -> list[Any]:
        cols = {"id": self.ids, "label": self.labels, "path": self.paths}
        return list(cols[name])  # type: ignore[arg-type]

    def text_column(self, name: str) -> list[str]:
        raise DataError(f"{self.path}: image data has no text fields; use --features warmup-cnn")

    def content_hash(self) -> str:
        # every pixel, label and id: a changed label or image must not reuse a checkpoint
        h = hashlib.sha256()
        h.update(f"{self.raw.dtype.str}{self.raw.shape}".encode())
        h.update(np.ascontiguousarray(self.raw).tobytes())
        h.update(json.dumps([self.labels, self.ids, self.paths]).encode())
        return h.hexdigest()[:16]


def is_image_input(path: str | os.PathLike) -> bool:
    """Whether ``path`` is read by an image format (a folder of class sub-folders, an .npz)."""
    try:
        return detect_format(path).images
    except DataError:
        return False


def read_images(path: str | os.PathLike, *, size: int | None = None) -> ImageTable:
    """Read a class-folder tree (resized to ``size`` x ``size`` when given, else the first
    image's size) or an .npz with ``images``, ``labels`` and optional ``ids``."""
    spec = detect_format(path)
    if not spec.images:
        raise DataError(
            f"{path}: not image data (a folder of class sub-folders, or an .npz with "
            "'images' and 'labels')"
        )
    table = read_table(path, spec.name, image_size=size)
    assert isinstance(table, ImageTable)
    return table
