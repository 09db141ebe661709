"""The exact least-squares family over shards of rows held elsewhere (a distributed backend's):
every part's primal system solved by conjugate gradients, never formed.

Each part j solves ``(Xc_j^T Xc_j + alpha t_j I) W_j = Xc_j^T Yc_j``. A step applies every
part's matrix at once: each shard multiplies its rows of each block by the vectors of the
parts that train on the block (``X_b^T X_b V``, in float64 on the float32 rows), and the
shards' (m, C, d) sums are added along their tree (:mod:`aflite.algorithm.numerics.shards`);
a step moves m*C*d numbers each way per worker, never a row. A part's rows are a random t/n
sample of the current rows, so one factorisation of their covariance plus the penalty (d x
d, once a phase) preconditions every part: the residual falls about 4.5x a step.

The iterations run until every residual is ``TOL`` (1e-12) of its right-hand side. Each
part's error is then bounded by its true residual over ``alpha t`` (one more pass), which
certifies its held-out predictions where the rows are (:mod:`.heldout`): a certified
prediction is the exact solution's, so the counts are those one process gets from any
form (:mod:`.fit`). A part with a prediction its bound does not certify, or whose
iterations stalled, is solved directly from its own sums ((d+C+1)^2 numbers a shard,
gathered for that part alone), and every prediction is counted once more.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from aflite._internal.transfer import to_device, to_host
from aflite.algorithm.models.contract import PhaseCounts
from aflite.algorithm.models.ridge.direct import REFINE_STEPS, SOLVE_BYTES, PartSums, primal_solve
from aflite.algorithm.models.ridge.fit import one_hot_pm
from aflite.algorithm.models.ridge.heldout import Rows, heldout_stats
from aflite.algorithm.models.ridge.model import RidgeModel
from aflite.algorithm.models.ridge.settings import RidgeEnsemble
from aflite.algorithm.models.ridge.sparse import TOL
from aflite.algorithm.numerics.blocks import BlockDesign, part_classes, plan_blocks
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.report import SolveReport
from aflite.algorithm.numerics.shard_set import (
    Shard,
    design_payload,
    on,
    shard_design,
    shards_of,
)

__all__ = ["MAX_STEPS", "ShardedRidgeModel"]

# preconditioned, a step cuts the residual about 4.5x: a part still short of TOL after this
# many has stalled (a float64 floor above TOL), and is solved directly
MAX_STEPS = 100
STALL_STEPS = 10
KEEP64_BYTES = 1 << 30  # a shard's rows kept in float64 for the phase up to this size
# A shard's rows of a block applied as their d x d Gram matrix (formed once a phase) where
# it has more than d/2 of them: 2 d^2 a vector, against 4 b d from the rows; at d = 256 and
# blocks of t/8 rows a step costs a few hundredth of the rows' products. Up to this size.
GRAM_BYTES = 1 << 30
# the preconditioner's covariance is of the first rows the phase dealt, this many a feature:
# random rows, whatever their shards; it steers the iterations, never the answer. Steps of a
# phase (N=20,000, d=256, t=2,000, m=32): 21 from 2 rows a feature, 16 from 8, 14 from every row
SAMPLE_PER_DIM = 8


class ShardedRidgeModel:
    """The exact family's phases over shards (see the module docstring). Its blocks, their
    size and whether they are kept from phase to phase are :class:`.RidgeModel`'s, so the
    partitions are those one process draws."""

    def __init__(self, model: RidgeEnsemble | None = None) -> None:
        self.model = model or RidgeEnsemble()
        self.local = RidgeModel(self.model)

    def attach(self, store: Any, raw: Any, y: torch.Tensor, n_classes: int) -> None:
        self.store, self.y, self.n_classes = store, y, n_classes
        self.local.attach(store, raw, y, n_classes)
        if self.model.form in ("dual", "sparse") and not getattr(self, "_told", False):
            self._told = True
            warnings.warn(
                f"RidgeEnsemble(form={self.model.form!r}) runs in one process: over shards "
                "every part is solved by conjugate gradients on the primal system (its blocks "
                f"as the {self.model.form} form deals them; the same held-out counts)",
                stacklevel=2,
            )

    def block_rows(self, train_size: int, n_partitions: int) -> int:
        return self.local.block_rows(train_size, n_partitions)

    def keeps_blocks(self) -> bool:
        return self.local.keeps_blocks()

    def score(self, train, heldout, current) -> PhaseCounts:
        raise ValueError("the exact family over shards takes block partitions only")

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        store, dev, c = self.store, positions.device, self.n_classes
        shards = shards_of(store, self.y)
        payload = design_payload(design, positions, store)
        incidence = design.incidence.cpu()
        neg, _ = part_classes(design, self.y[positions[design.order]], c)
        sizes = design.part_sizes().to(torch.float64)
        alpha = float(self.model.alpha)
        sample = SAMPLE_PER_DIM * store.dim
        s1, sy, ysum = _to(shards.reduce(_setup, incidence, c, each=payload), dev)
        xx, xsum, n = _to(shards.reduce(_sample, sample, each=payload), dev)
        cg = _PrimalCG(shards, sizes, alpha, s1, sy, ysum, _preconditioner(xx, xsum, n, alpha))
        converged = cg.solve(TOL)
        theta = cg.theta()
        bounds = cg.bounds()
        counts, unsure = self._count(shards, theta, neg, bounds, cg.xbar)
        direct = torch.nonzero(unsure | ~converged).squeeze(1)
        if len(direct):
            d = store.dim
            per = max(1, SOLVE_BYTES // (8 * 4 * (d + c) ** 2))
            for s in range(0, len(direct), per):
                j = direct[s : s + per]
                z = shards.reduce(_part_sums, j.cpu(), c).to(dev)
                coef, intercept, _ = primal_solve(_sums(z, d), alpha * sizes[j], REFINE_STEPS)
                theta[:, j] = torch.cat([coef.permute(1, 0, 2), intercept[None]], dim=0)
            # counted again whole: a count patched part by part could round another way
            counts, _ = self._count(shards, theta, neg, None, None)
        correct, held = counts
        report = SolveReport(
            "ridge-cg", form="cg", alpha=alpha, cg_steps=cg.steps, direct_parts=len(direct)
        )
        return PhaseCounts(correct, held, report.to_dict())

    def _count(self, shards, theta, neg, bounds, means):
        """Per stored row: correct held-out predictions and times held out; (P,) the parts
        with a prediction the bounds do not certify (None: counted in float64 where close)."""
        store, dev = self.store, theta.device
        correct = torch.zeros(store.n_stored, dtype=torch.float64, device=dev)
        held = torch.zeros_like(correct)
        unsure = torch.zeros(theta.shape[1], dtype=torch.bool, device=dev)
        for rows, c, h, u in shards.map(_heldout, theta, neg, bounds, means):
            pos = to_device(store.positions(rows), dev)
            correct[pos] = to_device(c, dev)
            held[pos] = to_device(h, dev)
            if u is not None:
                unsure |= to_device(u, dev)
        return (correct, held), unsure

    def describe(self) -> str:
        return f"{self.model!r}, every part by conjugate gradients over shards"


def _to(values: tuple, device: torch.device) -> tuple:
    return tuple(v.to(device) for v in values)


def _sums(z: torch.Tensor, d: int) -> PartSums:
    """A group of parts' sums from their (g, w, w) ``[X 1 Y]^T [X 1 Y]``."""
    return PartSums(z[:, :d, :d].contiguous(), z[:, d, :d], z[:, :d, d + 1 :].contiguous(),
                 z[:, d, d + 1 :], z[:, d, d])  # fmt: skip


