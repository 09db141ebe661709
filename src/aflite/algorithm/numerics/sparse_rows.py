"""The raw (uncentred) rows of a sparse feature matrix, kept beside the standardised store.

Bag-of-n-gram features are mostly zeros (the demo's hypothesis n-grams: 8.8 of 1,024 per
row). Standardising makes them dense, so every product of the primal solver pays for all d
columns. The logits of standardised rows are also ``x @ (s*W) - (mu*s) @ W``: the sparse raw
rows times scaled weights, minus one offset per classifier and class. The store centres rows
before any product because that fold cancels catastrophically when a feature carries a large
offset (1e4 on every feature); it is used here only where it cannot: features whose mean is at
most ``MAX_OFFSET`` standard deviations from zero.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["MAX_DENSITY", "MAX_OFFSET", "SparseRows"]

MAX_DENSITY = 0.05  # most nonzeros (share of all entries) for which the raw rows are kept
MAX_OFFSET = 4.0  # largest |mean| / std of a feature: a 0/1 feature present in 94% of rows


@dataclass
class SparseRows:
    """CSR of raw rows: ``crow`` (n+1,), ``col`` (nnz,), ``val`` (nnz,) float32."""

    crow: torch.Tensor
    col: torch.Tensor
    val: torch.Tensor
    dim: int

    @property
    def n_rows(self) -> int:
        return len(self.crow) - 1

    @property
    def nnz(self) -> int:
        return int(self.crow[-1])

    @classmethod
    def from_dense(
        cls, x: np.ndarray, mean: np.ndarray, scale: np.ndarray, device: torch.device
    ) -> SparseRows | None:
        """The rows of ``x`` as CSR when at most ``MAX_DENSITY`` of its entries are nonzero
        and no feature's offset ``|mean| * scale`` exceeds ``MAX_OFFSET``; else None. The
        count stops early, so dense features cost one chunk of 2^22 entries: also when the
        rows read so far are more than 4 * ``MAX_DENSITY`` nonzero (a matrix whose first
        chunk is that dense and whose rest is nearly empty is taken as dense)."""
        n, d = x.shape
        if n == 0 or d == 0 or float(np.max(np.abs(mean) * scale, initial=0.0)) > MAX_OFFSET:
            return None
        limit = MAX_DENSITY * n * d
        step = max(1, 2**22 // d)
        rows, cols, vals, seen = [], [], [], 0
        for s in range(0, n, step):
            block = np.asarray(x[s : s + step])
            r, c = np.nonzero(block)
            seen += len(r)
            # over the limit, or so far over it in the rows read that dense features stop
            # after their first chunk
            if seen > limit or seen > 4 * MAX_DENSITY * (s + len(block)) * d:
                return None
            rows.append(r + s)
            cols.append(c)
            vals.append(block[r, c].astype(np.float32))
        row = np.concatenate(rows)
        crow = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=n), out=crow[1:])
        return cls(
            torch.from_numpy(crow).to(device),
            torch.from_numpy(np.concatenate(cols).astype(np.int64)).to(device),
            torch.from_numpy(np.concatenate(vals)).to(device),
            d,
        )

    def take(self, positions: torch.Tensor) -> SparseRows:
        """The rows at ``positions`` (any order, repeats allowed), as a new CSR."""
        positions = positions.reshape(-1)
        start = self.crow[positions]
        count = self.crow[positions + 1] - start
        crow = torch.zeros(len(positions) + 1, dtype=torch.int64, device=start.device)
        torch.cumsum(count, 0, out=crow[1:])
        # element k of output row i sits at start[i] + k in the source
        src = torch.repeat_interleave(start - crow[:-1], count) + torch.arange(
            int(crow[-1]), device=start.device
        )
        return SparseRows(crow, self.col[src], self.val[src], self.dim)

    def transposed(self) -> torch.Tensor:
        """(d, n) torch CSR of the transpose: the gradient's ``X^T R``. The CSC form of the
        rows is the CSR form of their transpose (rows ascending within each feature)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
            csc = torch.sparse_csr_tensor(
                self.crow, self.col, self.val, size=(self.n_rows, self.dim), check_invariants=False
            ).to_sparse_csc()
            return torch.sparse_csr_tensor(
                csc.ccol_indices(),
                csc.row_indices(),
                csc.values(),
                size=(self.dim, self.n_rows),
                check_invariants=False,
            )
