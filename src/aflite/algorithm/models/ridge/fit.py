"""The exact least-squares family: one ridge classifier per training part, in closed form.

Every classifier of a phase solves scikit-learn's ``RidgeClassifier`` problem on its training
part T of t rows: one column per class with target +1 on the class's rows and -1 on the
others, an intercept that is not penalised, and the penalty ``alpha * t``:

    min_{W, b}  ||Y_T - X_T W - 1 b^T||^2 + alpha * t * ||W||^2

It has one solution, in three forms:

* **primal**: ``(Xc^T Xc + alpha t I) W = Xc^T Yc`` (Xc, Yc: the part's rows centred on their
  mean), a d x d system per part. Under block partitions a part's sums are the sums of its
  blocks' ``[X 1 Y]^T [X 1 Y]``, so every row is multiplied once per phase, not once per part.
* **dual**: ``(Kc + alpha t I) A = Yc`` with Kc the part's centred kernel and ``W = X_T^T A``,
  a t x t system per part. The kernel of the stored rows is computed once per run (the
  standardised rows do not change between phases).
* **sparse**: the dual systems by conjugate gradients on the raw rows of mostly-zero features
  (:mod:`~.sparse`).

:func:`choose_form` takes the cheapest. :func:`fit_ridge` is the one driver of every form:
solve every part to a first precision (a float32 factor refined once against the float64
matrix, or the iterations to ``CERTIFY_TOL``), count the held-out predictions with their
certificates (:mod:`~.heldout`), solve the parts with a prediction too close to call to
the float64 floor, and count again. The problem is the float32 standardised rows, every sum
of their products is float64 (a product of two float32 numbers is exact in float64), so two
machines, or a CPU and a GPU, agree to the last digits of float64 and a held-out prediction
can differ between them only at a margin within about 1e-12 of zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from aflite._internal.threads import workers
from aflite.algorithm.models.ridge.direct import (
    REFINE_STEPS,
    SOLVE_BYTES,
    BlockSums,
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
    "Solved",
    "choose_form",
    "fit_ridge",
    "one_hot_pm",
    "sparse_ok",
]


@dataclass
class RidgeFit:
    """Fitted classifiers: ``theta`` (d+1, P, C) float64 in standardised coordinates
    (intercept last), the (P, C) offsets that rule out classes absent from a part, and how
    the fits ended."""

    theta: torch.Tensor
    neg: torch.Tensor
    report: SolveReport


@dataclass
class Solved:
    """What every form's solve gives for a group of parts: weights ``theta`` (d+1, g, C),
    each part's bound on how far its weights can be from the exact ones (``bounds`` (g,)),
    its mean row (``means`` (g, d)), the parts whose solve stopped short (``capped`` (g,):
    an iteration cap), and the solver's figures (refinement or iteration steps, fallbacks
    to a float64 factor)."""

    theta: torch.Tensor
    bounds: torch.Tensor
    means: torch.Tensor
    capped: torch.Tensor
    steps: int = 0
    fallbacks: int = 0

    @staticmethod
    def joined(parts: list[Solved]) -> Solved:
        return Solved(
            torch.cat([s.theta for s in parts], dim=1),
            torch.cat([s.bounds for s in parts]),
            torch.cat([s.means for s in parts]),
            torch.cat([s.capped for s in parts]),
            max(s.steps for s in parts),
            sum(s.fallbacks for s in parts),
        )


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
    :mod:`aflite.algorithm.models.ridge.sparse`); else the cheaper of ``dual`` (a t x t
    system per part; only where the kernel of the stored rows fits in ``KERNEL_BYTES``) and
    ``primal`` (a d x d system per part, from every current row's Gram once), counting the
    floating-point work of each."""
    if settings.form == "sparse" and not sparse_ok:
        raise ValueError("RidgeEnsemble(form='sparse') needs mostly-zero float32 features on a CPU")
    if settings.form != "auto":
        return settings.form
    if sparse_ok:
        return "sparse"
    d1 = d + n_classes + 1
    # a symmetric product over every current row, and each part's sum of its blocks
    cost = {"primal": p * d1**3 / 3 + 1.0 * n * d1 * d1 + MIN_BLOCKS_PER_PART * p * d1 * d1}
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
    held_of: Callable[[torch.Tensor], torch.Tensor],
    sums: BlockSums | None = None,
) -> tuple[RidgeFit, HeldOut]:
    """Fit one ridge classifier per training part, exactly (see the module docstring), and
    count its held-out predictions (``held_of(positions)``: the (rows, P) bool held-out mask
    of those stored rows). ``sums``: the blocks' sums the primal form keeps from
    phase to phase, under blocks kept from phase to phase."""
    dev = store.device
    p = parts.n_partitions
    sizes = parts.sizes()
    targets = one_hot_pm(y, n_classes)
    # class counts per part, in integers (exact in any order)
    neg = torch.where(parts.class_counts(y, n_classes) > 0, 0.0, NEG)
    form = choose_form(
        settings,
        n=len(parts.positions) if parts.positions is not None else store.n_stored,
        d=store.dim,
        t=int(round(float(sizes.mean()))),
        p=p,
        dual_ok=kernel_fits(store.n_stored),
        sparse_ok=sparse_ok(store),
        n_classes=n_classes,
    )
    penalty = settings.alpha * sizes  # (P,): alpha * t of every part
    sparse = kernel.sparse_parts(store) if sparse_ok(store) else None
    stored = Rows(store, sparse)
    if form == "sparse":
        w = parts.weight.to(torch.float64)
        solve = _SparseForm(store, targets, parts, w, penalty, sparse)
    elif form == "dual":
        w = parts.weight.to(torch.float64)
        solve = _DualForm(store, kernel.of(store), targets, parts, w, penalty, sizes, n_classes)
    else:
        solve = _PrimalForm(store, targets, parts, penalty, sums)
    # first every part to a precision at which nearly every held-out prediction is certified
    # exact; the parts with a prediction too close to call (or cut short) then to the
    # float64 floor, and every prediction counted once more, whole: a count patched part by
    # part could round another way
    first = solve(torch.arange(p, device=dev), sharp=False)
    theta = first.theta
    counts = heldout_stats(stored, y, theta, neg, held_of, bounds=first.bounds, means=first.means)
    unsure = torch.nonzero(counts.uncertain | first.capped).squeeze(1)
    steps, fallbacks, capped = first.steps, first.fallbacks, 0
    if len(unsure):
        tail = solve(unsure, sharp=True)
        theta[:, unsure] = tail.theta
        counts = heldout_stats(stored, y, theta, neg, held_of)
        steps, fallbacks = max(steps, tail.steps), fallbacks + tail.fallbacks
        capped = int(tail.capped.sum())
    # the iterative form counts its iterations, the direct ones their refinement steps
    report = SolveReport(
        f"ridge-{form}",
        form=form,
        alpha=settings.alpha,
        cg_steps=steps if form == "sparse" else None,
        refine_steps=None if form == "sparse" else steps,
        tail_parts=int(len(unsure)),
        fallbacks=fallbacks,
        capped=capped,
    )
    return RidgeFit(theta, neg, report), counts


