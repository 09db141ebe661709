"""Batched multinomial logistic regression: many L2-regularised fits in one set of tensor ops.

All ``P`` classifiers of a filtering phase share one feature matrix. Their weights are stacked
into a single ``d x (P*C)`` matrix so every step is two dense matrix products over the whole
current set (compute-bound), instead of ``P`` small products over gathered rows (memory-bound).
A 0/1 mask of shape ``N x P`` says which rows train which classifier.

Features are standardised implicitly: with ``x~ = (x - mean) * inv_std`` the products are
``x~ @ W = x @ (inv_std * W) - (mean * inv_std) @ W``, so the caller's matrix (possibly a memory
map) is read as is and never copied. Rows are processed in chunks, so temporaries stay small.

The optimiser is L-BFGS whose initial inverse curvature is a shared approximation of the Hessian,
``0.5 * (t/N) * X~^T X~ + I/C`` (Böhning's bound on the softmax Hessian, with the expected
training Gram matrix). With that preconditioner a handful of steps reach scores that match
converged fits; plain L-BFGS needs about a hundred.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "LinearEnsemble",
    "Standardizer",
    "batched_logistic_fit",
    "batched_logistic_predict",
    "gram_preconditioner",
    "heldout_correct",
]


@dataclass(frozen=True)
class LinearEnsemble:
    """The default model family: multinomial logistic regression with an L2 penalty.

    Parameters
    ----------
    C:
        Inverse regularisation strength, as in scikit-learn's ``LogisticRegression``
        (the objective is ``C * sum(cross_entropy) + 0.5 * ||W||^2``; the intercept is not
        penalised).
    n_steps:
        Preconditioned L-BFGS steps per phase. 10 matches converged scikit-learn fits closely
        (see ``benchmarks/bench_phase.py``).
    history:
        L-BFGS memory.
    """

    C: float = 1.0
    n_steps: int = 10
    history: int = 5

    def __post_init__(self) -> None:
        if not self.C > 0:
            raise ValueError(f"LinearEnsemble: C must be > 0, got {self.C}")
        if self.n_steps < 1:
            raise ValueError(f"LinearEnsemble: n_steps must be >= 1, got {self.n_steps}")
        if self.history < 1:
            raise ValueError(f"LinearEnsemble: history must be >= 1, got {self.history}")


@dataclass
class Standardizer:
    """Per-feature mean and inverse standard deviation (float32 tensors on the device)."""

    mean: torch.Tensor
    inv_std: torch.Tensor


def _chunks(n: int, chunk_rows: int):
    for s in range(0, n, chunk_rows):
        yield s, min(n, s + chunk_rows)


def gram_preconditioner(
    x: torch.Tensor,
    std: Standardizer,
    train_size: float,
    C: float,
    *,
    rows: torch.Tensor | None = None,
    chunk_rows: int = 65_536,
) -> torch.Tensor:
    """Cholesky factor of ``0.5 * (t/n) * X~b^T X~b + diag(1/C)`` over ``rows`` of ``x``.

    ``X~b`` is the standardised matrix with a ones column for the intercept (unpenalised). The
    Gram matrix of the raw rows is accumulated chunk by chunk and standardised algebraically.
    """
    d = x.shape[1]
    dev = x.device
    a = torch.zeros((d, d), dtype=torch.float64, device=dev)
    sx = torch.zeros(d, dtype=torch.float64, device=dev)
    index = rows if rows is not None else None
    n_total = x.shape[0] if index is None else index.shape[0]
    for s, e in _chunks(n_total, chunk_rows):
        block = x[s:e] if index is None else x[index[s:e]]
        block = block.to(torch.float32)
        a += (block.T @ block).double()
        sx += block.sum(dim=0).double()
    n = float(n_total)
    mu = std.mean.double()
    s = std.inv_std.double()
    centred = a - torch.outer(mu, sx) - torch.outer(sx, mu) + n * torch.outer(mu, mu)
    h = torch.empty((d + 1, d + 1), dtype=torch.float64, device=dev)
    h[:d, :d] = centred * torch.outer(s, s)
    cross = s * (sx - n * mu)
    h[:d, d] = cross
    h[d, :d] = cross
    h[d, d] = n
    h *= 0.5 * train_size / n
    reg = torch.full((d + 1,), 1.0 / C, dtype=torch.float64, device=dev)
    reg[-1] = 1e-6  # keeps the factor positive definite even for a constant column
    h.diagonal().add_(reg)
    return torch.linalg.cholesky(h).to(torch.float32)


class _Problem:
    """The stacked objective over row chunks; weights are (d+1, P*C) with the intercept last."""

    def __init__(self, x, std, y, train, n_classes, reg_c, chunk_rows):
        self.x, self.std, self.y, self.train = x, std, y, train
        self.c = n_classes
        self.p = train.shape[1]
        self.d = x.shape[1]
        self.chunk_rows = chunk_rows
        self.reg = 1.0 / reg_c
        # a broadcast -1 for subtracting the one-hot label, without a chunk-sized allocation
        self.minus_one = torch.full((1, 1, 1), -1.0, dtype=torch.float32, device=x.device)

    def _raw_weights(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Weights for raw features: x~ @ W + b == x @ (s*W) + (b - (mean*s) @ W)."""
        wf = w[:-1]
        w_raw = self.std.inv_std[:, None] * wf
        b_raw = w[-1] - (self.std.mean * self.std.inv_std) @ wf
        return w_raw, b_raw

    def loss_grad(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p, c, d = self.p, self.c, self.d
        w_raw, b_raw = self._raw_weights(w)
        g_raw = torch.zeros((d, p * c), dtype=w.dtype, device=w.device)
        g_sum = torch.zeros(p * c, dtype=w.dtype, device=w.device)
        loss = torch.zeros(p, dtype=w.dtype, device=w.device)
        for s, e in _chunks(self.x.shape[0], self.chunk_rows):
            xb = self.x[s:e].to(w.dtype)
            t = self.train[s:e]
            logits = torch.addmm(b_raw, xb, w_raw).view(e - s, p, c)
            lse = torch.logsumexp(logits, dim=2)
            yc = self.y[s:e]
            true_logit = torch.gather(logits, 2, yc[:, None, None].expand(e - s, p, 1)).squeeze(2)
            loss += ((lse - true_logit) * t).sum(dim=0)
            resid = torch.exp(logits - lse[:, :, None])
            resid.scatter_add_(
                2,
                yc[:, None, None].expand(e - s, p, 1),
                self.minus_one.expand(e - s, p, 1),
            )
            resid.mul_(t[:, :, None])
            r2 = resid.view(e - s, p * c)
            g_raw.addmm_(xb.T, r2)
            g_sum += r2.sum(dim=0)
        grad = torch.empty_like(w)
        # chain rule back to standardised coordinates
        grad[:-1] = self.std.inv_std[:, None] * (g_raw - self.std.mean[:, None] * g_sum[None, :])
        grad[-1] = g_sum
        grad[:-1] += self.reg * w[:-1]
        w3 = w[:-1].view(d, p, c)
        loss += 0.5 * self.reg * (w3 * w3).sum(dim=(0, 2))
        return loss, grad

    def argmax(self, w: torch.Tensor, s: int, e: int) -> torch.Tensor:
        w_raw, b_raw = self._raw_weights(w)
        xb = self.x[s:e].to(w.dtype)
        return torch.addmm(b_raw, xb, w_raw).view(e - s, self.p, self.c).argmax(dim=2)


def batched_logistic_fit(
    x: torch.Tensor,
    std: Standardizer,
    y: torch.Tensor,
    train: torch.Tensor,
    n_classes: int,
    *,
    model: LinearEnsemble,
    chol: torch.Tensor,
    chunk_rows: int = 65_536,
) -> tuple[torch.Tensor, _Problem]:
    """Fit one logistic regression per column of ``train`` (an (N, P) 0/1 float mask).

    Returns the stacked weights ``(d+1, P*C)`` in standardised coordinates and the problem
    (for predictions).
    """
    prob = _Problem(x, std, y, train, n_classes, model.C, chunk_rows)
    d1, p, c = x.shape[1] + 1, train.shape[1], n_classes
    dtype = torch.float32

    def per_part(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a.view(d1, p, c) * b.view(d1, p, c)).sum(dim=(0, 2))

    def scale(v: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return (v.view(d1, p, c) * s[None, :, None]).view(d1, p * c)

    w = torch.zeros((d1, p * c), dtype=dtype, device=x.device)
    loss, grad = prob.loss_grad(w)
    s_hist: list[torch.Tensor] = []
    y_hist: list[torch.Tensor] = []
    rho_hist: list[torch.Tensor] = []
    step = torch.ones(p, dtype=dtype, device=x.device)

    for _ in range(model.n_steps):
        # two-loop recursion, one scalar per classifier
        q = grad.clone()
        alphas = []
        for s_k, y_k, rho_k in zip(reversed(s_hist), reversed(y_hist), reversed(rho_hist)):
            a = rho_k * per_part(s_k, q)
            alphas.append(a)
            q -= scale(y_k, a)
        r = torch.cholesky_solve(q, chol)
        for s_k, y_k, rho_k, a in zip(s_hist, y_hist, rho_hist, reversed(alphas)):
            b = rho_k * per_part(y_k, r)
            r += scale(s_k, a - b)
        w_new = w + scale(r, -step)
        loss_new, grad_new = prob.loss_grad(w_new)

        # A classifier whose objective went up keeps its old weights, forgets its curvature
        # pairs and halves its step; the others accept the step.
        ok = loss_new <= loss + 1e-6 * loss.abs()
        okc = ok.repeat_interleave(c)[None, :]
        s_k = torch.where(okc, w_new - w, torch.zeros_like(w))
        y_k = torch.where(okc, grad_new - grad, torch.zeros_like(w))
        sy = per_part(s_k, y_k)
        rho = torch.where(sy > 1e-10, 1.0 / sy.clamp_min(1e-10), torch.zeros_like(sy))
        if not bool(ok.all()):
            keep = ok.to(dtype)
            rho_hist = [rk * keep for rk in rho_hist]
        w = torch.where(okc, w_new, w)
        grad = torch.where(okc, grad_new, grad)
        loss = torch.where(ok, loss_new, loss)
        step = torch.where(ok, torch.ones_like(step), step * 0.5)

        s_hist.append(s_k)
        y_hist.append(y_k)
        rho_hist.append(rho)
        if len(s_hist) > model.history:
            s_hist.pop(0)
            y_hist.pop(0)
            rho_hist.pop(0)
    return w, prob


def heldout_correct(
    w: torch.Tensor, prob: _Problem, heldout: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: how many held-out predictions were correct, and how often it was held out.

    ``heldout`` is an (N, P) 0/1 mask. Predictions are made chunk by chunk and never stored.
    """
    n = prob.x.shape[0]
    correct = torch.zeros(n, dtype=torch.float32, device=w.device)
    for s, e in _chunks(n, prob.chunk_rows):
        pred = prob.argmax(w, s, e)
        correct[s:e] = ((pred == prob.y[s:e, None]).to(torch.float32) * heldout[s:e]).sum(dim=1)
    return correct, heldout.sum(dim=1)


def batched_logistic_predict(
    x: torch.Tensor,
    std: Standardizer,
    y: torch.Tensor,
    train: torch.Tensor,
    n_classes: int,
    *,
    model: LinearEnsemble,
    chol: torch.Tensor,
) -> torch.Tensor:
    """(N, P) predicted class of every row under every classifier (small problems only)."""
    w, prob = batched_logistic_fit(x, std, y, train, n_classes, model=model, chol=chol)
    return prob.argmax(w, 0, x.shape[0])
