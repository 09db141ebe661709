"""Warm-up by fine-tuning the sentence encoder itself, as the paper does with RoBERTa."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from aflite.features.encoders import combine_fields, embedding_dim, load_encoder
from aflite.features.warmup import train_warm_rows

__all__ = ["finetuned_representation", "finetune_encoder", "embed_with"]


def _embed(st, texts: Sequence[str], device: torch.device) -> torch.Tensor:
    prep = getattr(st, "preprocess", None) or st.tokenize
    feats = prep(list(texts))
    feats = {k: v.to(device) if torch.is_tensor(v) else v for k, v in feats.items()}
    return st(feats)["sentence_embedding"]


def _combine(parts: list[torch.Tensor]) -> torch.Tensor:
    if len(parts) == 2:
        u, v = parts
        return torch.cat([u, v, (u - v).abs(), u * v], dim=1)
    return torch.cat(parts, dim=1)


def finetuned_representation(
    model: str,
    texts: dict[str, Sequence[str]],
    labels: np.ndarray,
    warm_rows: np.ndarray,
    rest_rows: np.ndarray,
    *,
    epochs: int = 1,
    batch_size: int = 16,
    lr: float = 2e-5,
    seed: int = 0,
    device: str = "cpu",
) -> np.ndarray:
    """Fine-tune ``model`` with a softmax head on the warm-up rows, then embed the other rows
    with the tuned encoder; their (pair) embedding, the head's input, is Phi."""
    st = finetune_encoder(
        model,
        texts,
        labels,
        warm_rows,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        device=device,
    )
    return embed_with(st, {f: [v[i] for i in rest_rows] for f, v in texts.items()}, device)


def embed_with(st: Any, texts: dict[str, Sequence[str]], device: str = "cpu") -> np.ndarray:
    """The (pair) embedding of ``texts`` by a loaded encoder, as Phi."""
    from aflite.features.encoders import encode_texts

    return combine_fields([encode_texts(v, st, device=device) for v in texts.values()])


def finetune_encoder(
    model: str,
    texts: dict[str, Sequence[str]],
    labels: np.ndarray,
    warm_rows: np.ndarray,
    *,
    epochs: int = 1,
    batch_size: int = 16,
    lr: float = 2e-5,
    seed: int = 0,
    device: str = "cpu",
) -> Any:
    """Fine-tune ``model`` with a softmax head on the warm-up rows; the tuned encoder."""
    dev = torch.device(device)
    st = load_encoder(model, device)
    fields = list(texts)
    dim = embedding_dim(st)
    width = 4 * dim if len(fields) == 2 else dim * len(fields)
    n_classes = int(labels.max()) + 1
    gen = torch.Generator().manual_seed(seed)
    # dropout draws from the global generators: seed them (and restore the caller's after),
    # or the same seed gives a different encoder on every run
    cuda = [dev.index or 0] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(seed)
        head = torch.nn.Linear(width, n_classes).to(dev)
        opt = torch.optim.AdamW(list(st.parameters()) + list(head.parameters()), lr=lr)
        st.train()
        y = torch.as_tensor(labels[warm_rows], device=dev)

        def loss(positions: torch.Tensor) -> torch.Tensor:
            b = positions.numpy()
            rows = warm_rows[b]
            rep = _combine([_embed(st, [texts[f][i] for i in rows], dev) for f in fields])
            return torch.nn.functional.cross_entropy(head(rep), y[b])

        train_warm_rows(
            opt, len(warm_rows), loss, epochs=epochs, batch_size=batch_size, generator=gen
        )
    st.eval()
    return st
