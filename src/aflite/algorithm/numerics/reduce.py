"""Sums into rows picked by an index, in the same order on every run.

A block pass adds each block's loss and gradient into the rows of the classifiers that train
on it, and a classifier trains on several blocks of one task, so the targets repeat. On the
CPU ``index_add_`` adds them one after another; on CUDA it adds repeated targets with atomics,
in an order that changes from run to run, and the last bits of a gradient, then a held-out
prediction near zero margin, then the kept set, changed with it. There the sum is a product
with a one-hot matrix instead: cuBLAS gives the same bits on every run on the same card.
"""

from __future__ import annotations

import torch

__all__ = ["add_rows", "ordered_sums"]


def ordered_sums(device: torch.device) -> bool:
    """Whether sums into repeated rows on ``device`` take the one-hot product: on CUDA, whose
    ``index_add_`` adds repeated targets with atomics. (A test replaces this function to run
    the CUDA path on a CPU.)"""
    return device.type == "cuda"


def add_rows(
    out: torch.Tensor, idx: torch.Tensor, src: torch.Tensor, *, ordered: bool | None = None
) -> torch.Tensor:
    """``out[idx[i]] += src[i]`` for every i (``idx`` 1-D, ``src`` (len(idx), ...)), in an
    order that does not change between runs: by the one-hot product where ``ordered`` (by
    default, where :func:`ordered_sums` says so for ``out``'s device)."""
    if not (ordered_sums(out.device) if ordered is None else ordered):
        return out.index_add_(0, idx, src)
    targets = torch.arange(out.shape[0], device=idx.device)
    onehot = (targets[:, None] == idx[None, :]).to(src.dtype)
    if src.dim() == 1:
        out += onehot @ src
    else:
        out.view(out.shape[0], -1).add_(onehot @ src.reshape(len(idx), -1))
    return out
