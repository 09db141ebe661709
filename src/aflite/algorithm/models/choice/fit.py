"""The choice-wise linear model, fitted m times at once.

Item i has choices x_i1..x_iK (standardised, :mod:`aflite.algorithm.numerics.item_store`); one weight
vector w (d,) scores every choice, s_ij = x_ij . w, and a softmax over the item's real choices
gives the probability that choice j is the right one. Each partition's model minimises
``C * sum_i CE(s_i, y_i) + 0.5 * ||w||^2`` over its training items; for two choices this is
scikit-learn's binary ``LogisticRegression(C=C, fit_intercept=False)`` on x_i1 - x_i2. There
is no term per answer position: such a bias would learn where right answers tend to sit,
which the answer-position baseline reports on its own; the model judges choices by content.

All m weight vectors are fitted together by the classifiers' batched L-BFGS
(:func:`aflite.algorithm.numerics.lbfgs.minimize`) over the same block design of items, each
pass multiplying a block's choices by the weights of just the models that train on it.
It is preconditioned by Böhning's bound on the softmax Hessian, ``diag(p) - p p^T <=
(I - 11^T/K) / 2``, which for a shared w is half the within-item scatter of the choices.
A held-out item counts as predicted when no other real choice scores above its right choice
and, where t choices tie for the top, a draw that depends only on the item and the model picks
the right one (probability 1/t). A tie is a guess, as the audits score it: counted as a miss,
items whose choices the features cannot tell apart would score 0, below the chance level the
filter stops at, and the representation bias would read below chance while an artifact is still
there. Resolved by position, a tie would credit the position artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.choice.settings import ChoiceEnsemble
from aflite.algorithm.numerics.blocks import BlockPlan, BlockTask
from aflite.algorithm.numerics.lbfgs import Batch, minimize
from aflite.algorithm.numerics.preconditioner import boehning_preconditioner
from aflite.algorithm.numerics.reduce import add_rows
from aflite.algorithm.numerics.report import SolveReport, shortest_float
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["ChoiceFit", "ItemPasses", "choice_heldout_counts", "fit_choices", "scatter_of"]

_RANGE_ROWS = 4096  # items per task of a pass over the stored rows (masks instead of blocks)


@dataclass
class ChoiceFit:
    """Fitted weights (d, P) in standardised coordinates and how the fits ended (the fits of
    both families of items, :func:`choice_heldout_counts` reads the weights)."""

    weights: torch.Tensor
    report: SolveReport


def _pass(
    x: torch.Tensor, y: torch.Tensor, neg: torch.Tensor, rw: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss (G, s) float64 and gradient (G, s, d) of s models over G groups of n items.

    ``x`` (G, n, K, d) choices, ``y`` (G, n) answers, ``neg`` (G, n, K) 0 for a real choice
    and NEG for padding, ``rw`` (G, n, s or 1) each item's weight in each model's loss,
    ``w`` (G, d, s) the models' weights, best the transpose of a contiguous (G, s, d).

    Both products keep d as the contiguous axis of the small operand and of the result:
    ``X (G, nK, d) @ W^T`` and ``R^T (G, s, nK) @ X`` ran 2.7x and 3x faster on one CPU core
    than with (G, d, s) operands (s = 7, d = 384).

    The scores are computed in float64. With float32 scores the line search stalled well
    short of the tolerance (N=10,000 items, K=4, d=384, m=64: 25 of 64 models stalled near a
    relative gradient of 5e-4 after up to 55 iterations; in float64 all converged within 13,
    and the phase took half the time). The gradient's product stays in float32.
    """
    g, n, k, d = x.shape
    s = w.shape[2]
    flat = x.view(g, n * k, d)
    scores = torch.bmm(flat.double(), w.double()).view(g, n, k, s)
    logp = torch.log_softmax(scores + neg[..., None], dim=2)
    at = y[:, :, None, None].expand(g, n, 1, s)
    picked = torch.gather(logp, 2, at).squeeze(2)
    loss = -(picked * rw).sum(dim=1)
    resid = logp.exp_().to(x.dtype)
    resid.scatter_add_(2, at, resid.new_full((1, 1, 1, 1), -1.0).expand(g, n, 1, s))
    resid.mul_(rw[:, :, None, :])
    return loss, torch.bmm(resid.view(g, n * k, s).transpose(1, 2), flat)


