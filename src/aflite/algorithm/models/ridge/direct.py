"""The direct forms of the least-squares family (:mod:`aflite.algorithm.models.ridge.fit`): each
part's t x t (dual) or d x d (primal) system, assembled in float64, factorised in float32 and
refined against the float64 matrix."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from aflite._internal.threads import workers
from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.numerics.blocks import BlockDesign
from aflite.algorithm.numerics.cholesky import cholesky, cholesky_solve
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "BLOCK_BYTES",
    "REFINE_STEPS",
    "SOLVE_BYTES",
    "BlockSums",
    "PartSums",
    "PrimalSums",
    "dual_solve",
    "parts_from_blocks",
    "primal_solve",
    "solve_spd",
    "xt_times",
]

REFINE_STEPS = 12
SOLVE_BYTES = 256 << 20  # float64 systems solved together (a group of classifiers)


def xt_times(store: FeatureStore, right: torch.Tensor) -> torch.Tensor:
    """X^T @ ``right`` (N_store, k) in float64 over the stored rows, summed chunk by chunk in
    a fixed order."""
    out = torch.zeros((store.dim, right.shape[1]), dtype=torch.float64, device=right.device)
    spans = store.ranges(4096)

    def run(span: tuple[int, int]) -> torch.Tensor:
        s, e = span
        return store.read(s, e).double().T @ right[s:e]

    for part in workers().map(run, spans):
        out += part
    return out


def dual_solve(k_all, targets, order, w, penalty, steps: int = REFINE_STEPS):
    """(g, t_max, C) dual coefficients and (g, C) target means of a group of parts: the
    solution of ``(Kc + penalty I) A = Yc`` (``penalty`` (g,): each part's alpha * t) on each
    part's centred kernel (refined at most
    ``steps`` times), and in ``info["bound"]`` (g,) how far any class's weights
    ``W = Xc^T A`` can be from the exact ones: ``||r|| / sqrt(alpha t)``, since
    ``||Xc^T e||^2 <= e^T (Kc + alpha t I) e = r^T (Kc + alpha t I)^-1 r``."""
    g, tm = order.shape
    t = w.sum(dim=1)
    kc = k_all[order[:, :, None], order[:, None, :]]  # (g, tm, tm)
    r = (kc @ w[:, :, None]).squeeze(2) / t[:, None]  # row means over the part's real rows
    s = (r * w).sum(dim=1) / t
    kc.sub_(r[:, :, None]).sub_(r[:, None, :]).add_(s[:, None, None])
    if bool((w == 0).any()):
        # a padding row is its own unknown with matrix 1 and target 0: its coefficient is 0
        kc.mul_(w[:, :, None] * w[:, None, :])
    kc.diagonal(dim1=1, dim2=2).add_(torch.where(w > 0, penalty[:, None], 1.0))
    yt = targets[order] * w[:, :, None]
    ymean = yt.sum(dim=1) / t[:, None]
    yc = (yt - ymean[:, None, :]) * w[:, :, None]
    a, info = solve_spd(kc, yc, steps)
    info["bound"] = info["resid"].amax(dim=1) / penalty.sqrt()
    return a, ymean, info


class Parts:
    """A phase's training parts: ``order`` (P, t_max) store positions of each part's rows,
    ``weight`` (P, t_max) 1 for a row, 0 for padding. Under block partitions also the design
    and the store positions of the rows it dealt (``positions``): through its blocks the
    primal form sums every part's rows, and the rows of each part are listed only when a
    form asks for them (listing them took a tenth of a phase at N=200,000 and m=64)."""

    def __init__(
        self,
        order: torch.Tensor | None = None,
        weight: torch.Tensor | None = None,
        design: BlockDesign | None = None,
        positions: torch.Tensor | None = None,
    ) -> None:
        if order is None and design is None:
            raise ValueError("Parts: give the parts' rows or a block design")
        self._order, self._weight = order, weight
        self.design, self.positions = design, positions

    @classmethod
    def of_design(cls, design: BlockDesign, positions: torch.Tensor) -> Parts:
        return cls(design=design, positions=positions)

    def _rows(self) -> None:
        self._order, self._weight = parts_of_mask(
            self.design.train_mask(torch.bool), self.positions
        )

    @property
    def order(self) -> torch.Tensor:
        if self._order is None:
            self._rows()
        return self._order

    @property
    def weight(self) -> torch.Tensor:
        if self._weight is None:
            self._rows()
        return self._weight

    @property
    def n_partitions(self) -> int:
        if self.design is not None:
            return self.design.n_partitions
        return int(self._order.shape[0])

    def _per_block(self, values: torch.Tensor) -> torch.Tensor:
        """(B, k) sums of ``values`` (n, k) over each block's rows."""
        block = self.design.block_of_rows()
        out = torch.zeros((self.design.n_blocks, values.shape[1]), dtype=values.dtype,
                          device=values.device)  # fmt: skip
        return out.index_add_(0, block, values)

    def sizes(self) -> torch.Tensor:
        """(P,) float64 rows of every part."""
        if self._weight is None:
            sizes = (self.design.bounds[1:] - self.design.bounds[:-1]).to(torch.float64)
            return self.design.incidence.T.to(torch.float64) @ sizes
        return self._weight.to(torch.float64).sum(dim=1)

    def class_counts(self, y: torch.Tensor, n_classes: int) -> torch.Tensor:
        """(P, C) int64 rows of every class in every part (stored labels ``y``)."""
        if self._order is None:
            onehot = torch.nn.functional.one_hot(y[self.positions], n_classes)
            per_block = self._per_block(onehot.to(torch.int64))
            return self.design.incidence.T.to(torch.int64) @ per_block
        present = torch.zeros((self.n_partitions, n_classes), dtype=torch.int64,
                              device=y.device)  # fmt: skip
        return present.scatter_add_(1, y[self._order], (self._weight > 0).to(torch.int64))


