"""One phase's logistic classifiers: choose the solver, fit, and count correct held-out
predictions.

Every classifier of a phase minimises ``C * sum_i CE(x_i W + b, y_i) + 0.5 * ||W||^2`` over its
training part (the intercept is not penalised; features are standardised over all input rows),
the objective of scikit-learn's ``LogisticRegression(C=C)``. Two exact solvers share one
batched L-BFGS (:mod:`aflite.algorithm.numerics.lbfgs`):

* ``primal`` (:mod:`.primal`): the weights of all m classifiers are stacked into one ``d x
  (m*C)`` matrix, so a step is two compute-bound products over the current set; a 0/1 mask,
  or a block plan (:mod:`.block_pass`), says which rows train which classifier.
  Preconditioned by Böhning's bound on the softmax Hessian with the expected Gram matrix of
  a training part.
* ``span`` (:mod:`.span`): when a training part is smaller than the feature dimension, each
  solution lies in the span of its own training rows (the representer theorem); the solver
  works with the t x t Gram matrix of each part, preconditioned by that part's exact Böhning
  bound.

A classifier stops when the norm of its gradient, measured in the preconditioner's metric,
has fallen to ``tol`` times its value at zero; a phase stops when all have, or at
``max_iter`` (a warning names how far from converged the worst classifier was).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.linear.block_pass import gram_flops, sample_gram
from aflite.algorithm.models.linear.primal import boehning_inverse, solve_primal, stacked_logits
from aflite.algorithm.models.linear.settings import LinearEnsemble
from aflite.algorithm.models.linear.span import solve_span
from aflite.algorithm.numerics.blocks import BlockPlan
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.preconditioner import Preconditioner, boehning_preconditioner
from aflite.algorithm.numerics.report import SolveReport, shortest_float
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "Ensemble",
    "choose_solver",
    "fit_ensemble",
    "heldout_counts",
    "predict_all",
    "use_gathered_rows",
]

_SPAN_BYTES = 1 << 30  # every part's Gram matrix and preconditioner, counted at float32
_GATHER_BYTES = 1 << 30  # every part's training rows, gathered, float32
SPAN_TOL_FACTOR = 0.1
UNUSABLE = 10.0  # a classifier that ended further than this from its tolerance predicts nothing


def choose_solver(
    model: LinearEnsemble, train_size: int, dim: int, n_partitions: int, shards: int = 1
) -> str:
    """``span`` when a training part is at most a quarter of the feature dimension and the
    parts' float32 t x t Gram matrices fit in 1 GiB (the span solver then holds them, and
    their preconditioner, in float64: about 5 GiB at the limit); otherwise ``primal``. Over
    more than one shard of rows, ``primal``: a part's t x t Gram matrix would gather rows
    from every shard.

    On one core the primal solver's block pass was 1.6x faster than the span solver at
    t/d = 0.49 (N=5,000, d=1,024, t=500) and 2.1x at 0.37 (SNLI n-grams, d=2,048, t=750);
    the span solver 3.7x faster at 0.12 (t=250)."""
    if model.solver == "span" and shards > 1:
        raise ValueError(
            f"LinearEnsemble(solver='span') fits on one shard of rows, and these rows are in "
            f"{shards}: use solver='primal' or 'auto'"
        )
    if model.solver != "auto":
        return model.solver
    if shards > 1:
        return "primal"
    fits = 2 * n_partitions * train_size * train_size * 4 <= _SPAN_BYTES
    return "span" if 4 * train_size <= dim and fits else "primal"


def use_gathered_rows(
    n_stored: int,
    train_size: int,
    dim: int,
    n_classes: int,
    n_partitions: int,
    device: torch.device,
) -> bool:
    """Whether the primal solver should work on each part's gathered training rows rather
    than on every stored row.

    The dense pass does N/t times the useful work, at the full matrix-product rate; the
    gathered pass does only the useful work, in P small products that read the gathered rows
    and are memory-bound when C is small. Measured on one CPU core (N=6,000-20,000,
    d=256-1,024, m=64), the gathered pass is faster when N*C > 1.34*t*(C + 37): 2.6x at
    20 classes, 1.6x at 10, 0.5x at 3 classes and t = 10%. Chosen with a margin; CUDA keeps
    the dense pass.
    """
    fits = n_partitions * train_size * dim * 4 <= _GATHER_BYTES
    cheaper = n_stored * n_classes >= 1.5 * train_size * (n_classes + 37)
    return device.type == "cpu" and fits and cheaper


def _parts(train: torch.Tensor, t_max: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(P, t_max) store positions of each part's training rows and their 0/1 weights
    (0 where a part is shorter than the longest, of ``t_max`` rows)."""
    order = torch.argsort(train.T, dim=1, descending=True, stable=True)[:, :t_max]
    return order, torch.gather(train.T, 1, order)