class _PrimalForm:
    """Each part's d x d system from its blocks' sums (or its own rows), a group of parts at
    a time on the worker threads: a float32 factor, refined against the float64 matrix once
    (``sharp=False``) or to the float64 floor."""

    def __init__(self, store, targets, parts, penalty, kept=None) -> None:
        self.sums = PrimalSums(store, targets, parts, kept)
        self.penalty = penalty
        self.per = max(1, SOLVE_BYTES // (8 * 4 * (store.dim + targets.shape[1]) ** 2))
        self.dev = store.device

    def __call__(self, j: torch.Tensor, sharp: bool) -> Solved:
        steps = REFINE_STEPS if sharp else 1

        def run(idx: torch.Tensor) -> Solved:
            coef, intercept, info = primal_solve(self.sums.of(j[idx]), self.penalty[j[idx]], steps)
            return Solved(_theta(coef, intercept), info["bound"], info["means"],
                          torch.zeros(len(idx), dtype=torch.bool, device=self.dev),
                          info["steps"], info["fallbacks"])  # fmt: skip

        return Solved.joined(list(workers().map(run, _index_groups(len(j), self.per, self.dev))))


class _DualForm:
    """Each part's t x t system on the kernel of the stored rows, weights ``W = X^T A`` in one
    product over the stored rows."""

    def __init__(self, store, k_all, targets, parts, w, penalty, sizes, n_classes) -> None:
        self.store, self.k_all, self.targets, self.parts = store, k_all, targets, parts
        self.w, self.penalty, self.sizes, self.n_classes = w, penalty, sizes, n_classes

    def __call__(self, j: torch.Tensor, sharp: bool) -> Solved:
        store, dev, d, c = self.store, self.store.device, self.store.dim, self.n_classes
        order, w = self.parts.order[j], self.w[j]
        g, tm = order.shape
        per = max(1, SOLVE_BYTES // (8 * 3 * tm * tm))
        # each part's dual coefficients scattered to its rows, and 1/t on them for its mean row
        coef_rows = torch.zeros((store.n_stored, g * c + g), dtype=torch.float64, device=dev)
        ymeans, bounds, infos = [], [], []
        cls = torch.arange(c, device=dev)
        groups = _index_groups(g, per, dev)
        steps = REFINE_STEPS if sharp else 1

        def run(idx: torch.Tensor):
            return dual_solve(self.k_all, self.targets, order[idx], w[idx],
                              self.penalty[j[idx]], steps)  # fmt: skip

        sizes = self.sizes[j]
        for idx, (a, ymean, info) in zip(groups, workers().map(run, groups)):
            # W = Xc^T A, which the error bound is for: centred on the part's real rows, an
            # approximate A (whose columns need not sum to 0) gives it as X_T^T A
            wi = w[idx][:, :, None]
            a = (a - (a * wi).sum(dim=1, keepdim=True) / sizes[idx][:, None, None]) * wi
            # only a part's real rows: its padding points at a row that may be one of them
            part, slot = torch.nonzero(w[idx] > 0, as_tuple=True)
            rows = order[idx][part, slot]
            coef_rows[rows[:, None], (idx[part] * c)[:, None] + cls] = a[part, slot]
            coef_rows[rows, g * c + idx[part]] = 1.0 / sizes[idx[part]]
            ymeans.append(ymean)
            bounds.append(info["bound"])
            infos.append(info)
        xt_coef = xt_times(store, coef_rows)  # (d, g*C + g)
        theta = torch.empty((d + 1, g, c), dtype=torch.float64, device=dev)
        theta[:d] = xt_coef[:, : g * c].view(d, g, c)
        means = xt_coef[:, g * c :].T  # (g, d): each part's mean row
        theta[d] = torch.cat(ymeans) - torch.einsum("pd,dpc->pc", means, theta[:d])
        return Solved(theta, torch.cat(bounds), means,
                      torch.zeros(g, dtype=torch.bool, device=dev),
                      max(i["steps"] for i in infos), sum(i["fallbacks"] for i in infos))  # fmt: skip


class _SparseForm:
    """Conjugate gradients on each part's dual system over the raw sparse rows: to
    ``CERTIFY_TOL`` (most parts are then certified), or to ``TOL``. Each part's iterations
    are its own, so neither the grouping over threads nor the other parts change its
    answer."""

    def __init__(self, store, targets, parts, w, penalty, sparse) -> None:
        self.store, self.targets, self.parts, self.w, self.penalty = (
            store,
            targets,
            parts,
            w,
            penalty,
        )
        self.e_val_zero = tuple(reversed(sparse))

    def __call__(self, j: torch.Tensor, sharp: bool) -> Solved:
        per = -(-len(j) // workers().n)

        def run(idx: torch.Tensor) -> Solved:
            k = j[idx]
            system = SparseDual(self.store, self.targets, self.parts.order[k], self.w[k],
                                self.penalty[k], *self.e_val_zero)  # fmt: skip
            done = system.solve(TOL if sharp else CERTIFY_TOL)
            return Solved(_theta(*system.weights()), system.error_bounds(), system.means(),
                          ~done, system.steps)  # fmt: skip

        return Solved.joined(list(workers().map(run, _index_groups(len(j), per, j.device))))


def _theta(coef: torch.Tensor, intercept: torch.Tensor) -> torch.Tensor:
    """(d+1, P, C) from (P, d, C) weights and (P, C) intercepts."""
    return torch.cat([coef.permute(1, 0, 2), intercept[None]], dim=0)


def _index_groups(n: int, per: int, dev: torch.device) -> list[torch.Tensor]:
    return [torch.arange(s, min(n, s + per), device=dev) for s in range(0, n, per)]
