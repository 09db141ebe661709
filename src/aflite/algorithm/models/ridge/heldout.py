"""Held-out predictions of the least-squares family, float64, and their certificates.

Every held-out prediction is the argmax of ``x W + b`` over the classes a part saw. When the
solution is iterative, each part comes with a bound ``B`` on how far any class's weights can
be from the exact solution; a prediction is *certified* when its lead over the runner-up
exceeds ``2 ||x - xbar|| B`` (xbar: the part's mean row; moving the weights by at most B
moves each class's decision by at most ``||x - xbar|| B``). A part whose held-out predictions
are all certified predicts exactly as the exact solution does.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.margins import gold_margin
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["MARGIN_CLIP", "HeldOut", "Rows", "heldout_stats"]

MARGIN_CLIP = 4.0  # a part without the row's class gives it margin -MARGIN_CLIP, not -1e30


class Rows:
    """Products of the stored standardised rows with float64 tables: from the raw sparse
    rows where the store keeps them (``c + e``, see :mod:`~.sparse`), else dense."""

    def __init__(self, store: FeatureStore, sparse: tuple[torch.Tensor, torch.Tensor] | None):
        self.store = store
        self.sparse = sparse  # (zero, e_val) over store.sparse's entries

    def times(self, s: int, e: int, table: torch.Tensor) -> torch.Tensor:
        """(e - s, k) float64: standardised rows ``s:e`` times ``table`` (d, k)."""
        if self.sparse is None:
            return self.store.read(s, e).double() @ table
        import warnings

        zero, e_val = self.sparse
        sp = self.store.sparse
        a, b = int(sp.crow[s]), int(sp.crow[e])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            part = torch.sparse_csr_tensor(
                sp.crow[s : e + 1] - a, sp.col[a:b], e_val[a:b], size=(e - s, self.store.dim)
            )
            return (zero @ table)[None, :] + part @ table

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
    """Per stored row: correct held-out predictions, times held out, and the sum of the gold
    class's margins (its decision less the best other's, clipped to +-``MARGIN_CLIP``);
    ``uncertain`` (P,) marks the parts with a prediction their bound does not certify."""

    def __init__(self, correct, held, margin, uncertain=None) -> None:
        self.correct, self.held, self.margin, self.uncertain = correct, held, margin, uncertain

    def __add__(self, other: HeldOut) -> HeldOut:
        return HeldOut(
            self.correct + other.correct, self.held + other.held, self.margin + other.margin
        )

    def __sub__(self, other: HeldOut) -> HeldOut:
        return HeldOut(
            self.correct - other.correct, self.held - other.held, self.margin - other.margin
        )


def heldout_stats(
    rows: Rows,
    y: torch.Tensor,
    theta: torch.Tensor,
    neg: torch.Tensor,
    held_of: Callable[[int, int], torch.Tensor],
    *,
    bounds: torch.Tensor | None = None,
    means: torch.Tensor | None = None,
) -> HeldOut:
    """Held-out statistics of the parts in ``theta`` (d+1, P, C) with offsets ``neg`` (P, C);
    ``held_of(start, end)`` gives the (rows, P) bool held-out mask of stored rows
    ``start:end``. With ``bounds`` (P,) and ``means`` (P, d), also which parts have an
    uncertified prediction. Chunk by chunk, in a fixed order."""
    store = rows.store
    d1, p, c = theta.shape
    dev = theta.device
    table = theta[: d1 - 1].reshape(d1 - 1, p * c)
    if bounds is not None:
        table = torch.cat([table, means.T], dim=1)
        mean_sq = (means * means).sum(dim=1)
    bias = theta[d1 - 1].reshape(p * c) + neg.reshape(p * c)
    correct = torch.zeros(store.n_stored, dtype=torch.float64, device=dev)
    held = torch.zeros_like(correct)
    margin = torch.zeros_like(correct)
    step = max(64, (1 << 21) // max(1, table.shape[1]))

    def run(span: tuple[int, int]) -> torch.Tensor | None:
        s, e = span
        mask = held_of(s, e)
        prod = rows.times(s, e, table)
        logits = (prod[:, : p * c] + bias).view(e - s, p, c)
        right, gold = gold_margin(logits, y[s:e, None].expand(e - s, p), MARGIN_CLIP)
        m = mask.to(torch.float64)
        correct[s:e] = (right.to(torch.float64) * m).sum(dim=1)
        held[s:e] = m.sum(dim=1)
        margin[s:e] = (gold * m).sum(dim=1)
        if bounds is None:
            return None
        top = logits.topk(2, dim=2).values
        dist = (rows.sq_norms(s, e)[:, None] - 2 * prod[:, p * c :] + mean_sq).clamp_min(0).sqrt()
        return (mask & (top[:, :, 0] - top[:, :, 1] <= 2 * dist * bounds)).any(dim=0)

    uncertain = None
    for part in workers().map(run, store.ranges(step)):
        if part is not None:
            uncertain = part if uncertain is None else uncertain | part
    return HeldOut(correct, held, margin, uncertain)