class ItemPasses:
    """The passes of one phase over stored items: over a block plan's tasks, or over all
    stored items with an (N_store, P) training mask. ``sums`` and ``scatter_gram`` are sums
    over items; a phase over shards of the items (:mod:`~aflite.algorithm.models.sharded_items`) adds each shard's."""

    def __init__(
        self,
        store: FeatureStore,
        y: torch.Tensor,
        neg: torch.Tensor,
        k: int,
        plan: BlockPlan | None,
        train: torch.Tensor | None = None,
    ) -> None:
        self.store, self.y, self.neg, self.k, self.plan = store, y, neg, k, plan
        self.d = store.dim // k
        if plan is not None:
            self.tasks = [(t, neg[t.pos]) for t in plan.tasks]
            self.n_partitions, self.part_sizes = plan.n_partitions, plan.part_sizes
            self.n_predicted = float(sum(int(t.w.sum()) for t in plan.tasks))
        else:
            self.n_partitions, self.part_sizes = train.shape[1], train.sum(dim=0)
            self.n_predicted = float(store.n_stored)

    def rows(self, task: BlockTask) -> torch.Tensor:
        x = self.plan.rows(task)
        return x.view(*x.shape[:2], self.k, self.d)

    def sums(
        self, theta: torch.Tensor, slot: torch.Tensor | None, train: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss (p+1,) float64 and gradient (p+1, d) sums over the items of the models whose
        weights are the rows of ``theta`` (row p: nothing). Blocks: ``slot`` (P+1,) maps a
        model id to its row (p for a dropped row). Mask: ``train`` (N_store, p) is the live
        models' training mask."""
        p, d = theta.shape
        loss = torch.zeros(p + 1, dtype=torch.float64, device=theta.device)
        grad = torch.zeros((p + 1, d), dtype=theta.dtype, device=theta.device)
        if self.plan is not None:
            ext = torch.cat([theta, theta.new_zeros(1, d)])

            def run(item):
                task, neg = item
                idx = slot[task.members]
                part_loss, part_grad = _pass(
                    self.rows(task), task.y, neg, task.w[:, :, None], ext[idx].transpose(1, 2)
                )
                return idx.reshape(-1), part_loss.reshape(-1), part_grad.reshape(-1, d)

            for idx, part_loss, part_grad in workers().map(run, self.tasks):
                add_rows(loss, idx, part_loss)
                add_rows(grad, idx, part_grad)
        else:
            w = theta.T[None]

            def run_range(span):
                s, e = span
                x = self.store.read(s, e).view(1, e - s, self.k, self.d)
                return _pass(x, self.y[None, s:e], self.neg[None, s:e], train[None, s:e], w)

            for part_loss, part_grad in workers().map(run_range, self.store.ranges(_RANGE_ROWS)):
                loss[:p] += part_loss[0]
                grad[:p] += part_grad[0]
        return loss, grad

    def scatter_gram(self, min_items: int) -> tuple[torch.Tensor, float]:
        """(d, d) float64 within-item scatter of the choices, sum_i sum_j (x_ij - xbar_i)
        (x_ij - xbar_i)^T over real choices, from the first tasks holding ``min_items``
        items (the blocks are random items), and how many items that is."""
        if self.plan is not None:
            chosen, items = [], 0
            for task, neg in self.tasks:
                if items >= min_items:
                    break
                chosen.append((self.rows(task), neg, task.w))
                items += int(task.w.sum())
        else:
            chosen = [
                (
                    self.store.read(s, e).view(1, e - s, self.k, self.d),
                    self.neg[None, s:e],
                    torch.ones((1, e - s), device=self.store.device),
                )
                for s, e in self.store.ranges(_RANGE_ROWS)[:1]
            ]
            items = sum(int(c[2].sum()) for c in chosen)
        return scatter_of(chosen, self.d, self.store.device), float(items)


def scatter_of(chosen: list, d: int, device: torch.device) -> torch.Tensor:
    """The (d, d) float64 within-item scatter of ``chosen`` (choices (G, n, K, d), their
    ``neg`` (G, n, K) and item weights (G, n)), added in order."""

    def run(item):
        x, neg, w = item
        real = (neg == 0).to(x.dtype) * w[:, :, None]  # (G, n, K)
        mean = (x * real[..., None]).sum(dim=2, keepdim=True) / real.sum(2).clamp_min(1)[
            ..., None, None
        ]
        z = ((x - mean) * real[..., None]).reshape(-1, d)
        return (z.T @ z).double()

    gram = torch.zeros((d, d), dtype=torch.float64, device=device)
    for part in workers().map(run, chosen):
        gram += part
    return gram


def fit_choices(
    store: FeatureStore,
    y: torch.Tensor,
    neg: torch.Tensor,
    model: ChoiceEnsemble,
    *,
    train: torch.Tensor | None = None,
    plan: BlockPlan | None = None,
    passes: Any = None,
) -> ChoiceFit:
    """Fit one choice-wise model per training part: the columns of ``train`` (N_store, P)
    0/1, or the parts of a block ``plan``, or of ``passes`` over shards of the items
    (:class:`~aflite.algorithm.models.sharded_items.ShardedItems`). ``store`` holds N rows of K*d standardised
    features, ``y`` (N_store,) the answers, ``neg`` (N_store, K) 0 for a real choice and NEG
    for padding."""
    k = neg.shape[1]
    prob = passes if passes is not None else ItemPasses(store, y, neg, k, plan, train)
    d, dev = prob.d, store.device
    p, sizes = prob.n_partitions, prob.part_sizes
    t = float(sizes.mean())
    gram, used = prob.scatter_gram(max(int(t), 4 * d))
    binv = boehning_preconditioner(gram, 0.5 * model.C * t / max(used, 1.0), t)
    flops = [2.0 * used * k * d * d + binv.build_flops]
    masks = plan is None and passes is None

    def objective(v: dict[str, torch.Tensor], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        flops[0] += 4.0 * t * k * d * x.shape[0]
        if masks:
            loss, grad = prob.sums(x, None, v["train"])
        else:
            slot = torch.full((p + 1,), len(b.active), dtype=torch.int64, device=dev)
            slot[b.active] = torch.arange(len(b.active), device=dev)
            loss, grad = prob.sums(x, slot, None)
        n = x.shape[0]
        loss, grad = loss[:n], grad[:n].to(x.device).mul_(model.C).add_(x)
        return model.C * loss.to(x.device) + 0.5 * (x * x).sum(dim=1, dtype=torch.float64), grad

    def precond(*vs: torch.Tensor) -> list[torch.Tensor]:
        flops[0] += binv.flops(vs[0].shape[0]) * len(vs)
        return [binv(v) for v in vs]

    b = Batch(p, dev, pdim={"train": 1}, outputs=("theta",), hist_dims=((0,), (0, 0)))
    if masks:
        b.set(train=train)
    minimize(
        b,
        torch.zeros((p, d), dtype=torch.float32, device=dev),
        objective,
        precond,
        tol=model.tol,
        max_iter=model.max_iter,
        history=model.history,
    )
    out = b.outcome(flops[0])
    report = SolveReport(
        solver="choice",
        iterations=int(out.iters.max()),
        mean_iterations=float(out.iters.double().mean()),
        residual=shortest_float(out.resid.max()),
        n_capped=int((out.iters >= model.max_iter).sum()),
        n_stalled=int(out.stalled.sum()),
        flops=out.flops + 2.0 * prob.n_predicted * k * d * p,  # + the held-out margins
        products="dense" if masks else "blocks",
        n_left_out=0,
    )
    return ChoiceFit(b.out("theta").T.contiguous(), report)


def _draws(keys: torch.Tensor, p: int) -> torch.Tensor:
    """(n, P) int64 pseudo-random draws in [0, 2^32), one per item ``keys`` (n,) (its input
    position, so not its place in storage or in a thread's task) and model 0..P-1: a hash,
    so a run is the same at any thread count and after compaction or a resume."""
    j = torch.arange(p, device=keys.device, dtype=torch.int64)
    # constants below 2^31 and 32-bit masks keep every product inside int64
    h = (keys[:, None] & 0xFFFFFFFF) * 0x27D4EB2F + j[None, :] * 0x165667B1 + 0x9E3779B
    h &= 0xFFFFFFFF
    for _ in range(2):
        h = ((h ^ (h >> 16)) * 0x045D9F3B) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _hits(
    x: torch.Tensor, y: torch.Tensor, neg: torch.Tensor, w: torch.Tensor, keys: torch.Tensor
) -> torch.Tensor:
    """(n, P) 1 where a model picks the right choice: no other real choice scores above it,
    and of the t choices tied for the top the draw for (item, model) falls on it (1/t).
    ``x`` (n, K, d), ``keys`` (n,) the items' input positions. Margins are products of
    differences, so identical choices tie exactly."""
    n, k, d = x.shape
    x = x.to(w.dtype)  # float64 weights (the exact family) predict in float64
    right = torch.gather(x, 1, y[:, None, None].expand(n, 1, d))
    margin = ((right - x).view(n * k, d) @ w).view(n, k, -1)
    others = ((torch.arange(k, device=x.device)[None, :] != y[:, None]) & (neg == 0))[:, :, None]
    beaten = ((margin < 0) & others).any(dim=1)
    tied = 1 + ((margin == 0) & others).sum(dim=1)
    won = _draws(keys, w.shape[1]) % tied == 0
    return (~beaten & won).to(torch.float32)


def choice_heldout_counts(
    store: FeatureStore,
    y: torch.Tensor,
    neg: torch.Tensor,
    fit: ChoiceFit,
    *,
    heldout: torch.Tensor | None = None,
    plan: BlockPlan | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per stored item: right choices picked out by the models that held it out, and how
    many did (``heldout`` (N_store, P) or the held-out blocks of ``plan``)."""
    k = neg.shape[1]
    d = store.dim // k
    w = fit.weights
    dev = w.device
    keys = torch.as_tensor(store.rows, device=dev)
    correct = torch.zeros(store.n_stored, dtype=torch.float32, device=dev)
    held = torch.zeros(store.n_stored, dtype=torch.float32, device=dev)
    if plan is not None:

        def run(task):
            x = plan.rows(task)
            g, n, _ = x.shape
            pos = task.pos.reshape(-1)
            hit = _hits(x.view(g * n, k, d), task.y.reshape(-1), neg[pos], w, keys[pos])
            hit = hit.view(g, n, -1)
            return task.pos, task.w > 0, (hit * task.held[:, None, :]).sum(2), task.held.sum(1)

        for pos, real, hits, n_held in workers().map(run, plan.tasks):
            correct[pos[real]] = hits[real]
            held[pos[real]] = n_held[:, None].expand_as(hits)[real]
        return correct, held

    def run_range(span):
        s, e = span
        hit = _hits(store.read(s, e).view(e - s, k, d), y[s:e], neg[s:e], w, keys[s:e])
        correct[s:e] = (hit * heldout[s:e]).sum(dim=1)

    for _ in workers().map(run_range, store.ranges(_RANGE_ROWS)):
        pass
    return correct, heldout.sum(dim=1)
