"""The primal solvers' preconditioner: the Böhning bound ``B = scale * G + I`` (G the Gram
matrix of ``[X~ 1]``), inverted exactly, or kept as its top eigenvectors and one value for
all the others when the training parts are small.

Low-rank form: ``B^-1 v = V diag(1/lambda) V^T v + (I - V V^T) v / lambda_tail`` with V the
``RANK`` leading eigenvectors and ``lambda_tail`` the next eigenvalue. With a training part
of at most ``LOW_RANK_T`` times d+1 rows it converged in fewer L-BFGS steps than the exact
inverse (mean steps of a phase, one core, same parts and tolerance,
``benchmarks/bench_preconditioner.py``): 60.1 -> 34.4 on N=20,000 synthetic embeddings
(t/d = 2), 65.0 -> 47.2 on SNLI MiniLM pairs (1), 119.8 -> 89.8 on SNLI premise+hypothesis
n-grams (0.37), 112.6 -> 100.2 on the demo's hypothesis n-grams (0.59). A
classifier fitted on few rows is confident on them, so the bound overstates its curvature
along the leading directions far more than along the rest; raising the rest to
``lambda_tail`` evens the preconditioned spectrum out. With many rows per part the bound is
tight and the flattened tail costs steps (t/d = 9.8: 30.9 -> 60.2; t/d = 3.9: 41.5 -> 43.1), so larger
parts keep the exact inverse. Applying the low-rank form is also two thin products instead
of one with the (d+1)^2 inverse: a quarter of the work at d = 1,024.

Any symmetric positive definite preconditioner leaves the optimum where it is: this one
changes how fast L-BFGS gets there, not where.
"""

from __future__ import annotations

import torch

__all__ = ["LOW_RANK_T", "RANK", "Preconditioner", "boehning_preconditioner"]

# leading eigenvectors kept: ranks 16-512 took 98-101 mean steps on the demo's n-grams; on
# synthetic embeddings 128 took the fewest (35, against 92 at 16, 46 at 64, 52 at 512)
RANK = 128
LOW_RANK_T = 2.0  # the low-rank form for training parts of at most this times d+1 rows
_OVERSAMPLE = 16
_POWER_STEPS = 2


class Preconditioner:
    """``B^-1`` applied to the rows of a (n, d+1) matrix: the exact ``inverse`` (d+1, d+1),
    or ``basis`` (d+1, r) orthonormal with ``coef`` (r,) = 1/lambda - 1/lambda_tail and
    ``tail`` = 1/lambda_tail. ``build_flops`` counts the products that built it."""

    def __init__(
        self,
        *,
        inverse: torch.Tensor | None = None,
        basis: torch.Tensor | None = None,
        coef: torch.Tensor | None = None,
        tail: float = 0.0,
        build_flops: float = 0.0,
    ) -> None:
        self.inverse, self.basis, self.coef, self.tail = inverse, basis, coef, tail
        self.build_flops = build_flops

    @property
    def rank(self) -> int:
        m = self.inverse if self.inverse is not None else self.basis
        return int(m.shape[1])

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        if self.inverse is not None:
            return v @ self.inverse  # symmetric: (B^-1 v^T)^T
        return torch.addmm(v, (v @ self.basis) * self.coef, self.basis.T, beta=self.tail)

    def flops(self, rows: int) -> float:
        n = (self.inverse if self.inverse is not None else self.basis).shape[0]
        return (2.0 if self.inverse is not None else 4.0) * rows * n * self.rank


def boehning_preconditioner(gram: torch.Tensor, scale: float, train_size: float) -> Preconditioner:
    """The preconditioner of ``scale * gram + I`` (``gram`` (d+1, d+1) float64 over
    ``[X~ 1]``) for training parts of ``train_size`` rows: the exact inverse when
    d+1 <= ``RANK`` or ``train_size`` > ``LOW_RANK_T`` * (d+1), else the low-rank form from a
    randomised subspace iteration with a fixed seed (the same on every run and thread count)."""
    b = gram * scale
    b.diagonal().add_(1.0)
    n = b.shape[0]
    if n <= RANK or train_size > LOW_RANK_T * n:
        return Preconditioner(inverse=_exact_inverse(b), build_flops=n**3)
    gen = torch.Generator(device=b.device).manual_seed(0)
    q = min(n, RANK + _OVERSAMPLE)
    basis = torch.linalg.qr(
        b @ torch.randn((n, q), generator=gen, dtype=b.dtype, device=b.device)
    ).Q
    for _ in range(_POWER_STEPS):
        basis = torch.linalg.qr(b @ basis).Q
    theta, w = torch.linalg.eigh(basis.T @ b @ basis)
    theta, w = theta.flip(0).clamp_min(1.0), w.flip(1)  # B >= I: Ritz values too
    vec = basis @ w[:, :RANK]
    tail = 1.0 / float(theta[RANK])
    coef = 1.0 / theta[:RANK] - tail
    # b @ (n x q) four times (start, two power steps, the projection), QR three times
    work = 4 * 2.0 * n * n * q + 3 * 4.0 * n * q * q + 2.0 * n * q * RANK
    return Preconditioner(
        basis=vec.to(torch.float32), coef=coef.to(torch.float32), tail=tail, build_flops=work
    )


def _exact_inverse(b: torch.Tensor) -> torch.Tensor:
    """``b^-1`` in float32 from a float64 Cholesky factorisation (with jitter if ``b`` is
    numerically singular; its diagonal if even that fails)."""
    eye = torch.eye(b.shape[0], dtype=b.dtype, device=b.device)
    jitter = 0.0
    for _ in range(6):
        chol, info = torch.linalg.cholesky_ex(b + jitter * eye)
        if int(info) == 0:
            return torch.cholesky_inverse(chol).to(torch.float32)
        jitter = max(jitter * 100, 1e-8 * float(b.diagonal().mean()))
    # A preconditioner changes the speed, never the fixed point: fall back to its diagonal.
    return torch.diag(1.0 / b.diagonal()).to(torch.float32)
