"""Image data sets: a folder of class sub-folders of images, or an .npz of arrays.

Both present the same interface as :class:`aflite.io.tables.Table` (``column``, ``where``,
``write_subset``), with fields ``id``, ``label`` and, for folders, ``path``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError

__all__ = ["ImageTable", "read_images", "is_image_input", "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"}


def is_image_input(path: str | os.PathLike) -> bool:
    p = Path(path)
    if p.is_dir():
        return any(
            f.suffix.lower() in IMAGE_SUFFIXES
            for sub in p.iterdir()
            if sub.is_dir()
            for f in sub.iterdir()
        )
    if p.suffix.lower() == ".npz" and p.is_file():
        try:
            with np.load(p, allow_pickle=False) as z:
                return "images" in z.files
        except Exception:  # not a readable .npz: read_images says why, naming the file
            return True
    return False


class ImageTable:
    """Images (N, H, W, C) float32 in [0, 1], labels and ids, with where they came from."""

    def __init__(
        self,
        path: str,
        fmt: str,
        images: np.ndarray,
        labels: list[str],
        ids: list[str],
        paths: list[str] | None = None,
    ) -> None:
        self.path, self.format = path, fmt
        self.images, self.labels, self.ids, self.paths = images, labels, ids, paths
        self.fieldnames = ["id", "label"] + (["path"] if paths is not None else [])

    def __len__(self) -> int:
        return len(self.labels)

    def where(self, i: int) -> str:
        return f"{self.paths[i]}" if self.paths is not None else f"{self.path}: row {i + 1}"

    def column(self, name: str) -> list[Any]:
        cols = {"id": self.ids, "label": self.labels, "path": self.paths}
        if cols.get(name) is None:
            raise DataError(
                f"{self.path}: image data has no field '{name}' (fields: {', '.join(self.fieldnames)})"
            )
        return list(cols[name])

    def text_column(self, name: str) -> list[str]:
        raise DataError(f"{self.path}: image data has no text fields; use --features warmup-cnn")

    def fingerprint(self) -> str:
        """Hash of a sample of the images and all ids (computed once)."""
        if getattr(self, "_fingerprint", None) is None:
            import hashlib

            h = hashlib.sha256()
            h.update(np.ascontiguousarray(self.images[:: max(1, len(self) // 64)]).tobytes())
            h.update("\x1f".join(self.ids).encode())
            self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    def output_name(self, stem: str) -> str:
        return stem + (".npz" if self.format == "npz" else ".jsonl")

    def write_subset(
        self, target: str | os.PathLike, indices: Any, extra: dict[str, Any] | None = None
    ) -> Path:
        """.npz input -> .npz of the selected arrays; folder input -> JSON Lines of
        {id, path, label} (the images stay where they are)."""
        idx = np.asarray(indices, dtype=np.int64)
        extra = {k: np.asarray(v) for k, v in (extra or {}).items()}
        target = Path(target)
        if self.format == "npz":
            with atomic_path(target) as tmp, open(tmp, "wb") as fh:
                np.savez_compressed(
                    fh,
                    images=self.raw[idx],
                    labels=np.asarray(self.labels)[idx],
                    ids=np.asarray(self.ids)[idx],
                    **extra,
                )
        else:
            with atomic_path(target) as tmp, tmp.open("w") as fh:
                for j, i in enumerate(idx):
                    row = {"id": self.ids[i], "path": self.paths[i], "label": self.labels[i]}
                    row.update({k: v[j].item() for k, v in extra.items()})
                    fh.write(json.dumps(row) + "\n")
        return target


def _to_float(images: np.ndarray, where: str = "images") -> np.ndarray:
    x = images.astype(np.float32)
    if x.ndim == 3:
        x = x[..., None]
    if x.ndim != 4:
        raise DataError(
            f"{where}: images must be (N, H, W) or (N, H, W, C), got shape {images.shape}"
        )
    if x.max() > 1.0:
        x /= 255.0
    return x


def read_images(path: str | os.PathLike, *, size: int | None = None) -> ImageTable:
    """Read a class-folder tree (resized to ``size`` x ``size`` when given, else the first
    image's size) or an .npz with ``images``, ``labels`` and optional ``ids``."""
    p = Path(path)
    if p.suffix.lower() == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                if "images" not in z.files or "labels" not in z.files:
                    raise DataError(
                        f"{p}: an image .npz needs arrays 'images' and 'labels' "
                        f"(has {', '.join(z.files)})"
                    )
                raw, labels = z["images"], z["labels"]
                ids = z["ids"] if "ids" in z.files else np.arange(len(labels))
        except DataError:
            raise
        except ValueError as e:
            if "Object arrays" in str(e):
                raise DataError(
                    f"{p}: holds Python objects (a pickled array), which are not loaded"
                ) from None
            raise DataError(f"{p}: not a readable .npz file ({' '.join(str(e).split())})") from None
        except Exception as e:  # a damaged zip archive raises several types
            raise DataError(f"{p}: not a readable .npz file ({type(e).__name__})") from None
        if raw.dtype.kind not in "biuf":
            raise DataError(f"{p}: 'images' must be numbers, got dtype {raw.dtype}")
        if len(raw) != len(labels):
            raise DataError(f"{p}: {len(raw)} images but {len(labels)} labels")
        if np.issubdtype(raw.dtype, np.floating) and not np.isfinite(raw).all():
            bad = int(np.argwhere(~np.isfinite(raw.reshape(len(raw), -1)))[0][0])
            raise DataError(f"{p}: row {bad + 1}: image contains NaN or inf")
        t = ImageTable(
            str(p), "npz", _to_float(raw, str(p)), [str(v) for v in labels], [str(v) for v in ids]
        )
        t.raw = raw
        return t

    from PIL import Image, UnidentifiedImageError

    files, labels = [], []
    for sub in sorted(d for d in p.iterdir() if d.is_dir()):
        for f in sorted(sub.iterdir()):
            if f.suffix.lower() in IMAGE_SUFFIXES:
                files.append(f)
                labels.append(sub.name)
    if not files:
        raise DataError(f"{p}: no images in class sub-folders")
    arrays = []
    target_size = None
    for f in files:
        try:
            with Image.open(f) as im:
                im = im.convert("RGB")
                if target_size is None:
                    target_size = (size, size) if size else im.size
                if im.size != target_size:
                    im = im.resize(target_size)
                arrays.append(np.asarray(im, dtype=np.uint8))
        except (UnidentifiedImageError, OSError) as e:
            raise DataError(f"{f}: not a readable image ({type(e).__name__})") from None
    raw = np.stack(arrays)
    rel = [str(f.relative_to(p)) for f in files]
    t = ImageTable(str(p), "folder", _to_float(raw), labels, rel, paths=rel)
    t.raw = raw
    return t
