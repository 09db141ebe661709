"""Predictability scores: one phase of random partitions, fits and held-out predictions."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from aflite._internal.device import make_generator, resolve_device
from aflite.algorithm._validation import (
    check_features,
    encode_groups,
    encode_labels,
    resolve_size,
)
from aflite.algorithm.linear import (
    LinearEnsemble,
    Standardizer,
    batched_logistic_fit,
    gram_preconditioner,
    heldout_correct,
)
from aflite.algorithm.partitions import train_masks

__all__ = ["PhaseScores", "predictability_scores", "representation_bias", "resolve_model"]


@dataclass
class PhaseScores:
    """Result of one phase over a set of rows.

    Attributes
    ----------
    scores:
        (N,) fraction of out-of-sample predictions that were correct; NaN for a row that no
        partition held out.
    n_heldout, n_correct:
        (N,) how often each row was held out, and how often it was then predicted correctly.
    train_mask:
        (N, P) bool, True where the row trained that partition's classifier.
    """

    scores: np.ndarray
    n_heldout: np.ndarray
    n_correct: np.ndarray
    train_mask: np.ndarray

    @property
    def representation_bias(self) -> float:
        """Mean predictability over the scored rows: the estimate of R(Phi, S, M)."""
        valid = ~np.isnan(self.scores)
        return float(self.scores[valid].mean()) if valid.any() else float("nan")


def resolve_model(model: Any) -> Any:
    """``"linear"`` -> default :class:`LinearEnsemble`; an estimator or ensemble as given."""
    if isinstance(model, str):
        if model == "linear":
            return LinearEnsemble()
        raise ValueError(
            f"unknown model {model!r}: use 'linear', a LinearEnsemble, "
            "or a scikit-learn classifier instance"
        )
    if isinstance(model, LinearEnsemble):
        return model
    if hasattr(model, "fit") and hasattr(model, "predict"):
        return model
    raise ValueError(
        f"model must be 'linear', a LinearEnsemble or a scikit-learn classifier, got {model!r}"
    )


class _PhaseRunner:
    """Holds the data on the compute device and runs phases on subsets of its rows.

    Rows are addressed by their position in the input. The caller's matrix is used as is (no
    standardised copy: see :mod:`aflite.algorithm.linear`); rows that left the set are masked
    out until fewer than half of the stored rows are active, then the active rows are compacted
    into an owned buffer (in place once it is ours). Partitions are drawn over the active rows
    only, so the random stream does not depend on the storage layout.
    """

    COMPACT_BELOW = 0.5

    def __init__(
        self,
        x: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        *,
        model: Any,
        n_partitions: int,
        train_size: int,
        groups: np.ndarray | None,
        device: torch.device,
        generator: torch.Generator,
        chunk_rows: int | None = None,
        backend: Any = None,
    ) -> None:
        self.model = model
        self.backend = backend
        self.n_classes = n_classes
        self.n_partitions = n_partitions
        self.train_size = train_size
        self.device = device
        self.generator = generator
        self.is_linear = isinstance(model, LinearEnsemble)
        self.chunk_rows = chunk_rows or (1 << 20 if device.type == "cuda" else 65_536)
        self.std = _moments(x, device)
        self.store, self.owned = _as_store(x, device)
        self.store_rows = np.arange(x.shape[0], dtype=np.int64)
        self.y = torch.as_tensor(y, device=device)
        self.groups = None if groups is None else torch.as_tensor(groups, device=device)
        self._chol: torch.Tensor | None = None
        self._chol_rows = 0
        self.n_input = x.shape[0]
        if backend is not None:
            if not self.is_linear:
                raise ValueError("a distributed backend supports the linear model family only")
            backend.attach(self.store, self.std, self.y, self.chunk_rows)

    # --- storage layout ---
    def _positions(self, rows: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self.store_rows, rows)
        if len(rows) and (
            pos.max() >= len(self.store_rows) or not np.array_equal(self.store_rows[pos], rows)
        ):
            raise RuntimeError("internal error: rows are not in the working set")
        return pos

    def needs_compaction(self, n_rows: int) -> bool:
        return n_rows < self.COMPACT_BELOW * len(self.store_rows)

    def compact_to(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (sorted input positions) in storage."""
        pos = self._positions(rows)
        pos_t = torch.as_tensor(pos, device=self.device)
        n, d = len(rows), self.store.shape[1]
        if self.owned:
            # pos is sorted and pos[i] >= i, so copying front to back never overwrites a row
            # that is still to be read: compaction in place, no second buffer.
            for s in range(0, n, self.chunk_rows):
                idx = pos_t[s : s + self.chunk_rows]
                self.store[s : s + len(idx)] = self.store[idx]
            self.store = self.store[:n]
        else:
            buf = torch.empty((n, d), dtype=torch.float32, device=self.device)
            for s in range(0, n, self.chunk_rows):
                buf[s : s + self.chunk_rows] = self.store[pos_t[s : s + self.chunk_rows]]
            self.store, self.owned = buf, True
        self.y = self.y[pos_t]
        if self.groups is not None:
            self.groups = self.groups[pos_t]
        self.store_rows = np.asarray(rows, dtype=np.int64).copy()
        if self.backend is not None:
            self.backend.attach(self.store, self.std, self.y, self.chunk_rows)

    # --- preconditioner ---
    def needs_preconditioner(self, n_rows: int) -> bool:
        """The Gram matrix changes slowly as rows leave: refresh it when the set shrank by 10%."""
        return self.is_linear and (self._chol is None or n_rows < 0.9 * self._chol_rows)

    def set_preconditioner(self, rows: np.ndarray) -> None:
        """Build the shared curvature approximation from ``rows`` (sorted input positions)."""
        pos = torch.as_tensor(self._positions(rows), device=self.device)
        self._chol = gram_preconditioner(
            self.store,
            self.std,
            self.train_size,
            self.model.C,
            rows=pos,
            chunk_rows=self.chunk_rows,
        )
        self._chol_rows = len(rows)

    # --- one phase ---
    def run(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One phase on ``rows`` (sorted input positions).

        Returns (n_correct, n_heldout, train mask), each aligned with ``rows``.
        """
        rows = np.asarray(rows, dtype=np.int64)
        n = len(rows)
        if self.is_linear and self._chol is None:
            self.set_preconditioner(rows)
        pos = torch.as_tensor(self._positions(rows), device=self.device)
        groups = None
        if self.groups is not None:
            groups = torch.unique(self.groups[pos], return_inverse=True)[1]
        train_active = train_masks(
            n,
            self.n_partitions,
            self.train_size,
            generator=self.generator,
            device=self.device,
            groups=groups,
        )
        n_store = self.store.shape[0]
        if n == n_store:
            train = train_active
            heldout = 1.0 - train
        else:
            train = torch.zeros(
                (n_store, self.n_partitions), dtype=torch.float32, device=self.device
            )
            train[pos] = train_active
            heldout = torch.zeros_like(train)
            heldout[pos] = 1.0 - train_active
        if self.backend is not None:
            correct, n_held = self.backend.score(
                train, heldout, self.n_classes, self.model, self._chol
            )
        elif self.is_linear:
            w, prob = batched_logistic_fit(
                self.store,
                self.std,
                self.y,
                train,
                self.n_classes,
                model=self.model,
                chol=self._chol,
                chunk_rows=self.chunk_rows,
            )
            correct, n_held = heldout_correct(w, prob, heldout)
        else:
            xs = (self.store[pos].float() - self.std.mean) * self.std.inv_std
            pred = _sklearn_predict(self.model, xs, self.y[pos], train_active)
            held = 1.0 - train_active
            correct = ((pred == self.y[pos][:, None]).float() * held).sum(dim=1)
            return correct, held.sum(dim=1), train_active
        if n != n_store:
            correct, n_held = correct[pos], n_held[pos]
        return correct, n_held, train_active


def _moments(x: np.ndarray, device: torch.device) -> Standardizer:
    """Per-feature mean and 1/std over all input rows (chunked, float64 accumulation)."""
    n, d = x.shape
    total = np.zeros(d, dtype=np.float64)
    sq = np.zeros(d, dtype=np.float64)
    step = max(1, 2**22 // d)
    for start in range(0, n, step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        total += block.sum(axis=0)
        sq += (block * block).sum(axis=0)
    mean = total / n
    std = np.sqrt(np.maximum(sq / n - mean * mean, 0.0))
    std[std < 1e-12] = 1.0
    return Standardizer(
        mean=torch.as_tensor(mean, dtype=torch.float32, device=device),
        inv_std=torch.as_tensor(1.0 / std, dtype=torch.float32, device=device),
    )


def _as_store(x: np.ndarray, device: torch.device) -> tuple[torch.Tensor, bool]:
    """The feature matrix as a float32 tensor on ``device``; (tensor, whether we own a copy).

    A float32 C-contiguous array or memory map on the CPU is used without copying.
    """
    if device.type == "cpu" and x.dtype == np.float32 and x.flags["C_CONTIGUOUS"]:
        with warnings.catch_warnings():
            # read-only memory maps are fine: aflite never writes to a matrix it does not own
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(x), False
    out = torch.empty(x.shape, dtype=torch.float32, device=device)
    step = max(1, 2**22 // max(1, x.shape[1]))
    for s in range(0, x.shape[0], step):
        out[s : s + step] = torch.from_numpy(np.array(x[s : s + step], dtype=np.float32)).to(device)
    return out, True


def standardise_with_bias(x: np.ndarray) -> np.ndarray:
    """The matrix the linear family sees: features standardised over all rows, plus a ones
    column. For references and tests; the filter never materialises it."""
    std = _moments(x, torch.device("cpu"))
    xs = (np.asarray(x, dtype=np.float32) - std.mean.numpy()) * std.inv_std.numpy()
    return np.hstack([xs, np.ones((len(xs), 1), dtype=np.float32)])


def _sklearn_predict(
    estimator: Any, x: torch.Tensor, y: torch.Tensor, train: torch.Tensor
) -> torch.Tensor:
    """The flexible path: one cloned scikit-learn estimator per partition."""
    from sklearn.base import clone

    xn = x.cpu().numpy()
    yn = y.cpu().numpy()
    tn = train.cpu().numpy().astype(bool)
    pred = np.empty(tn.shape, dtype=np.int64)
    for j in range(tn.shape[1]):
        fit_rows = tn[:, j]
        if len(np.unique(yn[fit_rows])) < 2:
            # a one-class training part predicts that class everywhere
            pred[:, j] = yn[fit_rows][0]
            continue
        est = clone(estimator).fit(xn[fit_rows], yn[fit_rows])
        pred[:, j] = est.predict(xn)
    return torch.as_tensor(pred, device=x.device)


def _prepare(
    features: Any,
    labels: Any,
    *,
    n_partitions: int,
    model: Any,
    groups: Any,
    seed: Any,
    device: Any,
    train_size: Any,
    backend: Any = None,
) -> tuple[_PhaseRunner, np.ndarray, int]:
    x = check_features(features)
    y, classes = encode_labels(labels, x.shape[0])
    g = encode_groups(groups, x.shape[0])
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, int) or n_partitions < 1:
        raise ValueError(f"n_partitions must be a positive int, got {n_partitions!r}")
    t = resolve_size(train_size, x.shape[0], "train_size")
    if t >= x.shape[0]:
        raise ValueError(
            f"train_size ({t}) must be smaller than the number of rows ({x.shape[0]}): "
            "some rows must be held out"
        )
    dev = resolve_device(device)
    runner = _PhaseRunner(
        x,
        y,
        len(classes),
        model=resolve_model(model),
        n_partitions=n_partitions,
        train_size=t,
        groups=g,
        device=dev,
        generator=make_generator(seed, dev),
        backend=backend,
    )
    return runner, classes, t


def predictability_scores(
    features: Any,
    labels: Any,
    *,
    n_partitions: int = 64,
    train_size: int | float = 0.1,
    model: Any = "linear",
    groups: Any = None,
    seed: Any = 0,
    device: str | torch.device = "auto",
) -> PhaseScores:
    """Score every row once: the fraction of its held-out predictions that are correct.

    This is one phase of AFLITE on its own: ``n_partitions`` random splits into a training part
    of ``train_size`` rows and a held-out part, one model per split.

    Examples
    --------
    >>> import numpy as np, aflite
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 5)); y = (x[:, 0] > 0).astype(int)
    >>> ps = aflite.predictability_scores(x, y, n_partitions=16, train_size=0.5)
    >>> ps.representation_bias > 0.9
    True
    """
    runner, _, _ = _prepare(
        features,
        labels,
        n_partitions=n_partitions,
        model=model,
        groups=groups,
        seed=seed,
        device=device,
        train_size=train_size,
    )
    correct, heldout, train = runner.run(np.arange(runner.n_input))
    correct_np = correct.cpu().numpy().astype(np.int64)
    heldout_np = heldout.cpu().numpy().astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(heldout_np > 0, correct_np / np.maximum(heldout_np, 1), np.nan)
    return PhaseScores(
        scores=scores,
        n_heldout=heldout_np,
        n_correct=correct_np,
        train_mask=train.cpu().numpy().astype(bool),
    )


def representation_bias(features: Any, labels: Any, **kwargs: Any) -> float:
    """Estimate R(Phi, S, M): the mean predictability of the rows (see :func:`predictability_scores`)."""
    return predictability_scores(features, labels, **kwargs).representation_bias
