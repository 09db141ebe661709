"""The direct forms of the least-squares family (:mod:`aflite.algorithm.models.ridge.fit`): each
part's t x t (dual) or d x d (primal) system, assembled in float64, factorised in float32 and
refined against the float64 matrix."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from aflite._internal.threads import workers
from aflite._internal.transfer import to_host
from aflite.algorithm.numerics.blocks import BlockDesign
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "REFINE_STEPS",
    "SOLVE_BYTES",
    "PrimalSums",
    "dual_solve",
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


def dual_solve(k_all, targets, order, w, alpha, steps: int = REFINE_STEPS):
    """(g, t_max, C) dual coefficients and (g, C) target means of a group of parts: the
    solution of ``(Kc + alpha t I) A = Yc`` on each part's centred kernel (refined at most
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
    kc.diagonal(dim1=1, dim2=2).add_(torch.where(w > 0, alpha[:, None], 1.0))
    yt = targets[order] * w[:, :, None]
    ymean = yt.sum(dim=1) / t[:, None]
    yc = (yt - ymean[:, None, :]) * w[:, :, None]
    a, info = solve_spd(kc, yc, steps)
    info["bound"] = info["resid"].amax(dim=1) / alpha.sqrt()
    return a, ymean, info


@dataclass
class Parts:
    """A phase's training parts: ``order`` (P, t_max) store positions of each part's rows,
    ``weight`` (P, t_max) 1 for a row, 0 for padding. Under block partitions also the design
    and the store positions of the rows it dealt (``positions``), through whose blocks the
    primal form applies every part's matrix in one pass."""

    order: torch.Tensor
    weight: torch.Tensor
    design: BlockDesign | None = None
    positions: torch.Tensor | None = None

    @property
    def n_partitions(self) -> int:
        return int(self.order.shape[0])


@dataclass
class _Sums:
    """Some parts' sums: of x x^T (g, d, d), of x (g, d), of x y^T (g, d, C), of y (g, C),
    and their rows (g,)."""

    xx: torch.Tensor
    x: torch.Tensor
    xy: torch.Tensor
    y: torch.Tensor
    n: torch.Tensor


BLOCK_BYTES = 1 << 30  # every block's float64 [X Y]^T [X Y] is kept up to this size


class PrimalSums:
    """The parts' sums, formed a group of parts at a time (``of(j)``), so that only a group's
    d x d matrices are held at once: from every block's ``[X Y]^T [X Y]``, computed once a
    phase (each current row read once), when those fit in ``BLOCK_BYTES``; else from each
    part's own gathered rows. Float64 throughout."""

    def __init__(self, store: FeatureStore, targets: torch.Tensor, parts: Any) -> None:
        self.store, self.targets, self.parts = store, targets, parts
        d, c = store.dim, targets.shape[1]
        self.blocks = None
        self.block_pos: list[torch.Tensor] = []
        if parts.design is not None:
            bounds = to_host(parts.design.bounds).tolist()
            order = parts.positions[parts.design.order]
            self.block_pos = [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        if self.block_pos and len(self.block_pos) * (d + c) ** 2 * 8 <= BLOCK_BYTES:
            self.blocks = self._block_sums()

    def _block_sums(self):
        store, targets = self.store, self.targets
        dev, dc = store.device, store.dim + self.targets.shape[1]
        nb = len(self.block_pos)
        full = torch.empty((nb, dc, dc), dtype=torch.float64, device=dev)
        sums = torch.empty((nb, dc), dtype=torch.float64, device=dev)

        def block(i: int) -> None:
            pos = self.block_pos[i]
            z = torch.cat([store.gather(pos).double(), targets[pos]], dim=1)  # [X Y]
            torch.mm(z.T, z, out=full[i])
            sums[i] = z.sum(dim=0)

        for _ in workers().map(block, range(nb)):
            pass
        sizes = torch.tensor(
            [float(len(b)) for b in self.block_pos], dtype=torch.float64, device=dev
        )
        return full, sums, sizes

    def of(self, j: torch.Tensor) -> _Sums:
        """The sums of the parts ``j``."""
        d = self.store.dim
        if self.blocks is not None:
            full, sums, sizes = self.blocks
            inc = self.parts.design.incidence[:, j].to(torch.float64)  # (B, g)
            nb, dc, _ = full.shape
            per_part = (inc.T @ full.view(nb, dc * dc)).view(len(j), dc, dc)
            part_sums = inc.T @ sums
            return _Sums(
                per_part[:, :d, :d],
                part_sums[:, :d],
                per_part[:, :d, d:],
                part_sums[:, d:],
                inc.T @ sizes,
            )
        w = self.parts.weight[j].to(torch.float64)
        order = self.parts.order[j]
        out = []
        for k in range(len(j)):
            rows = self.store.gather(order[k]).double() * w[k, :, None]
            yk = self.targets[order[k]] * w[k, :, None]
            out.append((rows.T @ rows, rows.sum(dim=0), rows.T @ yk, yk.sum(dim=0)))
        return _Sums(*(torch.stack([o[i] for o in out]) for i in range(4)), w.sum(dim=1))


def primal_solve(sums: _Sums, alpha: torch.Tensor, steps: int = REFINE_STEPS, centre: bool = True):
    """(g, d, C) weights and (g, C) intercepts of the parts ``j``, by the primal form on
    centred sums (``Xc^T Xc = sum x x^T - n xbar xbar^T``), refined at most ``steps`` times;
    ``info["bound"]`` (g,): ``||r|| / (alpha t)`` bounds how far the weights can be from the
    exact ones (the matrix is at least ``alpha t I``), ``info["means"]`` the parts' mean rows."""
    n = sums.n
    xbar = sums.x / n[:, None]
    ybar = sums.y / n[:, None]
    if not centre:  # no intercept (the items' choice-wise fit: each item's rows are centred)
        xbar, ybar = torch.zeros_like(xbar), torch.zeros_like(ybar)
    # in place, on the parts' own copy: each pass over g d x d float64 matrices is memory-bound
    gram = torch.baddbmm(sums.xx, (n[:, None] * xbar)[:, :, None], xbar[:, None, :], alpha=-1.0)
    rhs = torch.baddbmm(sums.xy, (n[:, None] * xbar)[:, :, None], ybar[:, None, :], alpha=-1.0)
    gram.diagonal(dim1=1, dim2=2).add_(alpha[:, None])
    coef, info = solve_spd(gram, rhs, steps)
    info["bound"] = info["resid"].amax(dim=1) / alpha
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
    fac, err = torch.linalg.cholesky_ex(m.float())
    ok = err == 0
    x = torch.cholesky_solve(rhs.float(), fac).double()
    x = torch.where(ok[:, None, None], x, torch.zeros_like(x))
    prev = torch.full((m.shape[0],), math.inf, dtype=torch.float64, device=m.device)
    live = ok.clone()
    limit, steps = steps, 0
    while bool(live.any()) and steps < limit:
        steps += 1
        resid = rhs - m @ x
        dx = torch.cholesky_solve(resid.float(), fac).double()
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
