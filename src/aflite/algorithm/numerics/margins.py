"""What a held-out prediction says about its row: right or wrong, and by how much; and the
logit that rules a class out."""

from __future__ import annotations

import math

import torch

__all__ = ["NEG", "gold_margin"]

# the logit of a class a classifier must never predict (absent from its training part, or a
# padded choice of an item): never the argmax, and no gradient through its softmax term
NEG = -1e30


def gold_margin(
    logits: torch.Tensor, labels: torch.Tensor, clip: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """For logits (..., C) and labels (...): whether the argmax is the label (the first of
    equal values, as scikit-learn's ``predict``), and the label's margin, its decision value
    less the best other class's, clipped to +-``clip`` (a class the model was never shown
    sits at ``NEG``)."""
    lab = labels.unsqueeze(-1)
    gold = torch.gather(logits, -1, lab).squeeze(-1)
    others = logits.scatter(-1, lab, -math.inf).amax(dim=-1)
    return logits.argmax(dim=-1) == labels, (gold - others).clamp(-clip, clip)
