"""The least-squares family on mostly-zero features: every part's dual system solved by
conjugate gradients on its raw sparse rows.

A standardised row of n-gram features is ``c + e``: c holds every feature's standardised zero
and e is nonzero only where the raw row is (the demo's hypothesis n-grams: 8.8 of 1,024).
Centring a part's rows removes c, so its centred kernel is ``Kc = Ec Ec^T`` with ``Ec = E_T -
1 ebar^T``, and ``(Kc + alpha t I) A = Yc`` needs only products with the sparse E_T: a CG
step of every part costs two sparse products over the parts' stacked rows. Kc + alpha t I has
its eigenvalues in [alpha t, alpha t + ||Kc||], so CG converges in a few dozen steps; it is
run in float64 until every residual is below ``TOL`` of its right-hand side, which changes a
decision value by less than about 1e-12 of its size: the same solution, to the digits that
decide a prediction, as the direct solve of the dense form.
"""

from __future__ import annotations

import warnings

import torch

from aflite.algorithm.storage import FeatureStore

__all__ = ["TOL", "sparse_dual"]

TOL = 1e-12
MAX_STEPS = 2000


def _csr(crow, col, val, shape) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        return torch.sparse_csr_tensor(crow, col, val, size=shape, check_invariants=False)


def _mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a @ b


def standardised_parts(store: FeatureStore) -> tuple[torch.Tensor, torch.Tensor]:
    """(d,) float64 standardised zero ``c`` and (nnz,) float64 ``e = x - c`` at the store's
    raw nonzeros, computed with the store's own float32 arithmetic."""
    sp = store.sparse
    zero = (-store.mean32) * store.scale32
    std = (sp.val - store.mean32[sp.col]) * store.scale32[sp.col]
    return zero.double(), std.double() - zero.double()[sp.col]  # exact: float64 difference


def sparse_dual(store: FeatureStore, targets: torch.Tensor, order: torch.Tensor,
                w: torch.Tensor, alpha: torch.Tensor, e_val: torch.Tensor, zero: torch.Tensor):
    """Every part's weights (P, d, C) and intercepts (P, C) in standardised coordinates, and
    the CG steps taken, for parts ``order``/``w`` (P, t_max) of the store's rows."""
    sp = store.sparse
    dev = targets.device
    p, tm = order.shape
    d, c = store.dim, targets.shape[1]
    t = w.sum(dim=1)
    # stacked rows: part j's row r is row j*tm + r; its entries sit in columns j*d + feature
    flat = order.reshape(-1)
    real = w.reshape(-1) > 0
    start = sp.crow[flat]
    count = torch.where(real, sp.crow[flat + 1] - start, 0)
    crow = torch.zeros(p * tm + 1, dtype=torch.int64, device=dev)
    torch.cumsum(count, 0, out=crow[1:])
    src = torch.repeat_interleave(start - crow[:-1], count) + torch.arange(int(crow[-1]), device=dev)
    stacked = torch.repeat_interleave(torch.arange(p * tm, device=dev), count)
    cols = sp.col[src] + (stacked // tm) * d  # column j*d + feature
    vals = e_val[src]
    s_rows = _csr(crow, cols, vals, (p * tm, p * d))
    # the transpose: the same entries by (part, feature), rows ascending within each
    by_col = torch.argsort(cols, stable=True)
    ccol = torch.zeros(p * d + 1, dtype=torch.int64, device=dev)
    torch.cumsum(torch.bincount(cols, minlength=p * d), 0, out=ccol[1:])
    s_cols = _csr(ccol, stacked[by_col], vals[by_col], (p * d, p * tm))
    wf = w[:, :, None]
    ebar = (_mm(s_cols, (w / t[:, None]).reshape(-1, 1)).view(p, d))  # each part's mean e

    def xt(v: torch.Tensor, centre: bool = True) -> torch.Tensor:  # Ec^T v: (P, tm, C) -> (P, d, C)
        u = _mm(s_cols, v.reshape(p * tm, c)).view(p, d, c)
        if centre:
            u -= ebar[:, :, None] * v.sum(dim=1)[:, None, :]
        return u

    def op(v: torch.Tensor) -> torch.Tensor:
        # CG's vectors sum to 0 over each part's rows (the right-hand side does, and the
        # operator keeps that), so Ec^T v needs no centring term: E_T^T v
        u = xt(v, centre=False)
        z = _mm(s_rows, u.reshape(p * d, c)).view(p, tm, c)
        z -= torch.einsum("pd,pdc->pc", ebar, u)[:, None, :]
        z *= wf
        return z.addcmul_(alpha[:, None, None], v)

    yt = targets[order] * wf
    ymean = yt.sum(dim=1) / t[:, None]
    b = (yt - ymean[:, None, :]) * wf
    a = torch.zeros_like(b)
    r = b.clone()
    q = r.clone()
    rr = (r * r).sum(dim=1)  # (P, C)
    goal = (TOL * TOL) * rr
    steps = 0
    live = rr > goal
    while steps < MAX_STEPS and bool(live.any()):
        steps += 1
        aq = op(q)
        step = torch.where(live, rr / (q * aq).sum(dim=1).clamp_min(1e-300), 0.0)[:, None, :]
        a.addcmul_(step, q)
        r.addcmul_(step, aq, value=-1.0)
        rr_new = (r * r).sum(dim=1)
        beta = torch.where(live, rr_new / rr.clamp_min(1e-300), 0.0)[:, None, :]
        q = r.addcmul(beta, q)
        rr = rr_new
        live = live & (rr > goal)
    coef = xt(a)
    intercept = ymean - torch.einsum("pd,pdc->pc", zero[None, :] + ebar, coef)
    capped = int(live.any(dim=1).sum())
    return coef, intercept, {"steps": steps, "capped": capped}
