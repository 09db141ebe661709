"""The batched L-BFGS of every iterative family: P independent problems advance together,
each with its own curvature pairs, step length and stopping state.

One loop (:func:`lbfgs`) runs the two-loop recursion, keeps the curvature pairs, scales the
first step's metric by each problem's curvature (gamma), counts stalls and retires the
problems that stop. What differs between solvers is the :class:`Geometry` of their problems:
how a step and a gradient pair, how the first metric H0 applies, and how a step is searched
for. :func:`minimize` is the geometry of the primal solvers (a contiguous row of parameters
per problem and a preconditioner ``B^-1``: the logistic family's primal solver, the
choice-wise model); the logistic family's span solver
(:mod:`aflite.algorithm.models.linear.span`) brings its own, in the span of each part's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch

__all__ = [
    "ARMIJO",
    "LINE_SEARCH_HALVINGS",
    "STALL_STEPS",
    "Batch",
    "Geometry",
    "History",
    "Outcome",
    "Vector",
    "armijo_ok",
    "lbfgs",
    "minimize",
    "stuck_count",
]

ARMIJO = 1e-4
LINE_SEARCH_HALVINGS = 30
STALL_STEPS = 10  # steps in a row without a measurable decrease: the precision floor

Vector = tuple[torch.Tensor, ...]  # a step or a gradient of every problem, in a geometry's parts


@dataclass
class History:
    """Curvature pairs (s_k, y_k) and rho_k = 1 / <s_k, y_k>, oldest first.

    Vectors are tuples of tensors whose partition axis is ``pdim``; ``rho`` is (P,). A pair
    whose <s, y> is not positive (a rejected step) gets rho = 0, which removes it from the
    recursion for that partition only.
    """

    size: int
    s: list[Vector] = field(default_factory=list)
    y: list[Vector] = field(default_factory=list)
    rho: list[torch.Tensor] = field(default_factory=list)

    def push(self, s: Vector, y: Vector, sy: torch.Tensor) -> None:
        ok = sy > 1e-10 * sy.abs().amax().clamp_min(1e-30)
        self.s.append(s)
        self.y.append(y)
        self.rho.append(
            torch.where(ok, 1.0 / torch.where(ok, sy, torch.ones_like(sy)), torch.zeros_like(sy))
        )
        if len(self.s) > self.size:
            self.s.pop(0)
            self.y.pop(0)
            self.rho.pop(0)

    def keep(self, index: torch.Tensor, pdims: tuple[int, ...], ydims: tuple[int, ...]) -> None:
        """Keep only the partitions in ``index`` (after some have converged)."""
        self.s = [tuple(v.index_select(dim, index) for v, dim in zip(s, pdims)) for s in self.s]
        self.y = [tuple(v.index_select(dim, index) for v, dim in zip(y, ydims)) for y in self.y]
        self.rho = [r.index_select(0, index) for r in self.rho]


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


class Geometry(Protocol):
    """Where a solver's P problems live, for :func:`lbfgs`. A step (``s``, the search
    direction ``r``) and a gradient (``y``, ``q``) are tuples of the geometry's parts
    (:data:`Vector`); the live problems' state is ``b.v`` of the :class:`Batch`."""

    def start(self, b: Batch) -> torch.Tensor:
        """Evaluate every problem at its start, set the state in ``b``; returns the gradient
        norms (P,) the stopping rule divides by."""
        ...

    def first_metric(self, v: dict[str, torch.Tensor]) -> Vector:
        """``gamma * H0 q``: the first metric on the gradient the last recursion left."""
        ...

    def pair(self, step: Vector, gradient: Vector) -> torch.Tensor:
        """<step, gradient> per problem (P,)."""
        ...

    def add_step(self, r: Vector, c: torch.Tensor, s: Vector) -> Vector:
        """``r + c s`` (``c`` per problem)."""
        ...

    def sub_gradient(self, q: Vector, c: torch.Tensor, y: Vector) -> Vector:
        """``q - c y`` (``c`` per problem)."""
        ...

    def advance(self, b: Batch, r: Vector) -> tuple[Vector, Vector, torch.Tensor]:
        """Search along ``-r`` from the live problems' points, set the new state in ``b``;
        returns the step taken, the gradient's change (zero where no step was taken) and
        which live problems moved."""
        ...

    def gradient(self, v: dict[str, torch.Tensor]) -> Vector:
        """The new gradient, where the first loop of the recursion starts."""
        ...

    def settle(
        self, b: Batch, q: Vector, s: Vector, y: Vector
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """After the first loop left ``q``: prepare the next step's first metric in ``b``;
        returns <y, H0 y> per problem (for gamma) and the new gradient norms."""
        ...


def lbfgs(b: Batch, geometry: Geometry, *, tol: float, max_iter: int, history: int) -> None:
    """L-BFGS on the P problems of ``b`` in ``geometry``; the solutions land in ``b``'s
    outputs. A problem stops when its gradient norm is at most ``tol`` times its value at the
    start, when it stalls for STALL_STEPS steps, or at ``max_iter``."""
    gnorm0 = geometry.start(b)
    hist = History(history)
    alphas: list[torch.Tensor] = []
    # a problem whose gradient is zero at the start (a training part with one class) is solved
    alphas = b.retire(gnorm0 <= 0, 0, torch.zeros_like(gnorm0), hist, alphas)

    for it in range(1, max_iter + 1):
        if b.empty:
            break
        v = b.v
        r = geometry.first_metric(v)  # gamma * H0 q, then the second loop
        for s_k, y_k, rho_k, a_k in zip(hist.s, hist.y, hist.rho, reversed(alphas)):
            r = geometry.add_step(r, a_k - rho_k * geometry.pair(r, y_k), s_k)
        s, y, moved = geometry.advance(b, r)
        sy = geometry.pair(s, y)
        hist.push(s, y, sy)

        # the first loop for the next step
        q = geometry.gradient(v)
        alphas = []
        for s_k, y_k, rho_k in zip(reversed(hist.s), reversed(hist.y), reversed(hist.rho)):
            a = rho_k * geometry.pair(s_k, q)
            alphas.append(a)
            q = geometry.sub_gradient(q, a, y_k)
        yhy, gnorm = geometry.settle(b, q, s, y)
        gamma = torch.where(moved & (yhy > 0) & (sy > 0), sy / yhy.clamp_min(1e-30), v["gamma"])
        b.set(gamma=gamma.clamp(1e-3, 1e3))
        rel = gnorm / v["gnorm0"].clamp_min(1e-30)
        # no measurable decrease for STALL_STEPS steps: the objective cannot be lowered at
        # this precision any more; the problem stops with its residual on record
        stalled = b.live & (v["flat"] >= STALL_STEPS)
        done = (rel <= tol) | stalled if it < max_iter else torch.ones_like(b.live)
        alphas = b.retire(done, it, rel, hist, alphas, stalled=stalled)


Objective = Callable[[dict[str, torch.Tensor], torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


class _Rows:
    """The primal solvers' geometry: one contiguous row of parameters per problem, the
    Euclidean pairing, and a preconditioner ``B^-1`` as the first metric. A gradient carries
    its preconditioned image (``B^-1 q``, ``B^-1 y``), so a step costs one preconditioner
    product, not two: ``B^-1 q`` after the first loop is ``B^-1 g - sum_k a_k B^-1 y_k``, a few
    vector updates instead of a second (d+1) x (d+1) product. One trial step per iteration:
    a problem whose trial fails keeps its point and halves its step for the next."""

    def __init__(
        self,
        theta: torch.Tensor,
        objective: Objective,
        precond: Callable[..., list[torch.Tensor]],
    ) -> None:
        self.theta, self.objective, self.precond = theta, objective, precond

    def start(self, b: Batch) -> torch.Tensor:
        theta, dev = self.theta, self.theta.device
        p_all = theta.shape[0]
        loss, g = self.objective(b.v, theta)
        (pg,) = self.precond(g)
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
        return gnorm0

    def first_metric(self, v: dict[str, torch.Tensor]) -> Vector:
        return (_scale(v["pq"], v["gamma"]),)

    def pair(self, step: Vector, gradient: Vector) -> torch.Tensor:
        return _dot(step[0], gradient[0])

    def add_step(self, r: Vector, c: torch.Tensor, s: Vector) -> Vector:
        return (r[0].addcmul_(s[0], c[:, None]),)

    def sub_gradient(self, q: Vector, c: torch.Tensor, y: Vector) -> Vector:
        return tuple(qi.addcmul_(yi, -c[:, None]) for qi, yi in zip(q, y))

    def advance(self, b: Batch, r: Vector) -> tuple[Vector, Vector, torch.Tensor]:
        v, (r,) = b.v, r
        slope = -_dot(v["g"], r)
        trial = v["theta"] - _scale(r, v["step"].to(r.dtype))
        loss_t, g_t = self.objective(v, trial)
        ok = armijo_ok(loss_t, v["loss"], v["step"], slope.double()) & (slope < 0) & b.live
        # Problems that did not accept their step (a failed line search, or stopped and not
        # yet compacted away: at most half the rows) keep their state: their rows are put
        # back, instead of selecting every row with a mask.
        rejected = (~ok).nonzero().squeeze(1)
        s_new = (trial - v["theta"]).index_fill_(0, rejected, 0.0)
        y_new = (g_t - v["g"]).index_fill_(0, rejected, 0.0)
        g = g_t.index_copy_(0, rejected, v["g"].index_select(0, rejected))
        (pg,) = self.precond(g)
        py_new = (pg - v["pg"]).index_fill_(0, rejected, 0.0)
        b.set(
            theta=trial.index_copy_(0, rejected, v["theta"].index_select(0, rejected)),
            g=g,
            pg=pg,
            loss=torch.where(ok, loss_t, v["loss"]),
            flat=stuck_count(v["flat"], ok, v["loss"], loss_t),
            step=torch.where(ok, torch.ones_like(v["step"]), v["step"] * 0.5),
        )
        return (s_new,), (y_new, py_new), ok

    def gradient(self, v: dict[str, torch.Tensor]) -> Vector:
        return v["g"].clone(), v["pg"].clone()

    def settle(
        self, b: Batch, q: Vector, s: Vector, y: Vector
    ) -> tuple[torch.Tensor, torch.Tensor]:
        b.set(pq=q[1])
        g = b.v["g"]
        return _dot(y[0], y[1]), _dot(g, g).sqrt()


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
    batch); ``precond(*vs)`` applies the inverse preconditioner to each of ``vs``. See
    :func:`lbfgs` for when a problem stops."""
    lbfgs(b, _Rows(theta, objective, precond), tol=tol, max_iter=max_iter, history=history)