def parts_of_mask(train: torch.Tensor, positions: torch.Tensor | None = None):
    """(P, t_max) positions of each column's training rows (ascending) and their 1/0 weights
    (padding points at row 0 with weight 0); ``positions`` maps the mask's rows to store
    positions."""
    part, row = torch.nonzero(train.T > 0, as_tuple=True)  # by part, rows ascending
    sizes = torch.bincount(part, minlength=train.shape[1])
    t_max = int(sizes.max())
    slot = torch.arange(len(part), device=train.device) - (torch.cumsum(sizes, 0) - sizes)[part]
    order = torch.zeros((train.shape[1], t_max), dtype=torch.int64, device=train.device)
    weight = torch.zeros((train.shape[1], t_max), dtype=torch.float32, device=train.device)
    order[part, slot] = row if positions is None else positions[row]
    weight[part, slot] = 1.0
    return order, weight


@dataclass
class PartSums:
    """Some parts' sums: of x x^T (g, d, d), of x (g, d), of x y^T (g, d, C), of y (g, C),
    and their rows (g,)."""

    xx: torch.Tensor
    x: torch.Tensor
    xy: torch.Tensor
    y: torch.Tensor
    n: torch.Tensor


BLOCK_BYTES = 1 << 30  # every block's float64 [X 1 Y]^T [X 1 Y] is kept up to this size


def gram64(z: torch.Tensor, out: torch.Tensor) -> None:
    """``out = z^T z`` in float64 for float64 rows ``z``. On a CPU through NumPy, whose
    product of a matrix with its own transpose is a symmetric rank-k update: half the
    multiplications of torch's general product (0.40 s against 0.75 s for 20,000 rows of
    d = 1,028 on one core)."""
    if z.device.type == "cpu":
        np.matmul(z.numpy().T, z.numpy(), out=out.numpy())
    else:
        torch.mm(z.T, z, out=out)


class BlockSums:
    """Each block's float64 ``[X 1 Y]^T [X 1 Y]`` kept from phase to phase with the input rows
    it sums (sorted): under blocks a model keeps (:func:`aflite.algorithm.loop.partitions.
    kept_block_design`) a block only loses rows, and its sums are brought down by theirs,
    so after the first phase the products are the removed rows', not every row's. Dropped
    when the store is compacted (the removed rows' features go with it)."""

    def __init__(self) -> None:
        self.full: torch.Tensor | None = None
        self.members: list[np.ndarray | None] = []


