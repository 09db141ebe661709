"""Sentence-transformers encoders (optional extra ``aflite[text]``)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aflite._internal.text import one_line
from aflite.errors import DataError, MissingExtraError
from aflite.features.locate import check_model, model_folder, resolve_model_path

__all__ = [
    "encode_texts",
    "resolve_model_path",
    "model_fingerprint",
    "load_encoder",
    "check_encoder_installed",
    "check_model",
    "model_folder",
    "pair_features",
    "combine_fields",
    "embedding_dim",
    "MissingExtraError",
]

_FOLDER_HASHES: dict[tuple, str] = {}


def model_fingerprint(name: str) -> str:
    """A key for a model's *content*: the SHA-256 of every file of its local folder (weights,
    config, tokenizer), so a model changed at the same path or name gets new embeddings.
    A model found nowhere locally is keyed by its name."""
    folder = model_folder(name)
    if folder is None:
        return f"name:{name}"
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    stat = tuple(
        (str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in files
    )
    key = (str(folder.resolve()), stat)
    if key not in _FOLDER_HASHES:  # hashing ~100 MB of weights once per process is enough
        h = hashlib.sha256()
        for p, (rel, _, _) in zip(files, stat):
            h.update(rel.encode() + b"\0")
            with open(p, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 22), b""):
                    h.update(block)
        _FOLDER_HASHES[key] = h.hexdigest()
    return "sha256:" + _FOLDER_HASHES[key]


_INSTALL_TEXT = "sentence-transformers features need: pip install 'aflite[text]'"


def check_encoder_installed(spec: str = "", arg: str = "") -> None:
    """A MissingExtraError with the install line where sentence-transformers is not
    installed: checked when the feature spec is parsed, before any data is read."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise MissingExtraError(_INSTALL_TEXT)


def load_encoder(name: str, device: str = "cpu") -> Any:
    """Load a sentence-transformers model by path or name (see :func:`resolve_model_path`);
    a name found nowhere locally fails at once when the hub cannot be reached, before
    sentence-transformers (seconds of imports) is loaded."""
    check_encoder_installed()
    folder = model_folder(name)
    if folder is None:
        # a hub that does not answer in 3 s counts as unreachable here: the hub client
        # would retry for minutes before giving up
        check_model(name, wait=3.0, unanswered=True)
    else:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingExtraError(_INSTALL_TEXT) from None
    try:
        return SentenceTransformer(str(folder or name), device=device)
    except Exception as e:
        reason = one_line(str(e)) or type(e).__name__
        raise DataError(f"cannot load sentence-transformers model '{name}': {reason}") from None


def encode_texts(
    texts: Sequence[str],
    model: Any,
    *,
    device: str = "cpu",
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Embed ``texts`` (float32, L2-normalised); ``progress`` is called with rows done.

    ``model`` is a name or path, or an already loaded SentenceTransformer. Each distinct text
    is encoded once: NLI sets repeat every premise for each of its hypotheses.
    """
    st = load_encoder(model, device) if isinstance(model, str) else model
    index: dict[str, int] = {}
    rows = np.fromiter((index.setdefault(t, len(index)) for t in texts), np.int64, len(texts))
    unique = list(index)
    out = np.empty((len(unique), embedding_dim(st)), dtype=np.float32)
    chunk = batch_size * 8
    for s in range(0, len(unique), chunk):
        out[s : s + chunk] = st.encode(
            unique[s : s + chunk],
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if progress is not None:
            # reported in rows of ``texts``, which the callers' totals count
            progress(len(texts) * min(len(unique), s + chunk) // max(len(unique), 1))
    return out[rows]


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[u, v, |u - v|, u * v]: the standard pair representation for bi-encoder embeddings."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1).astype(np.float32)


def combine_fields(parts: list[np.ndarray]) -> np.ndarray:
    """Two fields (a pair task) -> ``pair_features``; otherwise the fields side by side."""
    if len(parts) == 2:
        return pair_features(parts[0], parts[1])
    return np.concatenate(parts, axis=1).astype(np.float32)


def embedding_dim(st: Any) -> int:
    """Embedding width of a SentenceTransformer (the method was renamed in v5)."""
    dim_of = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
    return int(dim_of())