def _preconditioner(xx, xsum, n, alpha: float) -> torch.Tensor:
    """(d, d) float64 inverse of ``S + alpha I``, S the covariance of the current rows."""
    mean = xsum / n
    m = xx / n - torch.outer(mean, mean)
    m.diagonal().add_(alpha)
    return torch.cholesky_inverse(torch.linalg.cholesky(m))


class _PrimalCG:
    """Conjugate gradients on every part's primal system at once, one independent iteration
    per (part, class) column; each step one reduction over the shards."""

    def __init__(self, shards, sizes, alpha, s1, sy, ysum, inverse) -> None:
        self.shards, self.t, self.lam, self.inverse = shards, sizes, alpha * sizes, inverse
        self.xbar = s1 / sizes[:, None]
        self.ybar = ysum / sizes[:, None]
        # Xc^T Yc = sum x y^T - t xbar ybar^T
        self.b = sy - sizes[:, None, None] * self.ybar[:, :, None] * self.xbar[:, None, :]
        self.bb = (self.b * self.b).sum(dim=2)
        self.x = torch.zeros_like(self.b)
        self.r = self.b.clone()
        self.q = self._precondition(self.r)
        self.rz = (self.r * self.q).sum(dim=2)
        self.steps = 0

    def _op(self, v: torch.Tensor) -> torch.Tensor:
        out = self.shards.reduce(_apply, v.cpu()).to(v.device)
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
                # a column whose residual fell less than 10x in the last STALL_STEPS steps is
                # ill-conditioned: solved directly
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
        residual's norm (one more pass) over ``alpha t``."""
        r = self.b - self._op(self.x)
        return torch.linalg.vector_norm(r, dim=2).amax(dim=1) / self.lam

    def theta(self) -> torch.Tensor:
        """(d+1, P, C) weights and intercepts."""
        intercept = self.ybar - (self.x * self.xbar[:, None, :]).sum(dim=2)
        return torch.cat([self.x.permute(2, 0, 1), intercept[None]], dim=0)


