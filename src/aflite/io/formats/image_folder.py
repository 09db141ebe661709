"""Images in class sub-folders (``root/CLASS/*.png``); subsets are JSON Lines of
``{id, path, label}``, the images staying where they are."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.base import plain_value
from aflite.io.images import IMAGE_SUFFIXES, ImageArrays
from aflite.io.registry import ReadOptions, register_format

__all__ = ["ImageFolderTable"]


def _is_image_folder(path: str) -> bool:
    p = Path(path)
    return p.is_dir() and any(
        f.suffix.lower() in IMAGE_SUFFIXES
        for sub in p.iterdir()
        if sub.is_dir()
        for f in sub.iterdir()
    )


@register_format(
    "image-folder",
    detect=_is_image_folder,
    images=True,
    description="images in class sub-folders",
)
class ImageFolderTable(ImageArrays):
    """Images of a folder tree; ``id`` and ``path`` are the paths relative to the root."""

    suffix = ".jsonl"

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> ImageFolderTable:
        from PIL import Image, UnidentifiedImageError

        root = Path(path)
        files, labels = [], []
        for sub in sorted(d for d in root.iterdir() if d.is_dir()):
            for f in sorted(sub.iterdir()):
                if f.suffix.lower() in IMAGE_SUFFIXES:
                    files.append(f)
                    labels.append(sub.name)
        if not files:
            raise DataError(f"{path}: no images in class sub-folders")
        size = options.image_size
        arrays, shape = [], None
        for f in files:
            try:
                with Image.open(f) as im:
                    im = im.convert("RGB")
                    if shape is None:
                        shape = (size, size) if size else im.size
                    if im.size != shape:
                        im = im.resize(shape)
                    arrays.append(np.asarray(im, dtype=np.uint8))
            except (UnidentifiedImageError, OSError) as e:
                raise DataError(f"{f}: not a readable image ({type(e).__name__})") from None
        rel = [str(f.relative_to(root)) for f in files]
        return cls(path, np.stack(arrays), labels, rel, paths=rel)

    def where(self, i: int) -> str:
        return os.path.join(self.path, self.paths[i]) if self.paths else self.path

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        with atomic_path(target) as tmp, tmp.open("w", encoding="ascii") as fh:
            for j, i in enumerate(rows):
                row = {"id": self.ids[i], "path": self.paths[i], "label": self.labels[i]}
                row.update({k: plain_value(v[j]) for k, v in extra.items()})
                fh.write(json.dumps(row) + "\n")
