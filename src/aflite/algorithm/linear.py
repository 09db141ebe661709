"""Batched multinomial logistic regression: many L2-regularised fits in one set of tensor ops.

All ``P`` classifiers of a filtering phase share one feature matrix. Their weights are stacked
into a single ``D x (P*C)`` matrix so every step is two dense matrix products over the whole
current set (compute-bound), instead of ``P`` small products over gathered rows (memory-bound).
A 0/1 mask of shape ``N x P`` says which rows train which classifier.

The optimiser is L-BFGS whose initial inverse curvature is a shared approximation of the Hessian,
``0.5 * (t/N) * X^T X + I/C`` (Böhning's bound on the softmax Hessian, with the expected
training Gram matrix). With that preconditioner a handful of steps reach scores that match
converged fits; plain L-BFGS needs about a hundred.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["LinearEnsemble", "batched_logistic_predict", "gram_preconditioner"]


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


def gram_preconditioner(
    xb: torch.Tensor, train_size: float, C: float, n_rows: int | None = None
) -> torch.Tensor:
    """Cholesky factor of ``0.5 * (t/N) * Xb^T Xb + diag(1/C)`` (intercept column unpenalised).

    ``xb`` carries a trailing column of ones for the intercept.
    """
    n = xb.shape[0] if n_rows is None else n_rows
    gram = xb.T @ xb
    h = gram * (0.5 * train_size / n)
    reg = torch.full((xb.shape[1],), 1.0 / C, dtype=xb.dtype, device=xb.device)
    reg[-1] = 1e-6  # keeps the factor positive definite even for a constant column
    h.diagonal().add_(reg)
    # Cholesky in float64: the matrix is tiny next to the products, and float32 can fail on
    # nearly collinear features.
    return torch.linalg.cholesky(h.double()).to(xb.dtype)


def _loss_and_grad(
    xb: torch.Tensor,
    w: torch.Tensor,
    y_onehot: torch.Tensor,
    train: torch.Tensor,
    reg: torch.Tensor,
    n_classes: int,
):
    """Per-classifier objective, its gradient and the logits at ``w``.

    Shapes: xb (N, D), w (D, P*C), y_onehot (N, C), train (N, P), reg (D, 1).
    Returns loss (P,), grad (D, P*C), logits (N, P, C).
    """
    n, p = train.shape
    logits = (xb @ w).view(n, p, n_classes)
    lse = torch.logsumexp(logits, dim=2)  # (N, P)
    # cross-entropy = logsumexp - logit of the true class
    true_logit = (logits * y_onehot[:, None, :]).sum(dim=2)
    ce = (lse - true_logit) * train
    w3 = w.view(-1, p, n_classes)
    penalty = 0.5 * (reg[:, :, None] * w3 * w3).sum(dim=(0, 2))
    loss = ce.sum(dim=0) + penalty
    resid = torch.exp(logits - lse[:, :, None])
    resid.sub_(y_onehot[:, None, :]).mul_(train[:, :, None])
    grad = xb.T @ resid.view(n, p * n_classes)
    grad.add_(reg * w)
    return loss, grad, logits


def batched_logistic_predict(
    xb: torch.Tensor,
    y: torch.Tensor,
    train: torch.Tensor,
    n_classes: int,
    *,
    model: LinearEnsemble,
    chol: torch.Tensor,
) -> torch.Tensor:
    """Fit one logistic regression per column of ``train`` and predict every row.

    Parameters
    ----------
    xb:
        (N, D) standardised features with a trailing column of ones.
    y:
        (N,) integer class codes in ``[0, n_classes)``.
    train:
        (N, P) 0/1 float mask: row i trains classifier j when ``train[i, j] == 1``.
    chol:
        Cholesky factor from :func:`gram_preconditioner`.

    Returns
    -------
    (N, P) int64 predicted class of every row under every classifier.
    """
    n, d = xb.shape
    p = train.shape[1]
    c = n_classes
    dtype = xb.dtype
    y_onehot = torch.nn.functional.one_hot(y, c).to(dtype)
    reg = torch.full((d, 1), 1.0 / model.C, dtype=dtype, device=xb.device)
    reg[-1] = 0.0

    def per_part(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # inner product of each classifier's (D, C) block
        return (a.view(d, p, c) * b.view(d, p, c)).sum(dim=(0, 2))

    def precond(g: torch.Tensor) -> torch.Tensor:
        return torch.cholesky_solve(g, chol)

    def scale(v: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return (v.view(d, p, c) * s[None, :, None]).view(d, p * c)

    w = torch.zeros((d, p * c), dtype=dtype, device=xb.device)
    loss, grad, logits = _loss_and_grad(xb, w, y_onehot, train, reg, c)
    s_hist: list[torch.Tensor] = []
    y_hist: list[torch.Tensor] = []
    rho_hist: list[torch.Tensor] = []
    step = torch.ones(p, dtype=dtype, device=xb.device)

    for _ in range(model.n_steps):
        # two-loop recursion, one scalar per classifier
        q = grad.clone()
        alphas = []
        for s_k, y_k, rho_k in zip(reversed(s_hist), reversed(y_hist), reversed(rho_hist)):
            a = rho_k * per_part(s_k, q)
            alphas.append(a)
            q -= scale(y_k, a)
        r = precond(q)
        for s_k, y_k, rho_k, a in zip(s_hist, y_hist, rho_hist, reversed(alphas)):
            b = rho_k * per_part(y_k, r)
            r += scale(s_k, a - b)
        direction = scale(r, -step)

        w_new = w + direction
        loss_new, grad_new, logits_new = _loss_and_grad(xb, w_new, y_onehot, train, reg, c)

        # A classifier whose objective went up keeps its old weights, forgets its curvature
        # pairs and halves its step; the others accept the step.
        ok = loss_new <= loss + 1e-6 * loss.abs()
        okc = ok.repeat_interleave(c)[None, :]
        s_k = torch.where(okc, w_new - w, torch.zeros_like(w))
        y_k = torch.where(okc, grad_new - grad, torch.zeros_like(w))
        sy = per_part(s_k, y_k)
        rho = torch.where(sy > 1e-10, 1.0 / sy.clamp_min(1e-10), torch.zeros_like(sy))
        if not bool(ok.all()):
            bad = (~ok).to(dtype)
            rho_hist = [rk * (1 - bad) for rk in rho_hist]
        w = torch.where(okc, w_new, w)
        grad = torch.where(okc, grad_new, grad)
        loss = torch.where(ok, loss_new, loss)
        logits = torch.where(ok[None, :, None], logits_new, logits)
        step = torch.where(ok, torch.ones_like(step), step * 0.5)

        s_hist.append(s_k)
        y_hist.append(y_k)
        rho_hist.append(rho)
        if len(s_hist) > model.history:
            s_hist.pop(0)
            y_hist.pop(0)
            rho_hist.pop(0)

    return logits.argmax(dim=2)