# --- what each shard does ---


def _setup(shard: Shard, incidence, n_classes, rows, block, slot):
    """Plan the shard's rows of the phase's blocks (each task's rows kept for the phase as
    their Gram matrices, or in float64, or read again each step); per part its sums of x, of
    y x^T and of y."""
    store = shard.store
    d, dev = store.dim, store.device
    design, positions = shard_design(shard, rows, block, slot, incidence)
    plan = plan_blocks(store, shard.y, design, positions, n_classes, keep_rows=False)
    targets = one_hot_pm(shard.y, n_classes)
    p, c = plan.n_partitions, n_classes
    out = torch.zeros((p + 1, d + c * d + c), dtype=torch.float64, device=dev)
    grams, rows64, room, keep = [], [], GRAM_BYTES, KEEP64_BYTES
    for task in plan.tasks:
        (g, b), s = task.pos.shape, task.members.shape[1]
        gram, x = None, None
        if s:  # blocks no part trains on take no products
            x = plan.rows(task).double()
            w = task.w.double()
            yw = targets[task.pos] * w[:, :, None]  # (g, b, C)
            u = torch.cat([(x * w[:, :, None]).sum(dim=1),
                           torch.bmm(yw.transpose(1, 2), x).flatten(1), yw.sum(dim=1)], dim=1)  # fmt: skip
            members = task.members.reshape(-1)
            add_rows(out, members, u[:, None, :].expand(g, s, -1).reshape(g * s, -1))
            if d <= 2 * b and g * d * d * 8 <= room:
                gram = torch.bmm(x.transpose(1, 2), x * w[:, :, None])
                room -= g * d * d * 8
                x = None
            elif g * b * d * 8 <= keep:
                keep -= g * b * d * 8
            else:
                x = None
        grams.append(gram)
        rows64.append(x)
    shard.state.update(plan=plan, gram=grams, x64=rows64, rows=np.asarray(rows),
                       positions=positions, incidence=on(shard, incidence))  # fmt: skip
    shard.state["block"] = torch.full((store.n_stored,), -1, dtype=torch.int64, device=dev)
    shard.state["block"][positions] = on(shard, np.asarray(block, dtype=np.int64))
    out = out[:p]
    return out[:, :d], out[:, d : d + c * d].view(p, c, d), out[:, d + c * d :]


