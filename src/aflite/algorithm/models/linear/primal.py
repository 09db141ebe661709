"""Primal solver: the weights of all classifiers stacked into one matrix.

Weights are ``theta`` of shape (d+1, P, C) outside the solver, (d+1, C, P) inside it: feature
weights and, in the last row, the intercept. In the dense pass the logits of every stored row
under every classifier are one product ``X~ @ theta[:d].view(d, C*P)`` and a 0/1 training
mask (N, P) selects which rows enter which classifier's loss: compute-bound on any device.
The gathered pass (many classes, small t/N) multiplies each part's own rows instead. The
L-BFGS keeps each classifier's parameters as one contiguous row of a (P, C*(d+1)) matrix,
class-major (each class's weights, then its intercept), so its inner products and updates
are contiguous reductions, the block pass gathers a classifier's (C, d+1) weights as they
lie, and the preconditioner acts on the (P*C, d+1) rows
(:mod:`aflite.algorithm.numerics.preconditioner`).
"""

from __future__ import annotations

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.linear.block_pass import block_objective, pass_flops
from aflite.algorithm.numerics.blocks import BlockPlan
from aflite.algorithm.numerics.lbfgs import Batch, Outcome, minimize
from aflite.algorithm.numerics.preconditioner import Preconditioner, boehning_preconditioner
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["boehning_inverse", "solve_primal", "stacked_logits"]

_RANGE_ROWS = 8192


def boehning_inverse(
    store: FeatureStore, current: torch.Tensor, train_size: float, reg_c: float
) -> Preconditioner:
    """The preconditioner of ``c * (t/n) * [X~ 1]^T [X~ 1] + I`` over the current rows.

    ``c = C/2`` bounds the softmax Hessian (Böhning 1992); (t/n) times the Gram matrix of the
    current set is the expected Gram matrix of one training part. ``current`` is a (N_store,)
    0/1 float mask.
    """
    d = store.dim
    dev = store.device
    gram = torch.zeros((d + 1, d + 1), dtype=torch.float64, device=dev)
    for s, e, chunk in store.chunks():
        # sub-blocks keep the masked copy small: a whole chunk would add a quarter GB at d=1024
        for b in range(0, e - s, 8192):
            xb = chunk[b : b + 8192]
            xw = xb * current[s + b : s + b + len(xb), None]
            gram[:d, :d] += (xb.T @ xw).double()
            col = xw.sum(dim=0).double()
            gram[:d, d] += col
            gram[d, :d] += col
        gram[d, d] += float(current[s:e].sum())
    n = max(float(gram[d, d]), 1.0)
    return boehning_preconditioner(gram, 0.5 * reg_c * train_size / n, train_size)


