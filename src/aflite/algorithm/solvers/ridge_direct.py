"""The direct forms of the least-squares family (:mod:`aflite.algorithm.solvers.ridge`): each
part's t x t (dual) or d x d (primal) system, assembled in float64, factorised in float32 and
refined against the float64 matrix."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from aflite._internal.threads import workers
from aflite.algorithm.storage import FeatureStore

__all__ = ["REFINE_STEPS", "dual_solve", "primal_solve", "primal_sums", "solve_spd", "xt_times"]

REFINE_STEPS = 12


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
class _Sums:
    """Per part: sum of x x^T (P, d, d), of x (P, d), of x y^T (P, d, C), of y (P, C), rows."""

    xx: torch.Tensor
    x: torch.Tensor
    xy: torch.Tensor
    y: torch.Tensor
    n: torch.Tensor


def primal_sums(store: FeatureStore, targets: torch.Tensor, parts: Any) -> _Sums:
    """Every part's sums: from its blocks' sums under block partitions (each current row read
    once), else from its own gathered rows. Float64 throughout."""
    dev, d, c = store.device, store.dim, targets.shape[1]
    p = parts.n_partitions
    if parts.block_pos is not None:
        inc = parts.incidence.to(torch.float64)  # (B, P)
        nb = len(parts.block_pos)

        # one buffer of every block's [X Y]^T [X Y] (no copies of them afterwards), summed
        # into the parts' by one product with the incidence
        dc = d + c
        full = torch.empty((nb, dc, dc), dtype=torch.float64, device=dev)
        sums = torch.empty((nb, dc), dtype=torch.float64, device=dev)

        def block(i: int) -> None:
            pos = parts.block_pos[i]
            z = torch.cat([store.gather(pos).double(), targets[pos]], dim=1)  # [X Y]
            torch.mm(z.T, z, out=full[i])
            sums[i] = z.sum(dim=0)

        for _ in workers().map(block, range(nb)):
            pass
        per_part = (inc.T @ full.view(nb, dc * dc)).view(p, dc, dc)
        del full
        xx, xy = per_part[:, :d, :d], per_part[:, :d, d:]
        part_sums = inc.T @ sums
        x, y = part_sums[:, :d], part_sums[:, d:]
        sizes = torch.tensor([float(len(b)) for b in parts.block_pos], dtype=torch.float64,
                             device=dev)
        n = inc.T @ sizes
        return _Sums(xx, x, xy, y, n)
    w = parts.weight.to(torch.float64)

    def part(j: int):
        rows = store.gather(parts.order[j]).double() * w[j, :, None]
        yj = targets[parts.order[j]] * w[j, :, None]
        return rows.T @ rows, rows.sum(dim=0), rows.T @ yj, yj.sum(dim=0)

    out = list(workers().map(part, range(p)))
    return _Sums(
        torch.stack([o[0] for o in out]), torch.stack([o[1] for o in out]),
        torch.stack([o[2] for o in out]), torch.stack([o[3] for o in out]), w.sum(dim=1),
    )


def primal_solve(sums: _Sums, j: torch.Tensor, alpha: torch.Tensor, steps: int = REFINE_STEPS):
    """(g, d, C) weights and (g, C) intercepts of the parts ``j``, by the primal form on
    centred sums (``Xc^T Xc = sum x x^T - n xbar xbar^T``), refined at most ``steps`` times;
    ``info["bound"]`` (g,): ``||r|| / (alpha t)`` bounds how far the weights can be from the
    exact ones (the matrix is at least ``alpha t I``), ``info["means"]`` the parts' mean rows."""
    n = sums.n[j]
    xbar = sums.x[j] / n[:, None]
    ybar = sums.y[j] / n[:, None]
    # in place, on the parts' own copy: each pass over g d x d float64 matrices is memory-bound
    gram = torch.baddbmm(sums.xx[j], (n[:, None] * xbar)[:, :, None], xbar[:, None, :], alpha=-1.0)
    rhs = torch.baddbmm(sums.xy[j], (n[:, None] * xbar)[:, :, None], ybar[:, None, :], alpha=-1.0)
    gram.diagonal(dim1=1, dim2=2).add_(alpha[:, None])
    coef, info = solve_spd(gram, rhs, steps)
    info["bound"] = info["resid"].amax(dim=1) / alpha
    info["means"] = xbar
    intercept = ybar - (xbar[:, None, :] @ coef).squeeze(1)
    return coef, intercept, info


def solve_spd(m: torch.Tensor, rhs: torch.Tensor, steps: int = REFINE_STEPS) -> tuple[torch.Tensor, dict]:
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
