"""Span solver: each classifier in the span of its own training rows (t < d).

With an L2 penalty the optimal weights of a classifier trained on rows Z (t x d) are
``W = Z^T A`` for coefficients A: the representer theorem. The solver works with each training
part's Gram matrix K = Z Z^T, so a step costs O(t^2 C) per classifier instead of O(N d C), and
its preconditioner is each part's *exact* Böhning bound, which in coefficient space is
M = I + (C/2) K. The shared L-BFGS (:func:`aflite.algorithm.numerics.lbfgs.lbfgs`) runs in the
primal geometry (inner products <Z^T a, Z^T a'> = a K a'), so its iterates are those of the
primal method restricted to the span, where the solution lies: a step carries its image
under K, so the logits move along it without a product, and the line search backtracks
within one iteration at no cost in products.

Coefficient tensors are laid out (P, C, t): products ``V @ K`` with K symmetric read each
Gram matrix once and run about twice as fast on CPUs as ``K @ V``.
"""

from __future__ import annotations

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.lbfgs import (
    LINE_SEARCH_HALVINGS,
    Batch,
    Outcome,
    Vector,
    armijo_ok,
    lbfgs,
    stuck_count,
)
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["solve_span", "span_gram"]

# The coefficient space is solved in float64: the objective's float32 rounding (~1e-6
# relative) stalls the line search before a classifier meets a 1e-4 gradient tolerance.
DTYPE = torch.float64


def _slices(p: int, group: int) -> list[slice]:
    """The same cut of the P parts into tasks whatever the thread count."""
    return [slice(s, min(p, s + group)) for s in range(0, p, group)]


def span_gram(
    store: FeatureStore, idx: torch.Tensor, weight: torch.Tensor, *, group: int = 8
) -> torch.Tensor:
    """(P, t, t) Gram matrices of each training part; padded rows are zero."""
    p, t = idx.shape
    out = torch.empty((p, t, t), dtype=torch.float32, device=store.device)

    def run(sl: slice) -> None:
        z = store.gather(idx[sl]) * weight[sl, :, None]
        torch.bmm(z, z.transpose(1, 2), out=out[sl])

    for _ in workers().map(run, _slices(p, group)):
        pass
    return out


def _boehning_inverse(k: torch.Tensor, cb: float) -> torch.Tensor:
    """(I + cb K)^-1 per part, in float64 (``k``'s dtype).

    K has eigenvalues up to ~1e5 on wide standardised features. A float32 factorisation
    leaves errors of eps * cond in the inverse that K then amplifies, so <g, K M^-1 g> can
    turn negative and L-BFGS directions stop being descent directions. Storing the accurate
    inverse in float32 made a step 13% faster at t = 1,000 but moved the stopping point of
    whole runs (3,000 SNLI rows on one thread: 558 rows removed instead of 568).
    """
    t = k.shape[1]
    out = torch.empty_like(k)
    eye = torch.eye(t, dtype=k.dtype, device=k.device)

    def run(sl: slice) -> None:
        out[sl] = torch.cholesky_inverse(torch.linalg.cholesky(eye + cb * k[sl]))

    for _ in workers().map(run, _slices(k.shape[0], 4)):
        pass
    return out


def _kdot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * b).sum(dim=(1, 2))


def solve_span(
    store: FeatureStore,
    y: torch.Tensor,
    idx: torch.Tensor,
    weight: torch.Tensor,
    neg: torch.Tensor,
    *,
    reg_c: float,
    tol: float,
    max_iter: int,
    history: int,
) -> tuple[torch.Tensor, torch.Tensor, Outcome]:
    """Fit one classifier per row of ``idx`` (P, t): store positions of its training rows,
    padded where parts differ in size (``weight`` is 0 there). ``neg`` (P, C) is NEG for
    classes absent from a part.

    Returns coefficients (P, C, t), intercepts (P, C) and the :class:`Outcome`.
    """
    p_all, t = idx.shape
    k = span_gram(store, idx, weight)
    flops = 2.0 * p_all * t * t * store.dim + 4.0 / 3.0 * p_all * t**3
    # Repeated training rows make K singular, and float32 rounding turns its zero eigenvalues
    # slightly negative: the coefficient objective is then unbounded along them. A ridge of
    # 1e-6 of the mean diagonal (a private feature of that variance per training row) keeps it
    # strictly convex and moves the weights by a relative 1e-6.
    k = k.to(DTYPE)
    weight = weight.to(DTYPE)
    ridge = 1e-6 * k.diagonal(dim1=1, dim2=2).mean(dim=1).clamp_min(1e-12)
    k.diagonal(dim1=1, dim2=2).add_(ridge[:, None] * weight)
    span = _Span(k, y[idx], weight, neg, reg_c, flops)
    bt = Batch(p_all, store.device, pdim={}, outputs=("a", "b"), hist_dims=((0, 0, 0), (0, 0)))
    lbfgs(bt, span, tol=tol, max_iter=max_iter, history=history)
    return bt.out("a"), bt.out("b"), bt.outcome(span.flops)


