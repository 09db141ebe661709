"""Random training/held-out partitions of the current set, as an ``N x P`` 0/1 mask.

Rows are always addressed by integer position, so no prediction can be credited to the wrong
row. All randomness comes from one ``torch.Generator`` threaded through the whole run.

Grouped partitions keep every group whole and still give every row the same chance, t/n, of
training a given classifier, whatever its group's size: each group starts with inclusion
probability t/n and pairs of groups are rounded against each other with the size-weighted
total held fixed (dependent "pipage" rounding, Gandhi et al. 2006). Each pairing step keeps
every group's marginal probability, so rows in large and small groups train equally often,
and the training part has exactly t rows whenever the last group left undecided is a single
row (singletons are rounded last for that reason); otherwise it is within one group of t.
"""

from __future__ import annotations

import torch

__all__ = ["train_masks", "grouped_inclusion"]

_EPS = 1e-9


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

    ``groups``: optional (N,) int64 group codes in ``[0, G)``; a group never straddles a split
    (see the module docstring for the sampling design).

    Returns an (N, P) mask with 1 where the row trains that partition's classifier.
    """
    if groups is None:
        keys = torch.rand((n_rows, n_partitions), generator=generator, device=device)
        idx = torch.topk(keys, train_size, dim=0, largest=False, sorted=False).indices
        mask = torch.zeros((n_rows, n_partitions), dtype=dtype, device=device)
        mask.scatter_(0, idx, 1.0)
        return mask
    sizes = torch.bincount(groups).to(torch.float64)
    chosen = grouped_inclusion(sizes, n_partitions, train_size / n_rows, generator=generator)
    return chosen.T.to(dtype)[groups]


def grouped_inclusion(
    sizes: torch.Tensor, n_partitions: int, fraction: float, *, generator: torch.Generator
) -> torch.Tensor:
    """(P, G) 0/1 choice of groups with P(group chosen) = ``fraction`` for every group and the
    chosen sizes summing to ``fraction * sum(sizes)``: exactly when there are enough
    single-row groups, else within one group of it.
    """
    dev = sizes.device
    total = float(fraction * float(sizes.sum()))
    multi = torch.nonzero(sizes > 1).squeeze(1)
    single = torch.nonzero(sizes == 1).squeeze(1)
    biggest = float(sizes.max())
    if min(fraction, 1 - fraction) * len(single) < biggest:
        # too few singletons to absorb the last group's rounding: round them like the others
        multi, single = torch.arange(len(sizes), device=dev), single[:0]
    out = torch.zeros((n_partitions, len(sizes)), dtype=torch.float32, device=dev)
    taken = torch.zeros(n_partitions, dtype=torch.float64, device=dev)
    if len(multi):
        chosen = _pipage(sizes[multi], n_partitions, fraction, generator)
        out[:, multi] = chosen.to(torch.float32)
        taken = (chosen * sizes[multi]).sum(dim=1)
    if len(single):
        # Singletons are exchangeable: a uniform subset of exactly the remaining size keeps
        # each one's marginal at E[remaining] / n_single = fraction.
        need = torch.round(total - taken).clamp(0, len(single))
        keys = torch.rand((n_partitions, len(single)), generator=generator, device=dev)
        rank = torch.argsort(torch.argsort(keys, dim=1), dim=1)
        out[:, single] = (rank < need[:, None]).to(torch.float32)
    return out


def _pipage(sizes: torch.Tensor, n_partitions: int, fraction: float, generator) -> torch.Tensor:
    """Dependent rounding of x_g = fraction over groups, the sum of sizes * x fixed at every
    step; the one group per partition that may stay undecided is rounded on its own."""
    dev = sizes.device
    g = len(sizes)
    x = torch.full((n_partitions, g), float(fraction), dtype=torch.float64, device=dev)
    size = sizes.expand(n_partitions, g)
    rows = torch.arange(n_partitions, device=dev)[:, None]
    m = g // 2
    for _ in range(4 * max(1, g.bit_length()) + 8):
        frac = (x > _EPS) & (x < 1 - _EPS)
        if m == 0 or not bool((frac.sum(dim=1) >= 2).any()):
            break
        # undecided groups first, in random order; pair neighbours (0,1), (2,3), ...
        key = torch.rand((n_partitions, g), generator=generator, device=dev, dtype=torch.float64)
        order = torch.argsort(key + 2.0 * (~frac).to(torch.float64), dim=1)
        i, j = order[:, 0 : 2 * m : 2], order[:, 1 : 2 * m : 2]
        xi, xj = x[rows, i], x[rows, j]
        si, sj = size[rows, i], size[rows, j]
        live = frac[rows, i] & frac[rows, j]
        # move weighted mass between the pair, keeping si*xi + sj*xj fixed
        up = torch.minimum((1 - xi) * si, xj * sj)  # xi up, xj down
        down = torch.minimum(xi * si, (1 - xj) * sj)  # xi down, xj up
        u = torch.rand(xi.shape, generator=generator, device=dev, dtype=torch.float64)
        go_up = u * (up + down) < down  # P(up) = down / (up + down): marginals unchanged
        d = torch.where(live, torch.where(go_up, up, -down), torch.zeros_like(up))
        x[rows, i] = _snap(xi + d / si)
        x[rows, j] = _snap(xj - d / sj)
    r = torch.rand(x.shape, generator=generator, device=dev, dtype=torch.float64)
    return torch.where((x > _EPS) & (x < 1 - _EPS), (r < x).to(torch.float64), x.round())


def _snap(v: torch.Tensor) -> torch.Tensor:
    v = torch.where(v < _EPS, torch.zeros_like(v), v)
    return torch.where(v > 1 - _EPS, torch.ones_like(v), v)
