"""Random training/held-out partitions of the current set.

Two designs. **Block partitions** (the default): the current rows are dealt at random into
blocks of about b rows and each classifier trains on a random set of t/b blocks, every block
in the same number of training parts (+-1). A row still trains each classifier with
probability t/n, but a block is read once per solver pass for all the classifiers that use it,
as one matrix product with ~m*t/n * C columns, so only the useful products are done.
**Uniform partitions** (Algorithm 1's wording): each training part is an independent uniform
draw of t rows, returned as an ``N x P`` 0/1 mask.

Rows are always addressed by integer position, so no prediction can be credited to the wrong
row. All randomness comes from one ``torch.Generator`` threaded through the whole run, and is
drawn in the rows' canonical order (``canon``: the positions sorted by row id), so the same
rows stored in another order get the same partitions.

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

from aflite.algorithm.numerics.blocks import MIN_BLOCKS_PER_PART, BlockDesign

__all__ = [
    "block_design",
    "deal_blocks",
    "grouped_inclusion",
    "kept_block_design",
    "train_masks",
]

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
    canon: torch.Tensor | None = None,
) -> torch.Tensor:
    """Draw ``n_partitions`` random training parts of ``train_size`` rows each.

    ``groups``: optional (N,) int64 group codes in ``[0, G)``; a group never straddles a split
    (see the module docstring for the sampling design). ``canon``: the positions in canonical
    order (default: as stored).

    Returns an (N, P) mask with 1 where the row trains that partition's classifier.
    """
    if groups is None:
        keys = torch.rand((n_rows, n_partitions), generator=generator, device=device)
        if canon is not None:  # the r-th draw belongs to the r-th row in canonical order
            keys[canon] = keys.clone()
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


def _pipage(
    sizes: torch.Tensor, n_partitions: int, fraction: float, generator: torch.Generator
) -> torch.Tensor:
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


def block_design(
    n_rows: int,
    n_partitions: int,
    train_size: int,
    *,
    block_rows: int,
    generator: torch.Generator,
    device: torch.device,
    groups: torch.Tensor | None = None,
    canon: torch.Tensor | None = None,
) -> BlockDesign:
    """Deal the current rows into blocks and give each classifier q = t/b of them.

    q = round(t / ``block_rows``), at least ``MIN_BLOCKS_PER_PART``; the rows are dealt into B = round(q n / t)
    blocks so that q blocks hold about t rows. With ``groups`` (N,) whole groups are dealt,
    in random order, each block closed near n/B rows; every row is still in a training part
    with probability q/B whatever its group's size, as every block is. ``canon``: the
    positions in canonical order (default: as stored); rows are dealt in that order.
    """
    order, sizes, q = deal_blocks(
        n_rows, train_size, block_rows=block_rows, generator=generator, device=device,
        groups=groups, canon=canon,
    )  # fmt: skip
    n_blocks = len(sizes)
    q = min(q, n_blocks - 1)  # some block must stay held out
    bounds = torch.zeros(n_blocks + 1, dtype=torch.int64, device=device)
    bounds[1:] = torch.cumsum(sizes, 0)
    return BlockDesign(order, bounds, _balanced_incidence(n_blocks, n_partitions, q, generator))


def deal_blocks(
    n_rows: int,
    train_size: int,
    *,
    block_rows: int,
    generator: torch.Generator,
    device: torch.device,
    groups: torch.Tensor | None = None,
    canon: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """The dealing of :func:`block_design`: the current rows block by block (``order``), the
    blocks' sizes and the blocks per training part q."""
    canon = torch.arange(n_rows, device=device) if canon is None else canon
    q = max(MIN_BLOCKS_PER_PART, int(round(train_size / max(1, block_rows))))
    q = max(1, min(q, train_size))  # a block holds at least one row
    n_blocks = max(2, int(round(q * n_rows / max(1, train_size))))
    if groups is None:
        n_blocks = min(n_blocks, n_rows)
        order = canon[torch.randperm(n_rows, generator=generator, device=device)]
        sizes = torch.full((n_blocks,), n_rows // n_blocks, dtype=torch.int64, device=device)
        sizes[: n_rows % n_blocks] += 1
    else:
        order, sizes = _deal_groups(groups[canon], n_rows / n_blocks, generator)
        order = canon[order]
    return order, sizes, q


def kept_block_design(
    blocks: torch.Tensor,
    n_blocks: int,
    n_partitions: int,
    train_size: int,
    *,
    generator: torch.Generator,
    canon: torch.Tensor,
) -> BlockDesign:
    """The current rows in the blocks an earlier phase dealt them to (``blocks`` (n,) in
    ``[0, n_blocks)``; block i of the design is block i of that dealing, empty once all its
    rows have left), each classifier given q = round(t B / n) of the blocks that still have
    rows, drawn afresh: the training parts keep about t rows as the set shrinks. Rows are
    listed by block, in canonical order (``canon``) within one."""
    device = blocks.device
    n = len(blocks)
    rank = torch.empty_like(canon)
    rank[canon] = torch.arange(n, device=device)
    order = torch.argsort(blocks * n + rank)
    sizes = torch.bincount(blocks, minlength=n_blocks)
    bounds = torch.zeros(n_blocks + 1, dtype=torch.int64, device=device)
    bounds[1:] = torch.cumsum(sizes, 0)
    live = torch.nonzero(sizes > 0).squeeze(1)
    q = int(round(train_size * len(live) / max(1, n)))
    q = max(1, min(q, len(live) - 1))
    incidence = torch.zeros((n_blocks, n_partitions), dtype=torch.bool, device=device)
    incidence[live] = _balanced_incidence(len(live), n_partitions, q, generator)
    return BlockDesign(order, bounds, incidence)


def _deal_groups(
    groups: torch.Tensor, target: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of whole groups in a random group order, cut into blocks of about ``target``
    rows: each group goes to the block its middle row falls in (a group larger than the
    target makes a block of its own)."""
    dev = groups.device
    n_groups = int(groups.max()) + 1
    gsizes = torch.bincount(groups, minlength=n_groups)
    perm = torch.randperm(n_groups, generator=generator, device=dev)
    rank = torch.empty_like(perm)
    rank[perm] = torch.arange(n_groups, device=dev)
    order = torch.argsort(rank[groups], stable=True)
    s = gsizes[perm]
    twice_middle = 2 * torch.cumsum(s, 0) - s  # integers: the same sums in any order
    block = torch.floor(twice_middle.to(torch.float64) / (2 * target)).to(torch.int64)
    _, per_group = torch.unique_consecutive(block, return_inverse=True)
    sizes = torch.zeros(int(per_group.max()) + 1, dtype=torch.int64, device=dev)
    sizes.index_add_(0, per_group, gsizes[perm])
    return order, sizes


def _balanced_incidence(
    n_blocks: int, n_partitions: int, q: int, generator: torch.Generator
) -> torch.Tensor:
    """(B, P) bool: each classifier takes the q least-used blocks, ties broken at random, so
    every block trains the same number of classifiers (+-1) and, the blocks being
    exchangeable, each is in a given training part with probability q/B."""
    dev = generator.device
    load = torch.zeros(n_blocks, dtype=torch.float64, device=dev)
    keys = torch.rand(
        (n_partitions, n_blocks), generator=generator, device=dev, dtype=torch.float64
    )
    out = torch.zeros((n_blocks, n_partitions), dtype=torch.bool, device=dev)
    for j in range(n_partitions):
        pick = torch.topk(load + keys[j], q, largest=False).indices
        out[pick, j] = True
        load[pick] += 1
    return out