def _prod(mat: torch.Tensor, *vs: torch.Tensor) -> list[torch.Tensor]:
    """``v @ mat`` for each of ``vs`` (P, C, t), one product per task of a few parts, on the
    worker threads."""
    c = vs[0].shape[1]
    left = torch.cat(vs, dim=1)
    out = torch.empty_like(left)

    def run(sl: slice) -> None:
        torch.bmm(left[sl], mat[sl], out=out[sl])

    for _ in workers().map(run, _slices(len(left), 4)):
        pass
    return list(out.split(c, dim=1))


class _Span:
    """The span solver's geometry for :func:`~aflite.algorithm.numerics.lbfgs.lbfgs`. A step
    is ``(a, K a, b)``: coefficients, their image under K and intercepts; a gradient is
    ``(g_a, g_b)``. They pair as <Z^T s_a, Z^T q_a> + <s_b, q_b> = <K s_a, q_a> + <s_b, q_b>.
    The first metric is each part's exact Böhning bound: M^-1 = (I + cb K)^-1 on the
    coefficients, 1 / (cb t) on the intercepts."""

    def __init__(
        self,
        k: torch.Tensor,
        labels: torch.Tensor,
        weight: torch.Tensor,
        neg: torch.Tensor,
        reg_c: float,
        flops: float,
    ) -> None:
        self.k, self.weight, self.neg, self.reg_c = k, weight, neg, reg_c
        self.c, self.t = neg.shape[1], k.shape[1]
        self.cb = 0.5 * reg_c
        self.flops = flops
        self.onehot = torch.nn.functional.one_hot(labels, self.c).to(DTYPE).transpose(1, 2)
        self.onehot = self.onehot * weight[:, None, :]

    def evaluate(
        self, v: dict[str, torch.Tensor], a: torch.Tensor, ka: torch.Tensor, b: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Loss, coefficient gradient V (P, C, t) and intercept gradient (P, C)."""
        f = ka + (b + v["neg"])[:, :, None]
        lse = torch.logsumexp(f, dim=1)
        w = v["weight"]
        loss = self.reg_c * ((lse - (f * v["onehot"]).sum(dim=1)) * w).sum(dim=1)
        loss = loss + 0.5 * _kdot(a, ka)
        resid = (torch.exp(f - lse[:, None, :]) - v["onehot"]) * w[:, None, :]
        return loss, self.reg_c * resid + a, self.reg_c * resid.sum(dim=2)

    def start(self, b: Batch) -> torch.Tensor:
        k, weight = self.k, self.weight
        p_all, c, t, dev = k.shape[0], self.c, self.t, k.device
        minv = _boehning_inverse(k, self.cb)
        a = torch.zeros((p_all, c, t), dtype=DTYPE, device=dev)
        b0 = torch.zeros((p_all, c), dtype=DTYPE, device=dev)
        state = {
            "k": k,
            "minv": minv,
            "onehot": self.onehot,
            "weight": weight,
            "neg": self.neg.to(DTYPE),
            "tp": weight.sum(dim=1).clamp_min(1.0),
        }
        loss, g_a, g_b = self.evaluate(state, a, a, b0)
        (mq,) = _prod(minv, g_a)
        kmq, kg = _prod(k, mq, g_a)
        gnorm0 = (_kdot(g_a, kg) + (g_b * g_b).sum(dim=1)).clamp_min(0).sqrt()
        b.set(
            **state,
            a=a,
            ka=torch.zeros_like(a),
            b=b0,
            loss=loss,
            g_a=g_a,
            g_b=g_b,
            kg=kg,
            q_b=g_b,
            mq=mq,
            kmq=kmq,
            gnorm0=gnorm0,
            gamma=torch.ones(p_all, dtype=DTYPE, device=dev),
            flat=torch.zeros(p_all, dtype=torch.int64, device=dev),
        )
        return gnorm0

    def first_metric(self, v: dict[str, torch.Tensor]) -> Vector:
        # gamma * M^-1 q, with q's coefficient part multiplied by M^-1 (and then by K) when
        # the last first loop ended
        gam = v["gamma"][:, None, None]
        r_b = v["gamma"][:, None] * v["q_b"] / (self.cb * v["tp"][:, None])
        return gam * v["mq"], gam * v["kmq"], r_b

    def pair(self, step: Vector, gradient: Vector) -> torch.Tensor:
        return _kdot(step[1], gradient[0]) + (step[2] * gradient[1]).sum(dim=1)

    def add_step(self, r: Vector, c: torch.Tensor, s: Vector) -> Vector:
        w = c[:, None, None]
        return r[0] + w * s[0], r[1] + w * s[1], r[2] + w[:, :, 0] * s[2]

    def sub_gradient(self, q: Vector, c: torch.Tensor, y: Vector) -> Vector:
        return q[0] - c[:, None, None] * y[0], q[1] - c[:, None] * y[1]

    def advance(self, b: Batch, r: Vector) -> tuple[Vector, Vector, torch.Tensor]:
        v = b.v
        r_a, r_ka, r_b = r
        slope = -(_kdot(v["g_a"], r_ka) + (v["g_b"] * r_b).sum(dim=1))
        # backtracking costs no product: the logits move along K r
        step = torch.ones(len(b.active), dtype=DTYPE, device=r_a.device)
        accepted = ~b.live  # finished classifiers ride along until compaction, unchanged
        new = [v["a"], v["ka"], v["b"], v["loss"], v["g_a"], v["g_b"]]
        for _ in range(LINE_SEARCH_HALVINGS):
            st = step[:, None, None]
            trial = (v["a"] - st * r_a, v["ka"] - st * r_ka, v["b"] - st[:, :, 0] * r_b)
            lt, gat, gbt = self.evaluate(v, *trial)
            ok = armijo_ok(lt, v["loss"], step, slope) & (slope < 0) & ~accepted
            for i, cand in enumerate((*trial, lt, gat, gbt)):
                new[i] = torch.where(ok.view(-1, *([1] * (cand.dim() - 1))), cand, new[i])
            accepted |= ok
            if bool(accepted.all()):
                break
            step = torch.where(accepted, step, step * 0.5)
        a_new, ka_new, b_new, loss_new, ga_new, gb_new = new
        s = (a_new - v["a"], ka_new - v["ka"], b_new - v["b"])
        y = (ga_new - v["g_a"], gb_new - v["g_b"])
        b.set(
            a=a_new,
            ka=ka_new,
            b=b_new,
            loss=loss_new,
            g_a=ga_new,
            g_b=gb_new,
            flat=stuck_count(v["flat"], accepted, v["loss"], loss_new),
        )
        return s, y, accepted & b.live

    def gradient(self, v: dict[str, torch.Tensor]) -> Vector:
        return v["g_a"], v["g_b"]

    def settle(
        self, b: Batch, q: Vector, s: Vector, y: Vector
    ) -> tuple[torch.Tensor, torch.Tensor]:
        v = b.v
        # two products per step: M^-1 [q, y], then K [M^-1 q, g]
        mq, my = _prod(v["minv"], q[0], y[0])
        kmq, kg = _prod(v["k"], mq, v["g_a"])
        self.flops += 8.0 * len(b.active) * self.t * self.t * self.c
        yhy = _kdot(kg - v["kg"], my) + (y[1] ** 2).sum(dim=1) / (self.cb * v["tp"])
        gnorm = (_kdot(v["g_a"], kg) + (v["g_b"] * v["g_b"]).sum(dim=1)).clamp_min(0).sqrt()
        b.set(kg=kg, q_b=q[1], mq=mq, kmq=kmq)
        return yhy, gnorm