def _sample(shard: Shard, sample: int, rows, block, slot):
    """x^T x, the sum of x and the count of the shard's rows among the first ``sample`` the
    phase dealt."""
    store = shard.store
    mine = np.asarray(rows)[np.asarray(slot) < sample]
    x = store.gather(on(shard, store.positions(mine))).double()
    count = torch.tensor(float(len(mine)), dtype=torch.float64, device=store.device)
    return x.T @ x, x.sum(dim=0), count


def _apply(shard: Shard, v: torch.Tensor) -> torch.Tensor | None:
    """(P, C, d): ``X_j^T X_j`` of the shard's rows times each part's C columns."""
    plan, grams, xs = shard.state["plan"], shard.state["gram"], shard.state["x64"]
    if not plan.tasks:
        return None
    v = on(shard, v)
    p, c, d = v.shape
    ext = torch.cat([v.reshape(p, c * d), v.new_zeros(1, c * d)])
    out = torch.zeros((p + 1, c * d), dtype=torch.float64, device=v.device)
    for task, gram, x in zip(plan.tasks, grams, xs):
        g, s = task.members.shape
        if not s:
            continue
        vs = ext[task.members].view(g, s * c, d)
        if gram is not None:
            z = torch.bmm(vs, gram)
        else:
            x = x if x is not None else plan.rows(task).double()
            z = torch.bmm(vs, x.transpose(1, 2)).mul_(task.w.double()[:, None, :])
            z = torch.bmm(z, x)
        add_rows(out, task.members.reshape(-1), z.view(g * s, c * d))
    return out[:p].view(p, c, d)


def _held_of(shard: Shard, incidence: torch.Tensor):
    block = shard.state["block"]
    held = torch.cat([~incidence, torch.zeros_like(incidence[:1])])

    def held_of(pos: torch.Tensor) -> torch.Tensor:
        b = block[pos]
        return held[torch.where(b >= 0, b, len(held) - 1)]

    return held_of


def _heldout(shard: Shard, theta, neg, bounds, means):
    """The shard's current rows: correct held-out predictions, times held out, and (with
    ``bounds``) the parts with a prediction the bounds do not certify."""
    theta, neg, bounds, means = (on(shard, v) for v in (theta, neg, bounds, means))
    held_of = _held_of(shard, shard.state["incidence"])
    rows = Rows(shard.store, None)
    counts = heldout_stats(rows, shard.y, theta, neg, held_of, bounds=bounds, means=means)
    pos = shard.state["positions"]
    uncertain = None if counts.uncertain is None else to_host(counts.uncertain)
    return shard.state["rows"], to_host(counts.correct[pos]), to_host(counts.held[pos]), uncertain


def _part_sums(shard: Shard, parts: torch.Tensor, n_classes: int) -> torch.Tensor | None:
    """(g, w, w) float64 ``[X 1 Y]^T [X 1 Y]`` of the shard's rows of each part in ``parts``."""
    store = shard.store
    dev, d = store.device, store.dim
    block, inc = shard.state["block"], shard.state["incidence"]
    targets = one_hot_pm(shard.y, n_classes)
    w = d + 1 + n_classes
    out = torch.zeros((len(parts), w, w), dtype=torch.float64, device=dev)
    pos = shard.state["positions"]
    for k, j in enumerate(parts.tolist()):
        mine = pos[inc[block[pos], j]]
        if len(mine) == 0:
            continue
        z = torch.empty((len(mine), w), dtype=torch.float64, device=dev)
        z[:, :d] = store.gather(mine)
        z[:, d] = 1.0
        z[:, d + 1 :] = targets[mine]
        out[k] = z.T @ z
    return out