def _absent_classes(y: torch.Tensor, train: torch.Tensor, n_classes: int) -> torch.Tensor:
    onehot = torch.nn.functional.one_hot(y, n_classes).to(torch.float32)
    counts = onehot.T @ train  # (C, P)
    return torch.where(counts.T > 0, 0.0, NEG)


@dataclass
class Ensemble:
    """Fitted classifiers: weights (d+1, P, C) in standardised coordinates (intercept last)
    and the (P, C) logit offsets that rule out classes absent from a training part."""

    theta: torch.Tensor
    neg: torch.Tensor
    report: SolveReport
    # (P,) classifiers that ended far from converged (stalled or capped at more than
    # ``UNUSABLE`` times the tolerance): their predictions are left out of every score
    unusable: torch.Tensor | None = None

    def usable(self, held: torch.Tensor) -> torch.Tensor:
        """A held-out mask (..., P) without the columns of unusable classifiers."""
        if self.unusable is None or not bool(self.unusable.any()):
            return held
        return held * (~self.unusable).to(held.dtype)

    def logits(self, xb: torch.Tensor) -> torch.Tensor:
        """(n, P, C) logits of standardised rows."""
        return stacked_logits(xb, self.theta, self.neg)


def fit_ensemble(
    store: FeatureStore,
    y: torch.Tensor,
    train: torch.Tensor | None,
    n_classes: int,
    model: LinearEnsemble,
    *,
    binv: Preconditioner | None = None,
    current: torch.Tensor | None = None,
    plan: BlockPlan | None = None,
) -> tuple[Ensemble, Preconditioner | None]:
    """Fit one classifier per column of ``train`` (N_store, P), a 0/1 float mask, or per
    training part of a block ``plan`` (then ``train`` may be None).

    ``binv`` is the primal preconditioner to reuse (built from the rows marked in
    ``current``, default all stored rows, when None; a block plan estimates it from a
    sample of its rows). Returns the ensemble and the preconditioner the primal solver used
    (None for the span solver).
    """
    # a plan over shards runs the primal solver (see choose_solver)
    shards = getattr(plan, "n_shards", 1)
    if plan is not None:
        p, sizes, neg = plan.n_partitions, plan.part_sizes, plan.neg
        t = int(round(float(sizes.mean())))
        if train is None and choose_solver(model, t, store.dim, p, shards) == "span":
            train = plan_mask(plan, store)
    else:
        p = train.shape[1]
        sizes = train.sum(dim=0)
        neg = _absent_classes(y, train, n_classes)
    t, t_max = int(round(float(sizes.mean()))), int(sizes.max())
    solver = choose_solver(model, t, store.dim, p, shards)
    reg_c = model.C / 2 if n_classes == 2 else model.C  # = a binary fit with C
    if solver == "span":
        order, weight = _parts(train, t_max)
        coef, intercept, out = solve_span(
            store,
            y,
            order,
            weight,
            neg,
            reg_c=reg_c,
            tol=model.tol * SPAN_TOL_FACTOR,
            max_iter=model.max_iter,
            history=model.history,
        )
        theta = _weights_from_span(store, order, weight, coef, intercept)
        binv = None
        flops = 2.0 * store.n_stored * store.dim * p * n_classes  # W = X^T A
        products = "span"
    else:
        flops = 0.0
        if binv is None and plan is not None:
            # the expected Gram matrix of a part estimated from a random sample of the current
            # rows: four times the dimension is plenty for a preconditioner (it changes the
            # speed, never the optimum) and costs a fraction of a pass over the set at scale
            gram, used = sample_gram(plan, max(t, 4 * (store.dim + 1)))
            binv = boehning_preconditioner(gram, 0.5 * reg_c * t / used, t)
            flops += gram_flops(plan, used) + binv.build_flops
        elif binv is None:
            cur = (
                current if current is not None else torch.ones(store.n_stored, device=store.device)
            )
            binv = boehning_inverse(store, cur, t, reg_c)
            flops += 2.0 * float(cur.sum()) * store.dim**2 + binv.build_flops
        gather = plan is None and use_gathered_rows(
            store.n_stored, t_max, store.dim, n_classes, p, store.device
        )
        products = (
            ("sparse" if plan.sparse else "blocks")
            if plan is not None
            else "gathered"
            if gather
            else "dense"
        )
        theta, out = solve_primal(
            store,
            y,
            train,
            neg,
            binv=binv,
            reg_c=reg_c,
            tol=model.tol,
            max_iter=model.max_iter,
            history=model.history,
            gathered=_parts(train, t_max) if gather else None,
            plan=plan,
        )
    n_pred = store.n_stored if plan is None else float(plan.n_rows)
    tol = model.tol * (SPAN_TOL_FACTOR if solver == "span" else 1.0)
    unusable = (out.resid > UNUSABLE * tol) & (out.stalled | (out.iters >= model.max_iter))
    report = SolveReport(
        solver=solver,
        iterations=int(out.iters.max()),
        mean_iterations=float(out.iters.double().mean()),
        residual=shortest_float(out.resid.max()),
        n_capped=int((out.iters >= model.max_iter).sum()),
        n_stalled=int(out.stalled.sum()),
        flops=flops + out.flops + 2.0 * n_pred * store.dim * p * n_classes,  # + predict
        products=products,
        n_left_out=int(unusable.sum()),
    )
    return Ensemble(theta, neg, report, unusable), binv


