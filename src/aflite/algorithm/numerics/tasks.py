"""A task of the block passes: blocks of rows batched together, and the softmax loss and
residual of their logits (:mod:`aflite.algorithm.numerics.blocks`,
:mod:`aflite.algorithm.models.linear.sparse_pass`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from aflite.algorithm.numerics.sparse_rows import SparseRows

__all__ = ["BlockTask", "loss_residual"]


@dataclass
class BlockTask:
    """Blocks batched together: their rows' store positions (G, b), weights (1 for a row, 0
    for padding), labels, the classifiers each block trains (G, s; padded with P) and which
    classifiers hold each block out (G, P)."""

    pos: torch.Tensor
    w: torch.Tensor
    y: torch.Tensor
    members: torch.Tensor
    held: torch.Tensor
    x: torch.Tensor | None = None
    sparse: SparseRows | None = None  # raw rows (G*b, d), for the sparse pass
    sparse_t: torch.Tensor | None = None  # their (d, G*b) transpose, torch CSR


def loss_residual(logits: torch.Tensor, task: BlockTask) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy (g, s) float64 and residual softmax - onehot (g, s, C, n), both
    weighted by the rows' 1/0, from the (g, s, C, n) logits of a task's blocks under their
    classifiers."""
    g, s, _, n = logits.shape
    logp = torch.log_softmax(logits, dim=2)
    lab = task.y[:, None, None, :].expand(g, s, 1, n)
    picked = torch.gather(logp, 2, lab).squeeze(2)
    loss = -(picked * task.w[:, None, :]).sum(dim=2, dtype=torch.float64)
    resid = logp.exp_()
    resid.scatter_add_(2, lab, resid.new_full((1, 1, 1, 1), -1.0).expand(g, s, 1, n))
    resid.mul_(task.w[:, None, None, :])
    return loss, resid
