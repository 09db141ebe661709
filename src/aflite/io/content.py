"""A labelled data set's fingerprint by its content, not its file: what a filtering run reads
of each row (its id, its label, its group and the text fields the features read; the images
of an image table), whatever the format or the path it came in. A data set card records it,
and ``aflite verify`` names the part of the input that differs from the card's.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

__all__ = ["content_fingerprint", "content_parts"]


def content_parts(data: Any, *, images: bool = False) -> dict[str, str]:
    """SHA-256 (16 hex digits) of each part of ``data`` (a
    :class:`~aflite.io.labelled.LabelledData`) a filtering run reads: ``ids``, ``labels``,
    ``groups`` (with a group field), ``text:FIELD`` for each text field read (for
    multiple-choice items the context and choice fields), and ``images`` (with ``images``:
    the pixels of an image table). Rows are taken in the order of their ids as text, so the
    same rows stored in another order (the filter draws its partitions by id) have the same
    parts; row numbers as ids keep the file's order."""
    ids = [str(i) for i in data.ids]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    parts = {"ids": _digest(ids[i] for i in order)}
    labels = data.labels
    if labels is not None:
        parts["labels"] = _digest(str(labels[i]) for i in order)
    if data.groups is not None:
        parts["groups"] = _digest(str(data.groups[i]) for i in order)
    for field, values in sorted((data.texts or {}).items()):
        parts[f"text:{field}"] = _digest(values[i] for i in order)
    if images:
        pixels = np.asarray(data.table.images)
        h = hashlib.sha256(f"{pixels.shape}{pixels.dtype}".encode())
        for i in order:
            h.update(np.ascontiguousarray(pixels[i]).tobytes())
        parts["images"] = h.hexdigest()[:16]
    return parts


def content_fingerprint(parts: dict[str, str]) -> str:
    """One fingerprint (16 hex digits) of the parts :func:`content_parts` gives."""
    text = json.dumps(sorted(parts.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _digest(values: Any) -> str:
    """Each value as JSON text, one a line: a value holding a line break stays one line."""
    h = hashlib.sha256()
    for v in values:
        h.update(json.dumps(v, ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()[:16]
