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

from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["CERTIFY_TOL", "TOL", "SparseDual", "standardised_parts"]

TOL = 1e-12
# the iterations' first stop, where nearly every held-out prediction is certified (bundled
# SNLI slice: every count was final after 25 of 46 steps)
CERTIFY_TOL = 1e-7
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


class SparseDual:
    """Conjugate gradients on every part's dual system at once, resumable: :meth:`solve`
    runs the live parts to a tolerance, :meth:`subset` keeps some parts (with their state)
    to run further on their own."""

    def __init__(
        self,
        store: FeatureStore,
        targets: torch.Tensor,
        order: torch.Tensor,
        w: torch.Tensor,
        penalty: torch.Tensor,
        e_val: torch.Tensor,
        zero: torch.Tensor,
    ):
        sp = store.sparse
        dev = targets.device
        p, tm = order.shape
        d, c = store.dim, targets.shape[1]
        self.p, self.tm, self.d, self.c, self.penalty, self.zero = p, tm, d, c, penalty, zero
        self.w = w
        t = w.sum(dim=1)
        # stacked rows: part j's row r is row j*tm + r; its entries sit in columns j*d + feature
        flat = order.reshape(-1)
        start = sp.crow[flat]
        count = torch.where(w.reshape(-1) > 0, sp.crow[flat + 1] - start, 0)
        crow = torch.zeros(p * tm + 1, dtype=torch.int64, device=dev)
        torch.cumsum(count, 0, out=crow[1:])
        total = int(crow[-1])
        src = torch.repeat_interleave(start - crow[:-1], count) + torch.arange(total, device=dev)
        stacked = torch.repeat_interleave(torch.arange(p * tm, device=dev), count)
        cols = sp.col[src] + (stacked // tm) * d  # column j*d + feature
        vals = e_val[src]
        self.rows = _csr(crow, cols, vals, (p * tm, p * d))
        # the transpose: the same entries by (part, feature), rows ascending within each
        by_col = torch.argsort(cols, stable=True)
        ccol = torch.zeros(p * d + 1, dtype=torch.int64, device=dev)
        torch.cumsum(torch.bincount(cols, minlength=p * d), 0, out=ccol[1:])
        self.cols = _csr(ccol, stacked[by_col], vals[by_col], (p * d, p * tm))
        self.ebar = _mm(self.cols, (w / t[:, None]).reshape(-1, 1)).view(p, d)  # mean e
        yt = targets[order] * w[:, :, None]
        self.ymean = yt.sum(dim=1) / t[:, None]
        b = (yt - self.ymean[:, None, :]) * w[:, :, None]
        self.a = torch.zeros_like(b)
        self.r = b.clone()
        self.q = b.clone()
        self.rr = (b * b).sum(dim=1)  # (P, C)
        self.bb = self.rr.clone()
        self.steps = 0

    def _xt(self, v: torch.Tensor, centre: bool = True) -> torch.Tensor:
        """Ec^T v: (P, tm, C) -> (P, d, C)."""
        u = _mm(self.cols, v.reshape(self.p * self.tm, self.c)).view(self.p, self.d, self.c)
        if centre:
            u -= self.ebar[:, :, None] * v.sum(dim=1)[:, None, :]
        return u

    def _op(self, v: torch.Tensor) -> torch.Tensor:
        # CG's vectors sum to 0 over each part's rows (the right-hand side does, and the
        # operator keeps that), so Ec^T v needs no centring term: E_T^T v
        u = self._xt(v, centre=False)
        z = _mm(self.rows, u.reshape(self.p * self.d, self.c)).view(self.p, self.tm, self.c)
        z -= torch.einsum("pd,pdc->pc", self.ebar, u)[:, None, :]
        z *= self.w[:, :, None]
        return z.addcmul_(self.penalty[:, None, None], v)

    def solve(self, tol: float) -> torch.Tensor:
        """Iterate until every residual is at most ``tol`` of its right-hand side (or
        ``MAX_STEPS`` in all); (P,) True for the parts that got there."""
        goal = (tol * tol) * self.bb
        live = self.rr > goal
        while self.steps < MAX_STEPS and bool(live.any()):
            self.steps += 1
            aq = self._op(self.q)
            step = torch.where(live, self.rr / (self.q * aq).sum(dim=1).clamp_min(1e-300), 0.0)
            self.a.addcmul_(step[:, None, :], self.q)
            self.r.addcmul_(step[:, None, :], aq, value=-1.0)
            rr = (self.r * self.r).sum(dim=1)
            beta = torch.where(live, rr / self.rr.clamp_min(1e-300), 0.0)
            self.q = self.r.addcmul(beta[:, None, :], self.q)
            self.rr = rr
            live = live & (rr > goal)
        return ~live.any(dim=1)

    def weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(P, d, C) weights and (P, C) intercepts of the current solutions."""
        coef = self._xt(self.a)
        return coef, self.ymean - torch.einsum("pd,pdc->pc", self.zero[None, :] + self.ebar, coef)

    def error_bounds(self) -> torch.Tensor:
        """(P,) a bound on how far any class's weight vector is from the exact solution:
        ``||W_c - W*_c|| <= ||r_c|| / sqrt(alpha t)``, since ``Kc + alpha t I >= alpha t I``
        and ``||Ec^T e||^2 <= e^T (Kc + alpha t I) e = r^T (Kc + alpha t I)^-1 r``."""
        return self.rr.sqrt().amax(dim=1) / self.penalty.sqrt()

    def means(self) -> torch.Tensor:
        """(P, d) every part's mean standardised row."""
        return self.zero[None, :] + self.ebar
