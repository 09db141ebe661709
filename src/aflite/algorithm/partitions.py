"""Random training/held-out partitions of the current set, as an ``N x P`` 0/1 mask.

Rows are always addressed by integer position, so no prediction can be credited to the wrong
row. All randomness comes from one ``torch.Generator`` threaded through the whole run.
"""

from __future__ import annotations

import torch

__all__ = ["train_masks"]


def train_masks(
    n_rows: int,
    n_partitions: int,
    train_size: int,
    *,
    generator: torch.Generator,
    device: torch.device,
    groups: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Draw ``n_partitions`` random training parts of ``train_size`` rows each.

    Parameters
    ----------
    groups:
        Optional (N,) int64 group codes in ``[0, G)``. Whole groups are drawn in random order
        until adding the next would exceed ``train_size`` (at least one group is always taken),
        so a group never straddles a split and a training part holds at most ``train_size``
        rows.

    Returns
    -------
    (N, P) mask with 1 where the row trains that partition's classifier.
    """
    if groups is None:
        keys = torch.rand((n_rows, n_partitions), generator=generator, device=device)
        idx = torch.topk(keys, train_size, dim=0, largest=False, sorted=False).indices
        mask = torch.zeros((n_rows, n_partitions), dtype=dtype, device=device)
        mask.scatter_(0, idx, 1.0)
        return mask

    n_groups = int(groups.max().item()) + 1
    sizes = torch.bincount(groups, minlength=n_groups)
    keys = torch.rand((n_groups, n_partitions), generator=generator, device=device)
    order = torch.argsort(keys, dim=0)
    cum = torch.cumsum(sizes[order], dim=0)
    take = cum <= train_size
    take[0] = True
    group_mask = torch.zeros((n_groups, n_partitions), dtype=dtype, device=device)
    group_mask.scatter_(0, order, take.to(dtype))
    return group_mask[groups]