def stacked_logits(xb: torch.Tensor, theta: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    """(n, P, C) logits of a chunk of standardised rows under every classifier."""
    d1, p, c = theta.shape
    bias = theta[d1 - 1].reshape(p * c) + neg.reshape(p * c)
    return torch.addmm(bias, xb, theta[: d1 - 1].reshape(d1 - 1, p * c)).view(-1, p, c)


def _objective(
    store: FeatureStore,
    y: torch.Tensor,
    onehot: torch.Tensor,
    train: torch.Tensor,
    neg_cp: torch.Tensor,
    reg_c: float,
    theta: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss (P,) and gradient (d+1, C, P) of every classifier, one pass over the rows.

    The solver's weights are laid out (d+1, C, P): logits come out (n, C, P), so the softmax,
    the label's pick and the residual run along P-wide contiguous rows. With the class axis
    last (3-wide rows) these element-wise passes took 40% as long as the two matrix products;
    now 20% (N=20,000, d=1,024, P=64, one core).
    """
    d1, c, p = theta.shape
    d = d1 - 1
    # sums in float64: a float32 total over thousands of rows is only good to ~1e-6 relative,
    # which stalls the line search before a classifier reaches a 1e-4 gradient tolerance
    loss = torch.zeros(p, dtype=torch.float64, device=theta.device)
    grad = torch.zeros_like(theta)
    gw = grad[:d].view(d, c * p)
    gb = grad[d].view(c * p)
    bias = (theta[d] + neg_cp).reshape(c * p)
    w = theta[:d].reshape(d, c * p)

    def run(span: tuple[int, int]):
        s, e = span
        xb, n = store.read(s, e), e - s
        logp = torch.log_softmax(torch.addmm(bias, xb, w).view(n, c, p), dim=1)
        t = train[s:e]
        picked = torch.gather(logp, 1, y[s:e, None, None].expand(n, 1, p)).squeeze(1)
        part = (picked * t).sum(dim=0, dtype=torch.float64)
        resid = logp.exp_().sub_(onehot[s:e, :, None]).mul_(t[:, None, :])
        r2 = resid.view(n, c * p)
        return part, xb.T @ r2, r2.sum(dim=0)

    # fixed row ranges on the worker threads, summed in range order
    for part, g_w, g_b in workers().map(run, store.ranges(_RANGE_ROWS)):
        loss -= part
        gw += g_w
        gb += g_b
    grad.mul_(reg_c)
    grad[:d] += theta[:d]
    reg = (theta[:d] * theta[:d]).sum(dim=(0, 1), dtype=torch.float64)
    return reg_c * loss + 0.5 * reg, grad


def _objective_gathered(
    xg: torch.Tensor,
    yg: torch.Tensor,
    wg: torch.Tensor,
    neg: torch.Tensor,
    reg_c: float,
    theta: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss (P,) and gradient (P, d+1, C) from each classifier's own training rows.

    ``xg`` (P, t, d) holds the standardised training rows of every part (zero where a part
    is padded), ``yg`` (P, t) their labels, ``wg`` (P, t) 1 for a row and 0 for padding;
    ``theta`` is (P, d+1, C). Only the useful products, t/N of the dense pass's work, but
    P small products that read the gathered rows: worth it when C is large or t/N small.
    """
    p, d1, c = theta.shape
    d = d1 - 1
    logits = torch.baddbmm((theta[:, d] + neg)[:, None, :], xg, theta[:, :d])
    logp = torch.log_softmax(logits, dim=2)
    picked = torch.gather(logp, 2, yg[:, :, None]).squeeze(2)
    loss = -(picked * wg).sum(dim=1, dtype=torch.float64)
    resid = logp.exp_()
    resid.scatter_add_(
        2, yg[:, :, None], picked.new_full((1, 1, 1), -1.0).expand(p, yg.shape[1], 1)
    )
    resid.mul_(wg[:, :, None])
    grad = theta.new_empty(theta.shape)  # contiguous, whatever the strides of theta
    torch.bmm(xg.transpose(1, 2), resid, out=grad[:, :d])
    grad[:, d] = resid.sum(dim=1)
    grad.mul_(reg_c)
    grad[:, :d] += theta[:, :d]
    reg = (theta[:, :d] * theta[:, :d]).sum(dim=(1, 2), dtype=torch.float64)
    return reg_c * loss + 0.5 * reg, grad


def _gather_rows(store: FeatureStore, idx: torch.Tensor, wg: torch.Tensor) -> torch.Tensor:
    """(P, t, d) float32 training rows of every part, zero where padded, filled a few parts at
    a time: a store read from disk standardises what it gathers through float64 copies."""
    xg = torch.empty((*idx.shape, store.dim), dtype=torch.float32, device=store.device)
    for s in range(0, idx.shape[0], 8):
        xg[s : s + 8] = store.gather(idx[s : s + 8])
    return xg.mul_(wg[:, :, None])


def _to_rows(theta: torch.Tensor) -> torch.Tensor:
    """(d+1, C, P) -> (P, C*(d+1)): one contiguous, class-major parameter row per classifier."""
    d1, c, p = theta.shape
    return theta.permute(2, 1, 0).reshape(p, c * d1)


def _to_stacked(rows: torch.Tensor, d1: int, c: int) -> torch.Tensor:
    """(P, C*(d+1)) -> (d+1, C, P), the layout of the dense objective."""
    return rows.view(rows.shape[0], c, d1).permute(2, 1, 0).contiguous()


def solve_primal(
    store: FeatureStore,
    y: torch.Tensor,
    train: torch.Tensor,
    neg: torch.Tensor,
    *,
    binv: Preconditioner,
    reg_c: float,
    tol: float,
    max_iter: int,
    history: int,
    gathered: tuple[torch.Tensor, torch.Tensor] | None = None,
    plan: BlockPlan | None = None,
) -> tuple[torch.Tensor, Outcome]:
    """Fit every column of ``train`` (N_store, P); ``neg`` (P, C) is NEG for absent classes.

    ``plan`` (block partitions; ``train`` is then unused) runs each pass block by block over
    the classifiers that train on the block (:mod:`.block_pass`).
    ``gathered`` = (positions (P, t), weights (P, t)) of each part's training rows, padded
    with weight 0, switches from the dense pass over all stored rows to products over the
    gathered rows (:func:`_objective_gathered`); the fixed point is the same.
    Returns theta (d+1, P, C) and the :class:`Outcome` (iterations, residuals, stalls, work).
    """
    d1 = store.dim + 1
    p_all, c = neg.shape
    dev = store.device

    flops = [0.0]
    if gathered is None and plan is None:
        onehot = torch.nn.functional.one_hot(y.long(), c).to(torch.float32)

    def objective(v: dict[str, torch.Tensor], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if plan is not None:
            flops[0] += pass_flops(plan, x.shape[0])
            slot = torch.full((p_all + 1,), len(b.active), dtype=torch.int64, device=dev)
            slot[b.active] = torch.arange(len(b.active), device=dev)
            return block_objective(plan, x, slot, v["neg"], reg_c)
        if gathered is not None:
            flops[0] += 4.0 * v["xg"].shape[1] * store.dim * x.shape[0] * c
            loss, grad = _objective_gathered(
                v["xg"], v["yg"], v["wg"], v["neg"], reg_c, x.view(-1, c, d1).transpose(1, 2)
            )
            return loss, grad.transpose(1, 2).reshape(x.shape)
        flops[0] += 4.0 * store.n_stored * store.dim * x.shape[0] * c
        theta = _to_stacked(x, d1, c)
        loss, grad = _objective(store, y, onehot, v["train"], v["neg"].T, reg_c, theta)
        return loss, _to_rows(grad)

    def precond(*vs: torch.Tensor) -> list[torch.Tensor]:
        # B^-1 acts on each class's d+1 parameters: rows of (P*C, d+1)
        p = vs[0].shape[0]
        flops[0] += binv.flops(p * c) * len(vs)
        return [binv(v.view(p * c, d1)).view(p, c * d1) for v in vs]

    b = Batch(p_all, dev, pdim={"train": 1}, outputs=("theta",), hist_dims=((0,), (0, 0)))
    b.set(neg=neg)
    if train is not None:
        b.set(train=train)
    if gathered is not None:
        idx, wg = gathered
        b.set(xg=_gather_rows(store, idx, wg), yg=y[idx], wg=wg)
    theta = torch.zeros((p_all, c * d1), dtype=torch.float32, device=dev)
    minimize(b, theta, objective, precond, tol=tol, max_iter=max_iter, history=history)
    theta = b.out("theta").view(p_all, c, d1).permute(2, 0, 1).contiguous()  # (d+1, P, C)
    return theta, b.outcome(flops[0])
