"""Pieces of a batched L-BFGS: P independent problems advance together, each with its own
curvature pairs, step length and stopping state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

__all__ = [
    "ARMIJO",
    "LINE_SEARCH_HALVINGS",
    "STALL_STEPS",
    "Batch",
    "History",
    "Outcome",
    "armijo_ok",
    "minimize",
    "stuck_count",
]

ARMIJO = 1e-4
LINE_SEARCH_HALVINGS = 30
STALL_STEPS = 10  # steps in a row without a measurable decrease: the precision floor


@dataclass
class History:
    """Curvature pairs (s_k, y_k) and rho_k = 1 / <s_k, y_k>, oldest first.

    Vectors are tuples of tensors whose partition axis is ``pdim``; ``rho`` is (P,). A pair
    whose <s, y> is not positive (a rejected step) gets rho = 0, which removes it from the
    recursion for that partition only.
    """

    size: int
    s: list[tuple[torch.Tensor, ...]] = field(default_factory=list)
    y: list[tuple[torch.Tensor, ...]] = field(default_factory=list)
    rho: list[torch.Tensor] = field(default_factory=list)
    by: list[tuple[torch.Tensor, ...]] = field(default_factory=list)  # B^-1 y_k, if kept

    def push(
        self,
        s: tuple[torch.Tensor, ...],
        y: tuple[torch.Tensor, ...],
        sy: torch.Tensor,
        by: tuple[torch.Tensor, ...] | None = None,
    ) -> None:
        ok = sy > 1e-10 * sy.abs().amax().clamp_min(1e-30)
        self.s.append(s)
        self.y.append(y)
        self.rho.append(
            torch.where(ok, 1.0 / torch.where(ok, sy, torch.ones_like(sy)), torch.zeros_like(sy))
        )
        if by is not None:
            self.by.append(by)
        if len(self.s) > self.size:
            self.s.pop(0)
            self.y.pop(0)
            self.rho.pop(0)
            if self.by:
                self.by.pop(0)

    def keep(self, index: torch.Tensor, pdims: tuple[int, ...], ydims: tuple[int, ...]) -> None:
        """Keep only the partitions in ``index`` (after some have converged)."""
        self.s = [tuple(v.index_select(dim, index) for v, dim in zip(s, pdims)) for s in self.s]
        self.y = [tuple(v.index_select(dim, index) for v, dim in zip(y, ydims)) for y in self.y]
        self.rho = [r.index_select(0, index) for r in self.rho]
        self.by = [tuple(v.index_select(dim, index) for v, dim in zip(b, ydims)) for b in self.by]


def stuck_count(
    count: torch.Tensor, accepted: torch.Tensor, loss: torch.Tensor, loss_new: torch.Tensor
) -> torch.Tensor:
    """Consecutive steps per partition that did not lower the objective measurably (by more
    than 1e-12 of its value, far above float64 rounding of the sum)."""
    moved = accepted & (loss - loss_new > 1e-12 * loss.abs())
    return torch.where(moved, torch.zeros_like(count), count + 1)


def armijo_ok(
    loss_new: torch.Tensor, loss: torch.Tensor, step: torch.Tensor, slope: torch.Tensor
) -> torch.Tensor:
    """Sufficient decrease per partition; ``slope`` is <g, d> (negative along a descent d)."""
    return torch.isfinite(loss_new) & (loss_new <= loss + ARMIJO * step * slope)


@dataclass
class Outcome:
    """How the classifiers of one solve ended: iterations, final relative gradient norm and
    whether each stalled (P,), and the floating-point operations of the matrix products."""

    iters: torch.Tensor
    resid: torch.Tensor
    stalled: torch.Tensor
    flops: float


class Batch:
    """The state of the classifiers being fitted, and the results of those that stopped.

    ``pdim`` gives the partition axis of each per-classifier tensor (default 0) and of the
    history's vectors. ``retire`` records the finished classifiers' ``outputs`` and marks them
    dead; the state is compacted (dead classifiers dropped from every tensor and from the
    L-BFGS history) only once half of the stored ones are dead, so the large per-classifier
    matrices are copied O(log P) times, not once per convergence.
    """

    def __init__(
        self,
        n: int,
        device: torch.device,
        *,
        pdim: dict[str, int],
        outputs: tuple[str, ...],
        hist_dims: tuple[tuple[int, ...], tuple[int, ...]],
    ) -> None:
        self.n = n
        self.pdim = pdim
        self.outputs = outputs
        self.hist_dims = hist_dims
        self.v: dict[str, torch.Tensor] = {}
        self.active = torch.arange(n, device=device)
        self.live = torch.ones(n, dtype=torch.bool, device=device)
        self.iters = torch.zeros(n, dtype=torch.int64, device=device)
        self.resid = torch.zeros(n, dtype=torch.float32, device=device)
        self.stalled = torch.zeros(n, dtype=torch.bool, device=device)
        self._out: dict[str, torch.Tensor] = {}

    def set(self, **tensors: torch.Tensor) -> None:
        self.v.update(tensors)

    @property
    def empty(self) -> bool:
        return not bool(self.live.any())

    def retire(
        self,
        done: torch.Tensor,
        iteration: int,
        rel: torch.Tensor,
        hist: History,
        alphas: list[torch.Tensor],
        *,
        stalled: torch.Tensor | None = None,
    ) -> list[torch.Tensor]:
        """Record the live classifiers where ``done``; returns ``alphas`` (compacted if the
        state was)."""
        done = done & self.live
        if not bool(done.any()):
            return alphas
        rows = self.active[done]
        pos = done.nonzero().squeeze(1)
        for key in self.outputs:
            val, dim = self.v[key], self.pdim.get(key, 0)
            if key not in self._out:
                shape = list(val.shape)
                shape[dim] = self.n
                self._out[key] = torch.zeros(shape, dtype=val.dtype, device=val.device)
            self._out[key].index_copy_(dim, rows, val.index_select(dim, pos))
        self.iters[rows] = iteration
        self.resid[rows] = rel[done].to(torch.float32)
        if stalled is not None:
            self.stalled[rows] = stalled[done]
        self.live = self.live & ~done
        n_live = int(self.live.sum())
        if n_live > len(self.live) // 2:
            return alphas
        keep = self.live.nonzero().squeeze(1)
        self.active = self.active[keep]
        self.live = self.live[keep]
        for key, val in self.v.items():
            self.v[key] = val.index_select(self.pdim.get(key, 0), keep)
        if hist.s:
            hist.keep(keep, *self.hist_dims)
        return [a.index_select(0, keep) for a in alphas]

    def out(self, key: str) -> torch.Tensor:
        return self._out[key]

    def outcome(self, flops: float) -> Outcome:
        return Outcome(self.iters, self.resid, self.stalled, flops)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # a fused multiply-and-sum: einsum's batched matrix-vector route took 5x as long at
    # (64, 3075), about a tenth of a phase on the demo's features
    return torch.linalg.vecdot(a, b)


def _scale(v: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    return v * s[:, None]


Objective = Callable[[dict[str, torch.Tensor], torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def minimize(
    b: Batch,
    theta: torch.Tensor,
    objective: Objective,
    precond: Callable[..., list[torch.Tensor]],
    *,
    tol: float,
    max_iter: int,
    history: int,
) -> None:
    """Preconditioned L-BFGS on the P problems of ``b`` from ``theta`` (P, n_params), one
    contiguous parameter row per problem; the solutions land in ``b.out("theta")``.

    ``objective(b.v, x)`` gives the loss (p,) float64 and gradient (p, n_params) of the live
    problems' rows ``x`` (it reads its per-problem tensors from ``b.v``, compacted with the
    batch); ``precond(*vs)`` applies the inverse preconditioner to each of ``vs``. A problem
    stops when its gradient norm is at most ``tol`` times its value at ``theta``, when it
    stalls for STALL_STEPS steps, or at ``max_iter``.
    """
    p_all = theta.shape[0]
    dev = theta.device
    loss, g = objective(b.v, theta)
    (pg,) = precond(g)
    gnorm0 = _dot(g, g).sqrt()
    b.set(
        theta=theta,
        g=g,
        pg=pg,
        pq=pg,
        loss=loss,
        gnorm0=gnorm0,
        step=torch.ones(p_all, dtype=torch.float64, device=dev),
        flat=torch.zeros(p_all, dtype=torch.int64, device=dev),
        gamma=torch.ones(p_all, device=dev),
    )
    hist = History(history)
    alphas: list[torch.Tensor] = []
    # a problem whose gradient is zero at the start (a training part with one class) is solved
    alphas = b.retire(gnorm0 <= 0, 0, torch.zeros_like(gnorm0), hist, alphas)

    for it in range(1, max_iter + 1):
        if b.empty:
            break
        v = b.v
        r = _scale(v["pq"], v["gamma"])  # H0 = gamma * B^-1, then the second loop
        for s_k, y_k, rho_k, a_k in zip(hist.s, hist.y, hist.rho, reversed(alphas)):
            r.addcmul_(s_k[0], (a_k - rho_k * _dot(y_k[0], r))[:, None])
        slope = -_dot(v["g"], r)
        trial = v["theta"] - _scale(r, v["step"].to(r.dtype))
        loss_t, g_t = objective(v, trial)
        ok = armijo_ok(loss_t, v["loss"], v["step"], slope.double()) & (slope < 0) & b.live
        # Problems that did not accept their step (a failed line search, or stopped and not
        # yet compacted away: at most half the rows) keep their state: their rows are put
        # back, instead of selecting every row with a mask.
        rejected = (~ok).nonzero().squeeze(1)
        s_new = (trial - v["theta"]).index_fill_(0, rejected, 0.0)
        y_new = (g_t - v["g"]).index_fill_(0, rejected, 0.0)
        sy = _dot(s_new, y_new)
        g = g_t.index_copy_(0, rejected, v["g"].index_select(0, rejected))
        # One preconditioner product per iteration: B^-1 y_k = B^-1 g_k+1 - B^-1 g_k is kept
        # with each pair, so B^-1 q after the first loop is B^-1 g - sum_k a_k B^-1 y_k, a few
        # vector updates instead of a second (d+1) x (d+1) product.
        (pg,) = precond(g)
        by_new = (pg - v["pg"]).index_fill_(0, rejected, 0.0)
        hist.push((s_new,), (y_new,), sy, (by_new,))
        flat = stuck_count(v["flat"], ok, v["loss"], loss_t)
        b.set(
            theta=trial.index_copy_(0, rejected, v["theta"].index_select(0, rejected)),
            g=g,
            loss=torch.where(ok, loss_t, v["loss"]),
            flat=flat,
            step=torch.where(ok, torch.ones_like(v["step"]), v["step"] * 0.5),
        )

        # first loop for the next step, on q and on B^-1 q together
        q = g.clone()
        pq = pg.clone()
        alphas = []
        for s_k, y_k, rho_k, by_k in zip(
            reversed(hist.s), reversed(hist.y), reversed(hist.rho), reversed(hist.by)
        ):
            a = rho_k * _dot(s_k[0], q)
            alphas.append(a)
            q.addcmul_(y_k[0], -a[:, None])
            pq.addcmul_(by_k[0], -a[:, None])
        yby = _dot(y_new, by_new)
        gamma = torch.where(ok & (yby > 0) & (sy > 0), sy / yby.clamp_min(1e-30), v["gamma"])
        b.set(pq=pq, pg=pg, gamma=gamma.clamp(1e-3, 1e3))
        rel = _dot(g, g).sqrt() / v["gnorm0"].clamp_min(1e-30)
        # no measurable decrease for STALL_STEPS steps: the objective cannot be lowered at
        # this precision any more; the problem stops with its residual on record
        stalled = b.v["flat"] >= STALL_STEPS
        done = (rel <= tol) | stalled if it < max_iter else torch.ones_like(b.live)
        alphas = b.retire(done, it, rel, hist, alphas, stalled=stalled)