def plan_mask(plan: BlockPlan, store: FeatureStore) -> torch.Tensor:
    """(N_store, P) training mask of a block plan."""
    mask = torch.zeros(
        (store.n_stored, plan.n_partitions), dtype=torch.float32, device=store.device
    )
    for task in plan.tasks:
        real = task.w > 0
        inc = 1.0 - task.held
        mask[task.pos[real]] = inc[:, None, :].expand(*task.pos.shape, -1)[real]
    return mask


def heldout_counts(
    store: FeatureStore, y: torch.Tensor, ensemble: Ensemble, heldout: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per stored row: correct predictions where ``heldout`` (N_store, P) is 1, and how
    often it was held out. Predictions are made chunk by chunk and never stored."""
    correct = torch.zeros(store.n_stored, dtype=torch.float32, device=store.device)

    def run(span: tuple[int, int]) -> None:
        s, e = span
        pred = ensemble.logits(store.read(s, e)).argmax(dim=2)
        correct[s:e] = ((pred == y[s:e, None]).to(torch.float32) * held[s:e]).sum(dim=1)

    held = ensemble.usable(heldout)
    for _ in workers().map(run, store.ranges(8192)):
        pass
    return correct, held.sum(dim=1)


def predict_all(store: FeatureStore, ensemble: Ensemble) -> torch.Tensor:
    """(N_store, P) predicted class of every stored row under every classifier."""
    out = []
    for _, _, xb in store.chunks():
        out.append(ensemble.logits(xb).argmax(dim=2))
    return torch.cat(out)


def _weights_from_span(
    store: FeatureStore,
    order: torch.Tensor,
    weight: torch.Tensor,
    coef: torch.Tensor,
    intercept: torch.Tensor,
) -> torch.Tensor:
    """theta (d+1, P, C) from span coefficients: W_j = Z_j^T A_j."""
    p, t_max = order.shape
    c = coef.shape[1]
    n = store.n_stored
    scattered = torch.zeros((n, p, c), dtype=torch.float32, device=store.device)
    cols = torch.arange(p, device=store.device)[:, None].expand(p, t_max)
    values = (coef * weight[:, None, :]).transpose(1, 2).reshape(-1, c).to(torch.float32)
    scattered.index_put_((order.reshape(-1), cols.reshape(-1)), values, accumulate=True)
    theta = torch.zeros((store.dim + 1, p, c), dtype=torch.float32, device=store.device)
    flat = theta[: store.dim].view(store.dim, p * c)
    for s, e, xb in store.chunks():
        flat.addmm_(xb.T, scattered[s:e].view(e - s, p * c))
    theta[store.dim] = intercept.to(theta.dtype)
    return theta
