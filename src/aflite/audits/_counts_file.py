"""Saved co-occurrence counts: one uncompressed .npz (no pickle) holding several views.

Layout: ``meta`` (JSON: format, views, each view's totals and settings), ``text`` and
``text_offsets`` (every counted sentence once, UTF-8), and per view ``v<k>_*`` arrays: the
vocabulary (newline-joined UTF-8), counts, the co-occurrence CSR, the n-gram -> sentence CSR
and each n-gram's token indices. ``np.load`` reads members lazily, so loading one view for a
query never touches the others, and the sentences are read only when examples are asked for.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from aflite._internal.atomic import atomic_path
from aflite.audits.cooccurrence import CooccurrenceCounts

__all__ = ["load_counts", "save_counts", "saved_views"]

_FORMAT = "aflite-cooccurrence"
_VERSION = 2
# what numpy and zipfile raise on a truncated, foreign or damaged file
_READ_ERRORS = (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile)


class _Sentences(Sequence[str]):
    """Sentences decoded on access from one UTF-8 buffer and byte offsets."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self._blob, self._offsets = blob, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        a, b = self._offsets[i], self._offsets[i + 1]
        return self._blob[a:b].tobytes().decode("utf-8")


def _json_bytes(obj: object) -> np.ndarray:
    return np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8)


def save_counts(
    path: str | os.PathLike, views: Mapping[str, CooccurrenceCounts], *, default: str | None = None
) -> Path:
    """Write ``views`` (e.g. from :func:`count_fields`) to ``path``; ``default`` (the last view
    unless given) is the one a query reads when it names none. Views that share one list of
    sentences store it once."""
    if not views:
        raise ValueError("no counts to save")
    names = list(views)
    default = default or names[-1]
    if default not in views:
        raise ValueError(f"default view '{default}' is not among {', '.join(names)}")
    # one copy of each distinct sentence list; a view's sentence ids shift by its list's offset
    offsets: dict[int, int] = {}
    texts: list[str] = []
    for c in views.values():
        if c.sentences is not None and id(c.sentences) not in offsets:
            offsets[id(c.sentences)] = len(texts)
            texts.extend(c.sentences)
    encoded = [t.encode("utf-8") for t in texts]
    arrays: dict[str, np.ndarray] = {
        "text": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "text_offsets": np.concatenate([[0], np.cumsum([len(e) for e in encoded], dtype=np.int64)]),
    }
    meta: dict[str, object] = {"format": _FORMAT, "version": _VERSION, "views": names}
    meta["default_view"] = default
    view_meta = {}
    for k, (name, c) in enumerate(views.items()):
        p = f"v{k}_"
        arrays[p + "vocab"] = np.frombuffer("\n".join(c.vocab).encode("utf-8"), dtype=np.uint8)
        arrays[p + "counts"] = c.counts
        arrays[p + "parts"] = c.parts
        arrays[p + "cooc_data"] = c.cooc.data
        arrays[p + "cooc_indices"] = c.cooc.indices
        arrays[p + "cooc_indptr"] = c.cooc.indptr
        has_text = c.postings is not None and c.sentences is not None
        if has_text:
            arrays[p + "post_indices"] = c.postings.indices + offsets[id(c.sentences)]
            arrays[p + "post_indptr"] = c.postings.indptr
        view_meta[name] = {
            "n_tokens": c.n_tokens,
            "n_sentences": c.n_sentences,
            "min_count": c.min_count,
            "settings": c.settings,
            "has_text": has_text,
            "n_vocab": len(c.vocab),
        }
    meta["view_meta"] = view_meta
    arrays["meta"] = _json_bytes(meta)
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _open(path: str | os.PathLike):
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such counts file")
    not_ours = f"{path}: not a counts file saved by `aflite audit --save-counts`"
    try:
        z = np.load(path, allow_pickle=False)
    except _READ_ERRORS:
        raise ValueError(f"{not_ours} (not an .npz archive)") from None
    if not hasattr(z, "files"):  # a bare .npy array
        raise ValueError(f"{not_ours} (an .npy array)")
    try:
        meta = json.loads(z["meta"].tobytes().decode())
    except _READ_ERRORS:
        z.close()
        raise ValueError(f"{not_ours} (no readable metadata)") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        z.close()
        raise ValueError(not_ours)
    if meta.get("version") != _VERSION:
        z.close()
        raise ValueError(
            f"{path}: counts file version {meta.get('version')}, this aflite reads "
            f"{_VERSION}; save the counts again"
        )
    views, vmeta = meta.get("views"), meta.get("view_meta")
    if not (
        isinstance(views, list)
        and isinstance(vmeta, dict)
        and meta.get("default_view") in views
        and all(isinstance(vmeta.get(v), dict) for v in views)
    ):
        z.close()
        raise ValueError(f"{path}: damaged counts file (inconsistent metadata)")
    return z, meta


def saved_views(path: str | os.PathLike) -> tuple[list[str], str]:
    """(the views in a counts file, its default view)."""
    z, meta = _open(path)
    z.close()
    return meta["views"], meta["default_view"]


def load_counts(
    path: str | os.PathLike, view: str | None = None, *, text: bool = True
) -> CooccurrenceCounts:
    """Read one view of a counts file (default: its default view); ``text=False`` skips the
    sentences (no example lookups, a faster load)."""
    z, meta = _open(path)
    with z:
        names = meta["views"]
        view = meta["default_view"] if view is None else view
        if view not in names:
            raise ValueError(f"{path}: no view '{view}' here; saved views: {', '.join(names)}")
        k, vm = names.index(view), meta["view_meta"][view]
        p = f"v{k}_"
        try:
            totals = {key: int(vm[key]) for key in ("n_tokens", "n_sentences", "min_count")}
            vocab_bytes = z[p + "vocab"].tobytes()
            vocab = vocab_bytes.decode("utf-8").split("\n") if vocab_bytes else []
            n = len(vocab)
            cooc = sparse.csr_matrix(
                (z[p + "cooc_data"], z[p + "cooc_indices"], z[p + "cooc_indptr"]), shape=(n, n)
            )
            postings = sentences = None
            if text and vm.get("has_text"):
                offsets = z["text_offsets"]
                sentences = _Sentences(z["text"], offsets)
                postings = sparse.csr_matrix(
                    (
                        np.ones(len(z[p + "post_indices"]), np.float32),
                        z[p + "post_indices"],
                        z[p + "post_indptr"],
                    ),
                    shape=(n, len(offsets) - 1),
                )
            counts, parts = z[p + "counts"], z[p + "parts"]
        except _READ_ERRORS as e:
            raise ValueError(f"{path}: damaged counts file ({e})") from None
    if len(counts) != n or parts.shape != (n, 2):
        raise ValueError(f"{path}: damaged counts file (view '{view}' is inconsistent)")
    return CooccurrenceCounts(
        vocab=vocab,
        counts=counts,
        cooc=cooc,
        **totals,
        postings=postings,
        sentences=sentences,
        name=view,
        settings=dict(vm.get("settings") or {}),
        parts=parts,
    )
