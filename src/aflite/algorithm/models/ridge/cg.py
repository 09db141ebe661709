"""The primal form of the least-squares family by preconditioned conjugate gradients.

Each part j solves ``(Xc_j^T Xc_j + alpha t_j I) W_j = Xc_j^T Yc_j``, a d x d system. Forming
and factorising it costs a Gram matrix per part (or a sum of block Grams) and a d^3/3
factorisation per part; on one core the factorisations alone took longer than a whole phase
of logistic regression. The system need not be formed: ``Xc^T Xc v = X^T X v - t xbar xbar^T
v``, and ``X_j^T X_j v`` is a sum over the part's blocks, so one pass over the phase's blocks
(each block multiplied by the weights of the parts that train on it, as the logistic family's
pass does) applies every part's matrix at once.

A part's rows are a random t/n sample of the current rows, so its matrix is close to ``t_j
(S + alpha I)``, S the covariance of the current rows: one factorisation of ``S + alpha I``
(S from ``SAMPLE_PER_DIM * d`` of the rows; it only steers the iterations, never the answer)
preconditions every part. On N=20,000 embedding-like rows (d=1,024, t=2,000, alpha=1) the
residual fell about 4.5x a step: 1e-7 of the right-hand side in 11 steps, where every held-out
prediction already agreed with the exact solution, and 1e-12 in about 19.

The iterations are float64, on the float32 stored rows (a product of two float32 numbers is
exact in float64), and run until every residual is ``TOL`` (1e-12) of its right-hand side,
so the margins that order equal scores are the direct solve's to about 1e-10, whatever the
storage order (the preconditioner's sample is a set of rows, not the first stored ones).
Each part's error is then bounded by its true residual (one more pass) over ``alpha t`` (the
matrix's smallest eigenvalue is at least that), which must certify its held-out predictions
(:mod:`~.heldout`); a part it does not (a tiny alpha makes the bound loose) or whose
iterations stalled is solved directly (:func:`~.direct.primal_solve`).
"""

from __future__ import annotations

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.ridge.direct import SOLVE_BYTES, Parts, PrimalSums, primal_solve
from aflite.algorithm.models.ridge.sparse import TOL
from aflite.algorithm.numerics.blocks import BlockPlan, plan_blocks
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["BlockProducts", "PrimalCG", "RowProducts", "fit_primal", "preconditioner"]

SAMPLE_PER_DIM = 2
# preconditioned, a step cuts the residual about 4.5x: a part still short of TOL after this many
# has stalled (a float64 floor above TOL), and is solved directly
MAX_STEPS = 100
STALL_STEPS = 10
GATHER_BYTES = 64 << 20  # float64 rows of parts gathered at once
# float64 copies of the rows kept for a phase up to this size (converted every pass above it):
# the conversion took as long as the products
KEEP64_BYTES = 1 << 30


