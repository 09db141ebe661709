"""Held-out predictions of the least-squares family and their certificates.

Every held-out prediction is the argmax of ``x W + b`` over the classes a part saw, taken from
float32 products of the stored float32 rows with the weights rounded to float32: half the
time of float64 products, and the products are most of a phase's work at large m. A float32
dot product of d terms is within ``gamma_d sum |x_i w_i| <= (d+1) u ||x|| ||w||`` of the
exact one (u = 2^-24, whatever order the kernel sums in; the weights' own rounding adds one
u), so a prediction whose lead over the runner-up exceeds twice that bound is the exact
weights' prediction; the few that do not (a lead within about 1e-4 of zero) are computed
again in float64. The counts are therefore those of float64 predictions on every machine.

When the solution is iterative, each part also comes with a bound ``B`` on how far any class's
weights can be from the exact solution; a prediction is *certified* when its lead exceeds
``2 ||x - xbar|| B`` as well (xbar: the part's mean row; moving the weights by at most B moves
each class's decision by at most ``||x - xbar|| B``). A part whose held-out predictions are
all certified predicts exactly as the exact solution does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["HeldOut", "Rows", "heldout_stats", "rounding_bound"]

# products of a chunk of rows with every part (entries): the (rows, P) passes after the
# product stay in cache (N=200,000, d=256, m=64 on one core: 2^19 took 5.6 s, 2^21 6.3 s)
CHUNK = 1 << 19
# float64 decisions this close (relative to |x| |w| + |b|) are equal: well above the
# products' own rounding (about d 1e-16) and an iterative solution's error at its floor
TIE = 1e-9


def rounding_bound(d: int) -> float:
    """How far a float32 product of two length-d float32 vectors can be from the exact
    value, per unit of ``||x|| ||w||`` (with the weights' rounding to float32 and room to
    spare)."""
    u = 2.0**-24
    return 1.01 * (d + 2) * u / (1 - (d + 2) * u)


class Rows:
    """Products of the stored standardised rows with float64 tables: float32 products of
    the dense rows (within :func:`rounding_bound`), or float64 from the raw sparse rows
    where the store keeps them (``c + e``, see :mod:`~.ridge_sparse`)."""

    def __init__(self, store: FeatureStore, sparse: tuple[torch.Tensor, torch.Tensor] | None):
        self.store = store
        self.sparse = sparse  # (zero, e_val) over store.sparse's entries
        # float64 products carry no rounding worth a certificate
        self.rounding = 0.0 if sparse is not None else rounding_bound(store.dim)

    def times(
        self, s: int, e: int, perm: torch.Tensor, table: torch.Tensor, table32: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(e - s, k): standardised rows ``s:e`` in the order ``perm`` times ``table`` (d, k):
        float32 products with ``table32`` (its float32 copy) for dense rows, with the rows'
        norms (never below the exact ones: float32 sums, raised by their rounding bound);
        else float64 products and no norms."""
        if self.sparse is None:
            x = torch.index_select(self.store.read(s, e), 0, perm)
            norms = torch.linalg.vector_norm(x, dim=1).double() * (1 + self.rounding)
            return x @ table32, norms
        return self._sparse_times(s, e, table)[perm], None

    def _sparse_times(self, s: int, e: int, table: torch.Tensor) -> torch.Tensor:
        zero, e_val = self.sparse
        sp = self.store.sparse
        a, b = int(sp.crow[s]), int(sp.crow[e])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            part = torch.sparse_csr_tensor(
                sp.crow[s : e + 1] - a, sp.col[a:b], e_val[a:b], size=(e - s, self.store.dim)
            )
            return (zero @ table)[None, :] + part @ table

    def exact(self, rows: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """(k, m) float64: standardised stored rows ``rows`` times the columns of ``table``
        (k, d, m), each row its own columns."""
        x = self.store.gather(rows).double()
        return torch.bmm(x[:, None, :], table).squeeze(1)

    def sq_norms(self, s: int, e: int) -> torch.Tensor:
        """(e - s,) squared norms of the standardised rows ``s:e``."""
        if self.sparse is None:
            return (self.store.read(s, e).double() ** 2).sum(dim=1)
        zero, e_val = self.sparse
        sp = self.store.sparse
        a, b = int(sp.crow[s]), int(sp.crow[e])
        rows = torch.repeat_interleave(
            torch.arange(e - s, device=zero.device), sp.crow[s + 1 : e + 1] - sp.crow[s:e]
        )
        per = e_val[a:b] * (2 * zero[sp.col[a:b]] + e_val[a:b])  # ||c+e||^2 - ||c||^2
        out = torch.full((e - s,), float(zero @ zero), dtype=torch.float64, device=zero.device)
        return out.index_add_(0, rows, per)


class HeldOut:
    """Per stored row: correct held-out predictions and times held out; ``uncertain`` (P,)
    marks the parts with a prediction their bound does not certify."""

    def __init__(self, correct, held, uncertain=None) -> None:
        self.correct, self.held, self.uncertain = correct, held, uncertain


def heldout_stats(
    rows: Rows,
    y: torch.Tensor,
    theta: torch.Tensor,
    neg: torch.Tensor,
    held_of: Callable[[torch.Tensor], torch.Tensor],
    *,
    bounds: torch.Tensor | None = None,
    means: torch.Tensor | None = None,
) -> HeldOut:
    """Held-out statistics of the parts in ``theta`` (d+1, P, C) with offsets ``neg`` (P, C);
    ``held_of(positions)`` gives the (rows, P) bool held-out mask of those stored rows. With ``bounds`` (P,) and ``means`` (P, d), also which parts have an
    uncertified prediction. Chunk by chunk, in a fixed order.

    A prediction is right when the row's class leads every other class (the first of equal
    values wins, as scikit-learn's ``predict``): only the sign of that lead matters, so a
    prediction is settled once the lead's size exceeds what the rounding (or the solver's
    bound) could move it by, whichever class is the runner-up."""
    store = rows.store
    d1, p, c = theta.shape
    dev = theta.device
    # class-major columns: the products of one class with every part are contiguous
    weights = theta[: d1 - 1].permute(0, 2, 1)  # (d, C, P)
    table = weights.reshape(d1 - 1, c * p)
    table32 = table.float() if rows.rounding else table
    bias = (theta[d1 - 1] + neg).T  # (C, P)
    # a float32 sum's rounding is measured against |x| |w| + |b|, the largest over classes
    w_max = float(torch.linalg.vector_norm(weights, dim=0).max())
    # an absent class (its offset -1e30) never leads: the present ones' intercepts only
    b_max = float(torch.where(neg.T == 0, bias.abs(), 0.0).max())
    bias32 = bias.to(table32.dtype)
    if bounds is not None:
        # ||x - xbar|| <= ||x|| + ||xbar||: the bound is about 1e-8 of the weights after the
        # first solve, so a loose distance certifies as much as the exact one did, without
        # a product of every row with every part's mean
        mean_norm = torch.linalg.vector_norm(means, dim=1)
    correct = torch.zeros(store.n_stored, dtype=torch.int64, device=dev)
    held = torch.zeros_like(correct)
    step = max(64, CHUNK // max(1, table.shape[1]))

    def run(span: tuple[int, int]) -> torch.Tensor | None:
        s, e = span
        # the chunk's rows by class: each class's lead is then a few passes over
        # contiguous slices (``topk``/``argmax`` over a class dimension of 3 ran several
        # times slower)
        yc = y[s:e]
        perm = torch.argsort(yc, stable=True)
        ends = torch.cumsum(torch.bincount(yc, minlength=c), 0).tolist()
        prod, x_norm = rows.times(s, e, perm, table, table32)
        logits = prod.view(e - s, c, p).add_(bias32)
        lead = _lead(logits, ends)
        right = lead > 0
        size = lead.abs_()
        if x_norm is None:
            x_norm = rows.sq_norms(s, e)[perm].sqrt()
        # a lead too small to be sure of is computed again in float64 (within a row's
        # largest rounding over the parts: a few more than needed, each cheap; held out or
        # not: a training row's prediction is not counted); and one within float64's own
        # noise is a tie: the exact decisions are equal (a row that shares no feature with
        # a part's rows gets each class's mean target, equal for classes of equal counts)
        scale = x_norm * w_max + b_max
        close = size <= (max(2 * rows.rounding, TIE) * scale)[:, None]
        if bool(close.any()):
            r, j = torch.nonzero(close, as_tuple=True)
            exact = rows.exact(s + perm[r], weights[:, :, j].permute(2, 0, 1)) + bias[:, j].T
            gold = yc[perm[r]]
            exact_lead = _lead(exact[:, :, None], None, gold)[:, 0]
            tie = exact_lead.abs() <= TIE * scale[r]
            size = size.to(torch.float64)
            size[r, j] = torch.where(tie, 0.0, exact_lead.abs())
            # at a tie the class listed first among the equal ones wins, as scikit-learn's
            # predict does for equal values
            top = exact.amax(dim=1, keepdim=True)
            first = (exact >= top - (TIE * scale[r])[:, None]).to(torch.int8).argmax(dim=1)
            right[r, j] = torch.where(tie, first == gold, exact_lead > 0)
        mask = held_of(s + perm)
        correct[s + perm] = right.logical_and_(mask).sum(dim=1)
        held[s + perm] = mask.sum(dim=1)
        if bounds is None:
            return None
        # uncertain parts: a lead within what the part's bound could move it (a training
        # row counted too: at worst a part solved once more)
        reach = torch.addcmul((mean_norm * bounds)[None, :], x_norm[:, None], bounds[None, :])
        return (size <= reach.mul_(2)).any(dim=0)

    uncertain = None
    for part in workers().map(run, store.ranges(step)):
        if part is not None:
            uncertain = part if uncertain is None else uncertain | part
    return HeldOut(correct.to(torch.float64), held.to(torch.float64), uncertain)


def _lead(logits: torch.Tensor, ends: list[int] | None, y: torch.Tensor | None = None):
    """(rows, P): each row's class's decision less the best other class's, from class-major
    logits (rows, C, P): rows sorted by class (``ends``: where each class's rows end), or
    of any classes ``y``."""
    n, c, _ = logits.shape
    if ends is None:  # few rows, any classes
        gold = logits.gather(1, y[:, None, None].expand(n, 1, logits.shape[2]))[:, 0]
        other = logits.scatter(1, y[:, None, None].expand(n, 1, logits.shape[2]), -math.inf)
        return gold - other.amax(dim=1)
    lead = torch.empty_like(logits[:, 0])
    start = 0
    for k, end in enumerate(ends):
        if end > start:
            block = logits[start:end]
            others = [block[:, i] for i in range(c) if i != k]
            best = others[0]
            for o in others[1:]:
                best = torch.maximum(best, o)
            torch.sub(block[:, k], best, out=lead[start:end])
        start = end
    return lead