class PrimalSums:
    """The parts' sums, formed a group of parts at a time (``of(j)``), so that only a group's
    d x d matrices are held at once: from every block's ``[X 1 Y]^T [X 1 Y]``, computed once
    a phase (each current row read once, as a symmetric product), when those fit in
    ``BLOCK_BYTES``; else from each part's own gathered rows. Float64 throughout: the
    products of float32 rows are exact in float64, so the sums carry float64 rounding only."""

    def __init__(
        self, store: FeatureStore, targets: torch.Tensor, parts: Any, kept: BlockSums | None = None
    ) -> None:
        self.store, self.targets, self.parts = store, targets, parts
        d, c = store.dim, targets.shape[1]
        self.blocks: torch.Tensor | None = None
        self.block_pos: list[torch.Tensor] = []
        self.bounds: list[int] = []
        if parts.design is not None:
            self.bounds = to_host(parts.design.bounds).tolist()
            order = parts.positions[parts.design.order]
            self.block_pos = [order[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])]
        if self.block_pos and len(self.block_pos) * (d + c + 1) ** 2 * 8 <= BLOCK_BYTES:
            self.blocks = self._block_sums(kept or BlockSums(), order)

    def _rows(self, pos: torch.Tensor) -> torch.Tensor:
        """``[X 1 Y]`` (float64) of the stored rows ``pos``."""
        x = self.store.gather(pos)
        d = x.shape[1]
        z = torch.empty((len(pos), d + 1 + self.targets.shape[1]), dtype=torch.float64,
                        device=x.device)  # fmt: skip
        z[:, :d] = x
        z[:, d] = 1.0
        z[:, d + 1 :] = self.targets[pos]
        return z

    def _block_sums(self, kept: BlockSums, order: torch.Tensor) -> torch.Tensor:
        """Every block's sums: brought down from ``kept``'s by the rows that left a block
        since (a block whose rows are not a subset of the kept ones is summed afresh)."""
        dev, w = self.store.device, self.store.dim + 1 + self.targets.shape[1]
        nb = len(self.block_pos)
        rows = self.store.rows[to_host(order)]  # one move of the positions, not one a block
        members = [np.sort(rows[a:b]) for a, b in zip(self.bounds[:-1], self.bounds[1:])]
        full = kept.full
        if full is None or len(full) != nb or full.shape[1] != w or full.device != dev:
            full = torch.empty((nb, w, w), dtype=torch.float64, device=dev)
            kept.members = [None] * nb

        # what each block lost since it was summed (None: sum it afresh), in one move
        lost: list[np.ndarray | None] = []
        for had, now in zip(kept.members, members):
            gone = None if had is None else np.setdiff1d(had, now, assume_unique=True)
            lost.append(gone if gone is not None and len(had) - len(gone) == len(now) else None)
        flat = [g for g in lost if g is not None and len(g)]
        gone_pos = to_device(self.store.positions(np.concatenate(flat)), dev) if flat else None
        starts = np.cumsum([0] + [len(g) if g is not None else 0 for g in lost])

        def block(i: int) -> None:
            if lost[i] is None:
                gram64(self._rows(self.block_pos[i]), full[i])
            elif len(lost[i]):
                less = torch.empty((w, w), dtype=torch.float64, device=dev)
                gram64(self._rows(gone_pos[starts[i] : starts[i + 1]]), less)
                full[i].sub_(less)

        for _ in workers().map(block, range(nb)):
            pass
        kept.full, kept.members = full, members
        return full

    def of(self, j: torch.Tensor) -> PartSums:
        """The sums of the parts ``j``, in new tensors the caller may change in place."""
        d = self.store.dim
        if self.blocks is not None:
            return parts_from_blocks(self.blocks, self.parts.design.incidence[:, j], d)
        w = self.parts.weight[j].to(torch.float64)
        order = self.parts.order[j]
        out = []
        for k in range(len(j)):
            rows = self.store.gather(order[k]).double() * w[k, :, None]
            yk = self.targets[order[k]] * w[k, :, None]
            out.append((rows.T @ rows, rows.sum(dim=0), rows.T @ yk, yk.sum(dim=0)))
        return PartSums(*(torch.stack([o[i] for o in out]) for i in range(4)), w.sum(dim=1))