class BlockProducts:
    """``sum_{b in j} X_b^T [1 Y_b]`` and ``X_j^T X_j V_j`` of every part through a phase's
    block tasks."""

    def __init__(self, plan: BlockPlan) -> None:
        self.plan = plan
        self.p = plan.n_partitions
        n = sum(t.pos.numel() for t in plan.tasks)
        self.kept = (
            [plan.rows(t).double() for t in plan.tasks]
            if n * plan.store.dim * 8 <= KEEP64_BYTES
            else None
        )

    def _each(self, fn, width: int, dev: torch.device) -> torch.Tensor:
        """Sum ``fn(task, its float64 rows)`` (member ids, their rows) over the tasks."""
        tasks = self.plan.tasks

        def run(i: int):
            x = self.kept[i] if self.kept is not None else self.plan.rows(tasks[i]).double()
            return fn(tasks[i], x)

        out = torch.zeros((self.p + 1, width), dtype=torch.float64, device=dev)
        for idx, u in workers().map(run, range(len(tasks))):
            add_rows(out, idx, u)
        return out[: self.p]

    def sums(self, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per part: (P, d) sum of rows, (P, C, d) sum of y x^T, (P, C) sum of targets."""
        d, c, dev = self.plan.store.dim, targets.shape[1], targets.device

        def run(task, x):
            w = task.w.double()
            yw = targets[task.pos] * w[:, :, None]  # (g, n, C)
            u = torch.cat(
                [(x * w[:, :, None]).sum(dim=1), torch.bmm(yw.transpose(1, 2), x).flatten(1)]
                + [yw.sum(dim=1)],
                dim=1,
            )
            g, s = task.members.shape
            return task.members.reshape(-1), u[:, None, :].expand(g, s, -1).reshape(g * s, -1)

        out = self._each(run, d + c * d + c, dev)
        return out[:, :d], out[:, d : d + c * d].view(-1, c, d), out[:, d + c * d :]

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        """(P, C, d) -> (P, C, d): ``X_j^T X_j`` times each part's C columns."""
        p, c, d = v.shape
        ext = torch.cat([v.reshape(p, c * d), v.new_zeros(1, c * d)])

        def run(task, x):
            g, s = task.members.shape
            z = torch.bmm(ext[task.members].view(g, s * c, d), x.transpose(1, 2))
            z.mul_(task.w.double()[:, None, :])
            return task.members.reshape(-1), torch.bmm(z, x).view(g * s, c * d)

        return self._each(run, c * d, v.device).view(p, c, d)


class RowProducts:
    """The same products from each part's own gathered rows (``order``/``w``: (k, t_max)
    store positions and 1/0 weights): uniform partitions."""

    def __init__(self, store: FeatureStore, order: torch.Tensor, w: torch.Tensor) -> None:
        self.store, self.order, self.w = store, order, w.to(torch.float64)
        k, tm = order.shape
        per = max(1, GATHER_BYTES // (8 * tm * store.dim))
        self.groups = [range(s, min(k, s + per)) for s in range(0, k, per)]
        self.kept: dict[int, torch.Tensor] | None = (
            {} if k * tm * store.dim * 8 <= KEEP64_BYTES else None
        )

    def _rows(self, j: range) -> tuple[torch.Tensor, torch.Tensor]:
        x = None if self.kept is None else self.kept.get(j.start)
        if x is None:
            x = self.store.gather(self.order[j.start : j.stop]).double()
            if self.kept is not None:
                self.kept[j.start] = x
        return x, self.w[j.start : j.stop]

    def sums(self, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        def run(j: range):
            x, w = self._rows(j)
            yw = targets[self.order[j.start : j.stop]] * w[:, :, None]
            return (x * w[:, :, None]).sum(dim=1), torch.bmm(yw.transpose(1, 2), x), yw.sum(dim=1)

        out = list(workers().map(run, self.groups))
        return tuple(torch.cat([o[i] for o in out]) for i in range(3))  # type: ignore[return-value]

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        def run(j: range):
            x, w = self._rows(j)
            z = torch.bmm(v[j.start : j.stop], x.transpose(1, 2)).mul_(w[:, None, :])
            return torch.bmm(z, x)

        return torch.cat(list(workers().map(run, self.groups)))


def preconditioner(sample: torch.Tensor, alpha: float) -> torch.Tensor:
    """(d, d) float64 inverse of ``S + alpha I``, S the covariance of the (m, d) rows."""
    z = sample.double()
    z = z - z.mean(dim=0)
    m = z.T @ z / max(1, len(z))
    m.diagonal().add_(alpha)
    return torch.cholesky_inverse(torch.linalg.cholesky(m))


class PrimalCG:
    """Conjugate gradients on every part's primal system at once, one independent iteration
    per (part, class) column, resumable on a subset of the parts (:meth:`subset`)."""

    def __init__(self, products, targets, sizes, alpha, inverse) -> None:
        s1, sy, ysum = products.sums(targets)
        t = sizes.to(torch.float64)
        self.products, self.t, self.lam, self.inverse = products, t, alpha * t, inverse
        self.xbar = s1 / t[:, None]
        self.ybar = ysum / t[:, None]
        # Xc^T Yc = sum x y^T - t xbar ybar^T
        self.b = sy - t[:, None, None] * self.ybar[:, :, None] * self.xbar[:, None, :]
        self.bb = (self.b * self.b).sum(dim=2)
        self.x = torch.zeros_like(self.b)
        self.r = self.b.clone()
        z = self._precondition(self.r)
        self.q = z
        self.rz = (self.r * z).sum(dim=2)
        self.steps = 0

    def _op(self, v: torch.Tensor) -> torch.Tensor:
        out = self.products(v)
        proj = (v * self.xbar[:, None, :]).sum(dim=2, keepdim=True)  # (P, C, 1)
        out.sub_(self.t[:, None, None] * proj * self.xbar[:, None, :])
        return out.add_(self.lam[:, None, None] * v)

    def _precondition(self, r: torch.Tensor) -> torch.Tensor:
        p, c, d = r.shape
        return (r.reshape(p * c, d) @ self.inverse).view(p, c, d) / self.t[:, None, None]

    def solve(self, tol: float) -> torch.Tensor:
        """Iterate until every column's residual is at most ``tol`` of its right-hand side, or
        ``MAX_STEPS``; (P,) True for the parts that got there."""
        goal = (tol * tol) * self.bb
        rr = (self.r * self.r).sum(dim=2)
        live = rr > goal
        stalled = torch.zeros_like(live)
        before = rr
        while self.steps < MAX_STEPS and bool(live.any()):
            self.steps += 1
            if self.steps % STALL_STEPS == 0:
                # a column whose residual fell less than 10x in the last STALL_STEPS steps
                # (preconditioned: about 4.5x a step) is ill-conditioned: solved directly
                rr = (self.r * self.r).sum(dim=2)
                stalled |= live & (rr >= 1e-2 * before)
                live = live & ~stalled
                before = rr
                if not bool(live.any()):
                    break
            aq = self._op(self.q)
            step = torch.where(live, self.rz / (self.q * aq).sum(dim=2).clamp_min(1e-300), 0.0)
            self.x.addcmul_(step[:, :, None], self.q)
            self.r.addcmul_(step[:, :, None], aq, value=-1.0)
            z = self._precondition(self.r)
            rz = (self.r * z).sum(dim=2)
            beta = torch.where(live, rz / self.rz.clamp_min(1e-300), 0.0)
            self.q = z.addcmul_(beta[:, :, None], self.q)
            self.rz = rz
            live = live & ((self.r * self.r).sum(dim=2) > goal)
        return ~(live | stalled).any(dim=1)

    def bounds(self) -> torch.Tensor:
        """(P,) how far any class's weights can be from the exact solution: the true
        residual's norm (one more pass, not the recurrence's) over ``alpha t``."""
        r = self.b - self._op(self.x)
        return torch.linalg.vector_norm(r, dim=2).amax(dim=1) / self.lam

    def theta(self) -> torch.Tensor:
        """(d+1, P, C) weights and intercepts in the solver's layout."""
        intercept = self.ybar - (self.x * self.xbar[:, None, :]).sum(dim=2)
        return torch.cat([self.x.permute(2, 0, 1), intercept[None]], dim=0)


def fit_primal(store, y, targets, parts, sizes, alpha, held_count, n_classes):
    """Every part's weights (d+1, P, C) by the iterations above, its held-out counts, and the
    solver's figures. ``held_count(theta, bounds, means)`` counts (and certifies, given
    bounds) the held-out predictions; ``parts`` carries the block design where there is one."""
    d = store.dim
    w = parts.weight.to(torch.float64)
    n_sample = SAMPLE_PER_DIM * d
    if parts.design is not None:
        plan = _plan(store, y, parts, n_classes)
        products = BlockProducts(plan)
        # the first rows the design dealt: random rows, in the rows' canonical order
        sample = parts.positions[parts.design.order[:n_sample]]
    else:
        products = RowProducts(store, parts.order, w)
        # whole parts, so that the sample is a set of rows whatever their storage order
        need = int(torch.searchsorted(torch.cumsum(w.sum(dim=1), 0), float(n_sample))) + 1
        sample = parts.order[:need][w[:need] > 0]
    inverse = preconditioner(store.gather(sample), float(alpha[0] / sizes[0]))
    cg = PrimalCG(products, targets, sizes, alpha / sizes, inverse)
    converged = cg.solve(TOL)
    theta = cg.theta()
    counts = held_count(theta, cg.bounds(), cg.xbar)
    # a part whose held-out predictions its bound cannot certify (the bound is ||r|| / (alpha
    # t): a tiny alpha) or whose iterations stalled is solved directly
    direct = torch.nonzero(counts.uncertain | ~converged).squeeze(1)
    if len(direct):
        # in groups, as the primal form solves: a group's d x d float64 systems at a time
        per = max(1, SOLVE_BYTES // (8 * 4 * (d + targets.shape[1]) ** 2))
        for s in range(0, len(direct), per):
            j = direct[s : s + per]
            own = Parts(parts.order[j], parts.weight[j])
            sums = PrimalSums(store, targets, own).of(torch.arange(len(j), device=j.device))
            coef, intercept, _ = primal_solve(sums, alpha[j])
            theta[:, j] = torch.cat([coef.permute(1, 0, 2), intercept[None]], dim=0)
        # counted again whole: a count patched part by part could round another way
        counts = held_count(theta, None, None)
    return theta, counts, {"cg_steps": cg.steps, "direct_parts": int(len(direct))}


def _plan(store, y, parts, n_classes) -> BlockPlan:
    return plan_blocks(store, y, parts.design, parts.positions, n_classes)
