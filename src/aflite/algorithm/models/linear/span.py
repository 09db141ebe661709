"""Span solver: each classifier in the span of its own training rows (t < d).

With an L2 penalty the optimal weights of a classifier trained on rows Z (t x d) are
``W = Z^T A`` for coefficients A: the representer theorem. The solver works with each training
part's Gram matrix K = Z Z^T, so a step costs O(t^2 C) per classifier instead of O(N d C), and
its preconditioner is each part's *exact* Böhning bound, which in coefficient space is
M = I + (C/2) K. The L-BFGS runs in the primal geometry (inner products <Z^T a, Z^T a'> =
a K a'), so its iterates are those of the primal method restricted to the span, where the
solution lies.

Coefficient tensors are laid out (P, C, t): products ``V @ K`` with K symmetric read each
Gram matrix once and run about twice as fast on CPUs as ``K @ V``.
"""

from __future__ import annotations

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.lbfgs import (
    LINE_SEARCH_HALVINGS,
    STALL_STEPS,
    Batch,
    History,
    Outcome,
    armijo_ok,
    stuck_count,
)

__all__ = ["solve_span", "span_gram"]

# The coefficient space is solved in float64: the objective's float32 rounding (~1e-6
# relative) stalls the line search before a classifier meets a 1e-4 gradient tolerance.
DTYPE = torch.float64


def _slices(p: int, group: int) -> list[slice]:
    """The same cut of the P parts into tasks whatever the thread count."""
    return [slice(s, min(p, s + group)) for s in range(0, p, group)]


