"""The float64 kernel ``K = X X^T`` of the stored standardised rows, for the dual form of the
least-squares family (:mod:`aflite.algorithm.models.ridge.fit`)."""

from __future__ import annotations

import warnings

import torch

from aflite._internal.threads import workers
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["KERNEL_BYTES", "KernelCache", "kernel_fits"]

KERNEL_BYTES = 2 << 30  # the kernel of the stored rows is kept up to this size


def kernel_fits(n_stored: int) -> bool:
    return n_stored * n_stored * 8 <= KERNEL_BYTES


class KernelCache:
    """The float64 kernel ``K = X X^T`` of a store's standardised rows, kept across phases
    and cut down when the store is compacted."""

    def __init__(self) -> None:
        self.rows: torch.Tensor | None = None
        self.k: torch.Tensor | None = None
        self._sparse: tuple | None = None

    def sparse_parts(self, store: FeatureStore) -> tuple[torch.Tensor, torch.Tensor]:
        """The store's standardised zero and float64 ``e`` values at its raw nonzeros
        (:func:`aflite.algorithm.models.ridge.sparse.standardised_parts`), kept while the
        store's sparse rows are the same object."""
        from aflite.algorithm.models.ridge.sparse import standardised_parts

        if self._sparse is None or self._sparse[0] is not store.sparse:
            self._sparse = (store.sparse, *standardised_parts(store))
        return self._sparse[1], self._sparse[2]

    def of(self, store: FeatureStore) -> torch.Tensor:
        rows = torch.as_tensor(store.rows, device=store.device)
        if self.k is not None and self.rows is not None:
            if len(self.rows) == len(rows) and bool((self.rows == rows).all()):
                return self.k
            pos = torch.searchsorted(self.rows, rows)
            if bool((pos < len(self.rows)).all()) and bool((self.rows[pos] == rows).all()):
                self.k, self.rows = self.k[pos[:, None], pos], rows  # one copy, not two
                return self.k
        self.k, self.rows = _kernel(store), rows
        return self.k


def _kernel(store: FeatureStore) -> torch.Tensor:
    """K = X X^T (float64) of the stored standardised float32 rows.

    With the store's raw sparse rows the same matrix comes cheaply: a standardised row is
    ``c + e``, where c holds every feature's standardised zero and e is nonzero only where the
    raw row is, so ``K = (c.c) + (E c) 1^T + 1 (E c)^T + E E^T``, every term from float32
    values multiplied in float64, as the dense product does."""
    dev = store.device
    n = store.n_stored
    if store.sparse is not None and store.raw_float32:
        sp = store.sparse
        zero = (-store.mean32) * store.scale32  # a raw 0, standardised as the store does
        rows = torch.repeat_interleave(torch.arange(n, device=dev), sp.crow[1:] - sp.crow[:-1])
        std = (sp.val - store.mean32[sp.col]) * store.scale32[sp.col]
        e_val = std.double() - zero.double()[sp.col]  # exact: float64 difference
        c = zero.double()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            e = torch.sparse_csr_tensor(sp.crow, sp.col, e_val, size=(n, store.dim))
        dense_t = torch.zeros((store.dim, n), dtype=torch.float64, device=dev)
        dense_t[sp.col, rows] = e_val
        k = _csr_mm(e, dense_t)
        ec = torch.zeros(n, dtype=torch.float64, device=dev)
        ec.index_add_(0, rows, e_val * c[sp.col])
        k += ec[:, None]
        k += ec[None, :]
        k += torch.dot(c, c)
        return k
    # only the upper block triangle is multiplied; the lower one is its transpose
    full = store.standardised().double()
    k = torch.empty((n, n), dtype=torch.float64, device=dev)
    step = 1024
    starts = list(range(0, n, step))

    def run(s: int) -> None:
        e = min(n, s + step)
        band = full[s:e] @ full[s:].T
        diag = band[:, : e - s]
        k[s:e, s:e] = (diag + diag.T) / 2  # exactly symmetric
        k[s:e, e:] = band[:, e - s :]
        k[e:, s:e] = band[:, e - s :].T

    for _ in workers().map(run, starts):
        pass
    return k


def _csr_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        return a @ b
