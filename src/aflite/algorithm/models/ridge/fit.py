"""The exact least-squares family: one ridge classifier per training part, in closed form.

Every classifier of a phase solves scikit-learn's ``RidgeClassifier`` problem on its training
part T of t rows: one column per class with target +1 on the class's rows and -1 on the
others, an intercept that is not penalised, and the penalty ``alpha * t``:

    min_{W, b}  ||Y_T - X_T W - 1 b^T||^2 + alpha * t * ||W||^2

It has one solution, in two forms:

* **primal**: ``(Xc^T Xc + alpha t I) W = Xc^T Yc`` (Xc, Yc: the part's rows centred on their
  mean), a d x d system per part. Under block partitions a part's sums are the sums of its
  blocks' ``[X 1]^T [X 1 Y]``, so every row is multiplied once per phase, not once per part.
* **dual**: ``(Kc + alpha t I) A = Yc`` with Kc the part's centred kernel and ``W = X_T^T A``,
  a t x t system per part. The kernel of the stored rows is computed once per run (the
  standardised rows do not change between phases), from raw sparse rows where the store
  keeps them.

:func:`choose_form` takes the cheaper. Both are exact: the problem is the float32
standardised rows, every sum of their products is float64 (a product of two float32 numbers
is exact in float64), each system is factorised in float32 and its solution refined against
the float64 matrix until the float64 residual stops falling, and the predictions are float64.
Two machines, or a CPU and a GPU, then agree to the last digits of float64 and a held-out
prediction can differ between them only at a margin within about 1e-12 of zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.ridge.cg import fit_primal
from aflite.algorithm.models.ridge.direct import (
    REFINE_STEPS,
    SOLVE_BYTES,
    Parts,
    PrimalSums,
    dual_solve,
    primal_solve,
    xt_times,
)
from aflite.algorithm.models.ridge.heldout import HeldOut, Rows, heldout_stats
from aflite.algorithm.models.ridge.kernel import KernelCache, kernel_fits
from aflite.algorithm.models.ridge.settings import RidgeEnsemble
from aflite.algorithm.models.ridge.sparse import CERTIFY_TOL, TOL, SparseDual
from aflite.algorithm.numerics.blocks import MIN_BLOCKS_PER_PART
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.report import SolveReport
from aflite.algorithm.numerics.store import FeatureStore

__all__ = [
    "Parts",
    "RidgeFit",
    "choose_form",
    "fit_ridge",
    "one_hot_pm",
    "sparse_ok",
]

CG_PASSES = 24  # passes of the cg form in a phase (N=20,000 d=1,024 t=2,000: 20 steps + 4)
# below this penalty the systems are near singular: cg's steps crawl and its bound certifies
# nothing (alpha 1e-9: 100 steps, then every part solved directly, 3x the direct solve)
CG_MIN_ALPHA = 1e-3


@dataclass
class RidgeFit:
    """Fitted classifiers: ``theta`` (d+1, P, C) float64 in standardised coordinates
    (intercept last), the (P, C) offsets that rule out classes absent from a part, and how
    the fits ended."""

    theta: torch.Tensor
    neg: torch.Tensor
    report: SolveReport


def one_hot_pm(y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """(n, C) float64 targets: +1 in the row's class, -1 elsewhere (RidgeClassifier's)."""
    out = torch.full((len(y), n_classes), -1.0, dtype=torch.float64, device=y.device)
    out[torch.arange(len(y), device=y.device), y] = 1.0
    return out


def sparse_ok(store: FeatureStore) -> bool:
    """Whether the store keeps raw sparse rows the sparse form can use exactly."""
    return store.sparse is not None and store.raw_float32


def choose_form(
    settings: RidgeEnsemble,
    *,
    n: int,
    d: int,
    t: int,
    p: int,
    dual_ok: bool,
    sparse_ok: bool = False,
    n_classes: int = 2,
) -> str:
    """``sparse`` where the store keeps raw sparse rows (conjugate gradients on them,
    :mod:`aflite.algorithm.models.ridge.sparse`); else the cheapest of ``dual`` (a t x t
    system per part; only where the kernel of the stored rows fits in ``KERNEL_BYTES``),
    ``primal`` (a d x d system per part, from every current row's Gram once) and ``cg`` (the
    primal systems by preconditioned conjugate gradients, :mod:`~.cg`: a pass over the
    parts' rows per step, for each class), counting the floating-point work of each."""
    if settings.form == "sparse" and not sparse_ok:
        raise ValueError("RidgeEnsemble(form='sparse') needs mostly-zero float32 features on a CPU")
    if settings.form != "auto":
        return settings.form
    if sparse_ok:
        return "sparse"
    d1, dc = d + 1, d + n_classes
    # the primal form re-reads every block's float64 Gram once per group of parts it solves
    # together: memory-bound, counted at 8 FLOP a byte (one core here: m=1,024 took 110 s,
    # against 24 s for cg)
    groups = -(-p // max(1, SOLVE_BYTES // (32 * dc * dc)))
    resums = 8.0 * groups * (MIN_BLOCKS_PER_PART * n / max(1, t)) * 8 * dc * dc
    cost = {"primal": p * d1**3 / 3 + 2.0 * n * d1 * d1 + resums}
    if settings.alpha >= CG_MIN_ALPHA:
        # the steps, the sums, the bound and the tail in float64 products a few classes
        # wide, which ran at about 2/3 of the factorisations' rate on one core
        cost["cg"] = CG_PASSES * 1.5 * 4.0 * t * d * n_classes * p
    if dual_ok:
        cost["dual"] = p * (t**3 / 3 + 4.0 * t * t + 2.0 * t * d)
    return min(cost, key=cost.get)


def fit_ridge(
    store: FeatureStore,
    y: torch.Tensor,
    parts: Parts,
    n_classes: int,
    settings: RidgeEnsemble,
    *,
    kernel: KernelCache,
    held_of: Callable[[int, int], torch.Tensor],
) -> tuple[RidgeFit, HeldOut]:
    """Fit one ridge classifier per training part, exactly (see the module docstring), and
    count its held-out predictions (``held_of(start, end)``: the (rows, P) bool held-out mask
    of stored rows ``start:end``)."""
    dev = store.device
    p = parts.n_partitions
    d = store.dim
    w = parts.weight.to(torch.float64)
    sizes = w.sum(dim=1)
    t = int(round(float(sizes.mean())))
    targets = one_hot_pm(y, n_classes)
    # class counts per part, in integers (exact in any order)
    present = torch.zeros((p, n_classes), dtype=torch.int64, device=dev)
    present.scatter_add_(1, y[parts.order], (w > 0).to(torch.int64))
    neg = torch.where(present > 0, 0.0, NEG)
    n_current = _n_current(parts, store)
    form = choose_form(
        settings,
        n=n_current,
        d=d,
        t=t,
        p=p,
        dual_ok=kernel_fits(store.n_stored),
        sparse_ok=sparse_ok(store),
        n_classes=n_classes,
    )
    alpha = settings.alpha * sizes  # (P,)
    theta = torch.zeros((d + 1, p, n_classes), dtype=torch.float64, device=dev)
    steps, fallbacks = 0, 0
    stored = Rows(store, kernel.sparse_parts(store) if sparse_ok(store) else None)
    if form == "sparse":
        return _fit_sparse(store, stored, y, targets, parts, w, alpha, neg, held_of, settings)
    if form == "cg":

        def held_count(theta, bounds, means):
            return heldout_stats(stored, y, theta, neg, held_of, bounds=bounds, means=means)

        theta, counts, cg = fit_primal(
            store, y, targets, parts, sizes, alpha, held_count, n_classes
        )
        report = SolveReport("ridge-cg", form=form, alpha=settings.alpha, **cg)
        return RidgeFit(theta, neg, report), counts
    if form == "dual":
        k_all = kernel.of(store)
    else:
        sums = PrimalSums(store, targets, parts)

    def solve(j: torch.Tensor, steps: int):
        """Weights (d+1, g, C) of the parts ``j``, each part's bound on their error and its
        mean row, refined at most ``steps`` times."""
        if form == "dual":
            return _dual_parts(
                store, k_all, targets, parts.order[j], w[j], alpha[j], sizes[j], n_classes, steps
            )
        per = max(1, SOLVE_BYTES // (8 * 4 * (d + n_classes) ** 2))
        out = list(
            workers().map(
                lambda idx: (idx, *primal_solve(sums.of(j[idx]), alpha[j[idx]], steps)),
                _index_groups(len(j), per, dev),
            )
        )
        theta_j = torch.cat([_theta(coef, intercept) for _, coef, intercept, _ in out], dim=1)
        infos = [info for *_, info in out]
        return (
            theta_j,
            torch.cat([i["bound"] for i in infos]),
            torch.cat([i["means"] for i in infos]),
            _merged(infos),
        )

    # one refinement first: nearly every part's predictions are then certified exact; the
    # parts with a prediction too close to call are refined to the float64 floor
    every = torch.arange(p, device=dev)
    theta, bounds, means, first = solve(every, 1)
    counts = heldout_stats(stored, y, theta, neg, held_of, bounds=bounds, means=means)
    unsure = torch.nonzero(counts.uncertain).squeeze(1)
    steps, fallbacks = first["steps"], first["fallbacks"]
    if len(unsure):
        sharp, _, _, tail = solve(unsure, REFINE_STEPS)
        theta[:, unsure] = sharp
        # counted again whole: a count patched part by part could round another way
        counts = heldout_stats(stored, y, theta, neg, held_of)
        steps, fallbacks = max(steps, tail["steps"]), fallbacks + tail["fallbacks"]
    report = SolveReport(
        f"ridge-{form}",
        form=form,
        alpha=settings.alpha,
        refine_steps=steps,
        tail_parts=int(len(unsure)),
        fallbacks=fallbacks,
    )
    return RidgeFit(theta, neg, report), counts


def _fit_sparse(store, stored, y, targets, parts, w, alpha, neg, held_of, settings):
    """The sparse form: conjugate gradients until every held-out prediction is certified
    (``CERTIFY_TOL``, most parts), then, for the parts with a prediction too close to call
    (or stopped at the step cap), on to ``TOL``, and every prediction counted once more.
    Each part's iterations are its own, so neither the grouping over threads nor the other
    parts change its answer."""
    dev = store.device
    p = parts.n_partitions
    e_val_zero = tuple(reversed(stored.sparse))
    per = -(-p // workers().n)

    def run(idx: range):
        j = torch.arange(idx.start, idx.stop, device=dev)
        system = SparseDual(store, targets, parts.order[j], w[j], alpha[j], *e_val_zero)
        capped = ~system.solve(CERTIFY_TOL)
        return (
            j,
            _theta(*system.weights()),
            system.error_bounds(),
            system.means(),
            capped,
            system.steps,
        )

    theta = torch.empty((store.dim + 1, p, targets.shape[1]), dtype=torch.float64, device=dev)
    bounds = torch.empty(p, dtype=torch.float64, device=dev)
    means = torch.empty((p, store.dim), dtype=torch.float64, device=dev)
    capped = torch.zeros(p, dtype=torch.bool, device=dev)
    steps = 0
    for j, th, bd, mn, cp, st in workers().map(run, _groups(p, per)):
        theta[:, j], bounds[j], means[j], capped[j], steps = th, bd, mn, cp, max(steps, st)
    counts = heldout_stats(stored, y, theta, neg, held_of, bounds=bounds, means=means)
    unsure = torch.nonzero(counts.uncertain | capped).squeeze(1)
    tail_steps, still_capped = 0, 0
    if len(unsure):
        tail = SparseDual(
            store, targets, parts.order[unsure], w[unsure], alpha[unsure], *e_val_zero
        )
        still_capped = int((~tail.solve(TOL)).sum())
        tail_steps = tail.steps
        theta[:, unsure] = _theta(*tail.weights())
        # counted again whole: a count patched part by part could round another way
        counts = heldout_stats(stored, y, theta, neg, held_of)
    report = SolveReport(
        "ridge-sparse",
        form="sparse",
        alpha=settings.alpha,
        cg_steps=steps,
        tail_parts=int(len(unsure)),
        tail_steps=tail_steps,
        capped=still_capped,
    )
    return RidgeFit(theta, neg, report), counts


def _theta(coef: torch.Tensor, intercept: torch.Tensor) -> torch.Tensor:
    """(d+1, P, C) from (P, d, C) weights and (P, C) intercepts."""
    return torch.cat([coef.permute(1, 0, 2), intercept[None]], dim=0)


def _dual_parts(store, k_all, targets, order, w, alpha, sizes, n_classes, steps):
    """The dual form for parts ``order``/``w``: weights (d+1, g, C) from ``W = X^T A`` in one
    product over the stored rows, each part's error bound and mean row."""
    dev, d = store.device, store.dim
    g, tm = order.shape
    per = max(1, SOLVE_BYTES // (8 * 3 * tm * tm))
    # each part's dual coefficients scattered to its rows, and 1/t on them for its mean row
    coef_rows = torch.zeros((store.n_stored, g * n_classes + g), dtype=torch.float64, device=dev)
    ymeans, bounds, infos = [], [], []
    cls = torch.arange(n_classes, device=dev)
    groups = _index_groups(g, per, dev)

    def run(idx: torch.Tensor):
        return dual_solve(k_all, targets, order[idx], w[idx], alpha[idx], steps)

    for idx, (a, ymean, info) in zip(groups, workers().map(run, groups)):
        # W = Xc^T A, which the error bound is for: centred on the part's real rows, an
        # approximate A (whose columns need not sum to 0) gives it as X_T^T A
        wi = w[idx][:, :, None]
        a = (a - (a * wi).sum(dim=1, keepdim=True) / sizes[idx][:, None, None]) * wi
        # only a part's real rows: its padding points at a row that may be one of them
        part, slot = torch.nonzero(w[idx] > 0, as_tuple=True)
        rows = order[idx][part, slot]
        coef_rows[rows[:, None], (idx[part] * n_classes)[:, None] + cls] = a[part, slot]
        coef_rows[rows, g * n_classes + idx[part]] = 1.0 / sizes[idx[part]]
        ymeans.append(ymean)
        bounds.append(info["bound"])
        infos.append(info)
    xt_coef = xt_times(store, coef_rows)  # (d, g*C + g)
    theta = torch.empty((d + 1, g, n_classes), dtype=torch.float64, device=dev)
    theta[:d] = xt_coef[:, : g * n_classes].view(d, g, n_classes)
    means = xt_coef[:, g * n_classes :].T  # (g, d): each part's mean row
    theta[d] = torch.cat(ymeans) - torch.einsum("pd,dpc->pc", means, theta[:d])
    return theta, torch.cat(bounds), means, _merged(infos)


def _index_groups(n: int, per: int, dev: torch.device) -> list[torch.Tensor]:
    return [torch.arange(s, min(n, s + per), device=dev) for s in range(0, n, per)]


def _merged(infos: list[dict]) -> dict:
    return {
        "steps": max(i["steps"] for i in infos),
        "fallbacks": sum(i["fallbacks"] for i in infos),
    }


def _n_current(parts: Parts, store: FeatureStore) -> int:
    if parts.positions is not None:
        return len(parts.positions)
    return store.n_stored


def _groups(p: int, per: int) -> list[range]:
    return [range(s, min(p, s + per)) for s in range(0, p, per)]