def span_gram(store, idx: torch.Tensor, weight: torch.Tensor, *, group: int = 8) -> torch.Tensor:
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
    store,
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
    c = neg.shape[1]
    dev = store.device
    cb = 0.5 * reg_c
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
    minv = _boehning_inverse(k, cb)
    onehot = torch.nn.functional.one_hot(y[idx], c).to(DTYPE).transpose(1, 2)
    onehot = onehot * weight[:, None, :]

    def evaluate(v, a, ka, b):
        """Loss, coefficient gradient V (P, C, t) and intercept gradient (P, C)."""
        f = ka + (b + v["neg"])[:, :, None]
        lse = torch.logsumexp(f, dim=1)
        w = v["weight"]
        loss = reg_c * ((lse - (f * v["onehot"]).sum(dim=1)) * w).sum(dim=1)
        loss = loss + 0.5 * _kdot(a, ka)
        resid = (torch.exp(f - lse[:, None, :]) - v["onehot"]) * w[:, None, :]
        return loss, reg_c * resid + a, reg_c * resid.sum(dim=2)

    def prod(mat: torch.Tensor, *vs: torch.Tensor) -> list[torch.Tensor]:
        # one product per task of a few parts, on the worker threads
        left = torch.cat(vs, dim=1)
        out = torch.empty_like(left)

        def run(sl: slice) -> None:
            torch.bmm(left[sl], mat[sl], out=out[sl])

        for _ in workers().map(run, _slices(len(left), 4)):
            pass
        return list(out.split(c, dim=1))

    a = torch.zeros((p_all, c, t), dtype=DTYPE, device=dev)
    b0 = torch.zeros((p_all, c), dtype=DTYPE, device=dev)
    state = {
        "k": k,
        "minv": minv,
        "onehot": onehot,
        "weight": weight,
        "neg": neg.to(DTYPE),
        "tp": weight.sum(dim=1).clamp_min(1.0),
    }
    loss, g_a, g_b = evaluate(state, a, a, b0)
    (mq,) = prod(minv, g_a)
    kmq, kg = prod(k, mq, g_a)
    gnorm0 = (_kdot(g_a, kg) + (g_b * g_b).sum(dim=1)).clamp_min(0).sqrt()

    bt = Batch(p_all, dev, pdim={}, outputs=("a", "b"), hist_dims=((0, 0, 0), (0, 0)))
    bt.set(
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
    hist = History(history)
    alphas: list[torch.Tensor] = []
    alphas = bt.retire(gnorm0 <= 0, 0, torch.zeros_like(gnorm0), hist, alphas)

    for it in range(1, max_iter + 1):
        if bt.empty:
            break
        v = bt.v
        # H0 = gamma * B^-1, i.e. gamma * M^-1 on coefficients; then the second loop
        gam = v["gamma"][:, None, None]
        r_a, r_ka = gam * v["mq"], gam * v["kmq"]
        r_b = v["gamma"][:, None] * v["q_b"] / (cb * v["tp"][:, None])
        for (s_a, s_ka, s_b), (y_a, y_b), rho_k, a_k in zip(
            hist.s, hist.y, hist.rho, reversed(alphas)
        ):
            w = (a_k - rho_k * (_kdot(y_a, r_ka) + (y_b * r_b).sum(dim=1)))[:, None, None]
            r_a, r_ka, r_b = r_a + w * s_a, r_ka + w * s_ka, r_b + w[:, :, 0] * s_b
        slope = -(_kdot(v["g_a"], r_ka) + (v["g_b"] * r_b).sum(dim=1))

        # backtracking costs no product: the logits move along K r
        step = torch.ones(len(bt.active), dtype=DTYPE, device=dev)
        accepted = ~bt.live  # finished classifiers ride along until compaction, unchanged
        new = [v["a"], v["ka"], v["b"], v["loss"], v["g_a"], v["g_b"]]
        for _ in range(LINE_SEARCH_HALVINGS):
            st = step[:, None, None]
            trial = (v["a"] - st * r_a, v["ka"] - st * r_ka, v["b"] - st[:, :, 0] * r_b)
            lt, gat, gbt = evaluate(v, *trial)
            ok = armijo_ok(lt, v["loss"], step, slope) & (slope < 0) & ~accepted
            for i, cand in enumerate((*trial, lt, gat, gbt)):
                new[i] = torch.where(ok.view(-1, *([1] * (cand.dim() - 1))), cand, new[i])
            accepted |= ok
            if bool(accepted.all()):
                break
            step = torch.where(accepted, step, step * 0.5)
        a_new, ka_new, b_new, loss_new, ga_new, gb_new = new
        moved = accepted & bt.live
        flat = stuck_count(v["flat"], accepted, v["loss"], loss_new)
        s_vec = (a_new - v["a"], ka_new - v["ka"], b_new - v["b"])
        y_vec = (ga_new - v["g_a"], gb_new - v["g_b"])
        sy = _kdot(s_vec[1], y_vec[0]) + (s_vec[2] * y_vec[1]).sum(dim=1)
        hist.push(s_vec, y_vec, sy)

        q_a, q_b = ga_new, gb_new
        alphas = []
        for (_s_a, s_ka, s_b), (y_a, y_b), rho_k in zip(
            reversed(hist.s), reversed(hist.y), reversed(hist.rho)
        ):
            al = rho_k * (_kdot(s_ka, q_a) + (s_b * q_b).sum(dim=1))
            alphas.append(al)
            q_a, q_b = q_a - al[:, None, None] * y_a, q_b - al[:, None] * y_b
        # two products per step: M^-1 [q, y], then K [M^-1 q, g]
        mq, my = prod(v["minv"], q_a, y_vec[0])
        kmq, kg = prod(v["k"], mq, ga_new)
        flops += 8.0 * len(bt.active) * t * t * c
        yby = _kdot(kg - v["kg"], my) + (y_vec[1] ** 2).sum(dim=1) / (cb * v["tp"])
        gamma = torch.where(moved & (yby > 0) & (sy > 0), sy / yby.clamp_min(1e-30), v["gamma"])
        gnorm = (_kdot(ga_new, kg) + (gb_new * gb_new).sum(dim=1)).clamp_min(0).sqrt()
        bt.set(
            a=a_new,
            ka=ka_new,
            b=b_new,
            loss=loss_new,
            g_a=ga_new,
            g_b=gb_new,
            kg=kg,
            q_b=q_b,
            mq=mq,
            kmq=kmq,
            gamma=gamma.clamp(1e-3, 1e3),
            flat=flat,
        )
        rel = gnorm / v["gnorm0"].clamp_min(1e-30)
        stalled = bt.live & (v["flat"] >= STALL_STEPS)
        done = (rel <= tol) | stalled if it < max_iter else torch.ones_like(bt.live)
        alphas = bt.retire(done, it, rel, hist, alphas, stalled=stalled)
    return bt.out("a"), bt.out("b"), bt.outcome(flops)