def parts_from_blocks(full: torch.Tensor, inc: torch.Tensor, d: int) -> PartSums:
    """The sums of the parts whose blocks are the columns of ``inc`` (B, g), from every
    block's float64 ``[X 1 Y]^T [X 1 Y]`` (``full``, (B, w, w)), in new tensors."""
    j = inc.shape[1]
    if full.device.type == "cpu":
        # each part's few blocks added in place: the product with the 0/1 incidence
        # read every block for every part (0.28 s against 0.08 s for 64 parts of 8
        # blocks at d = 1,024 on one core); the d x d sums kept apart, contiguous,
        # for the factorisation and the residuals' products
        xx = torch.empty((j, d, d), dtype=full.dtype)
        edge = torch.empty((j, full.shape[1] - d, full.shape[2]), dtype=full.dtype)
        for k, blocks in enumerate(inc.T.tolist()):  # on the CPU: no transfer
            idx = [b for b, used in enumerate(blocks) if used]
            xx[k].copy_(full[idx[0], :d, :d])
            edge[k].copy_(full[idx[0], d:])
            for b in idx[1:]:
                xx[k].add_(full[b, :d, :d])
                edge[k].add_(full[b, d:])
    else:
        nb, w, _ = full.shape
        per_part = (inc.T.to(full.dtype) @ full.view(nb, w * w)).view(j, w, w)
        xx, edge = per_part[:, :d, :d].contiguous(), per_part[:, d:]
    # edge rows: [1 Y]^T [X 1 Y]
    return PartSums(xx, edge[:, 0, :d], edge[:, 1:, :d].transpose(1, 2).contiguous(),
                    edge[:, 0, d + 1 :], edge[:, 0, d])  # fmt: skip


def primal_solve(
    sums: PartSums, penalty: torch.Tensor, steps: int = REFINE_STEPS, centre: bool = True
):
    """(g, d, C) weights and (g, C) intercepts of the parts ``j``, by the primal form on
    centred sums (``Xc^T Xc = sum x x^T - n xbar xbar^T``), refined at most ``steps`` times;
    ``penalty`` (g,): each part's alpha * t; ``info["bound"]`` (g,): ``||r|| / penalty``
    bounds how far the weights can be from the exact ones (the matrix is at least
    ``penalty I``), ``info["means"]`` the parts' mean rows."""
    n = sums.n
    xbar = sums.x / n[:, None]
    ybar = sums.y / n[:, None]
    if not centre:  # no intercept (the items' choice-wise fit: each item's rows are centred)
        xbar, ybar = torch.zeros_like(xbar), torch.zeros_like(ybar)
    # in place, on the parts' own copy: each pass over g d x d float64 matrices is memory-bound
    gram = sums.xx.baddbmm_((n[:, None] * xbar)[:, :, None], xbar[:, None, :], alpha=-1.0)
    rhs = torch.baddbmm(sums.xy, (n[:, None] * xbar)[:, :, None], ybar[:, None, :], alpha=-1.0)
    gram.diagonal(dim1=1, dim2=2).add_(penalty[:, None])
    coef, info = solve_spd(gram, rhs, steps)
    info["bound"] = info["resid"].amax(dim=1) / penalty
    info["means"] = xbar
    intercept = ybar - (xbar[:, None, :] @ coef).squeeze(1)
    return coef, intercept, info


def solve_spd(
    m: torch.Tensor, rhs: torch.Tensor, steps: int = REFINE_STEPS
) -> tuple[torch.Tensor, dict]:
    """Solve the float64 symmetric positive definite systems ``m x = rhs`` (batched): a
    float32 Cholesky factor, then iterative refinement with float64 residuals until the
    correction stops shrinking (at most ``steps``); systems whose float32 factor fails or
    does not contract (condition number near 1e7) are solved with a float64 factor instead.
    ``info["resid"]`` (g, C): the norm of each column's final float64 residual."""
    fac, ok = cholesky(m.float(), overwrite=True)
    x = cholesky_solve(fac, rhs).double()
    x = torch.where(ok[:, None, None], x, torch.zeros_like(x))
    prev = torch.full((m.shape[0],), math.inf, dtype=torch.float64, device=m.device)
    live = ok.clone()
    limit, steps = steps, 0
    while bool(live.any()) and steps < limit:
        steps += 1
        resid = rhs - m @ x
        dx = cholesky_solve(fac, resid).double()
        size = dx.abs().amax(dim=(1, 2))
        scale = x.abs().amax(dim=(1, 2))
        shrinking = size < 0.5 * prev
        x = torch.where((live & shrinking)[:, None, None], x + dx, x)
        done = size <= 1e-15 * scale
        # converged, or stopped shrinking: the float64 floor (or a failure, checked below)
        live = live & shrinking & ~done
        ok = ok & ~(~shrinking & (prev > 1e-12 * scale))
        prev = size
    fallbacks = int((~ok).sum())
    if fallbacks:
        bad = torch.nonzero(~ok).squeeze(1)
        fac64 = torch.linalg.cholesky(m[bad])
        x[bad] = torch.cholesky_solve(rhs[bad], fac64)
    resid = torch.linalg.vector_norm(rhs - m @ x, dim=1)
    return x, {"steps": steps, "fallbacks": fallbacks, "resid": resid}
