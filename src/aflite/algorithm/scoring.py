"""Predictability scores: one phase of random partitions, fits and held-out predictions."""

from __future__ import annotations

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
from aflite.algorithm.linear import LinearEnsemble, batched_logistic_predict, gram_preconditioner
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
    """Holds the standardised data on the compute device and runs phases on subsets of it.

    Rows are addressed by their position in the input. Standardisation uses the statistics of
    the whole input once, so scores across phases are comparable.
    """

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
    ) -> None:
        self.model = model
        self.n_classes = n_classes
        self.n_partitions = n_partitions
        self.train_size = train_size
        self.device = device
        self.generator = generator
        self.y = torch.as_tensor(y, device=device)
        self.groups = None if groups is None else torch.as_tensor(groups, device=device)
        self.is_linear = isinstance(model, LinearEnsemble)
        self.xb = _standardise_with_bias(x, device)
        self._chol: torch.Tensor | None = None
        self._chol_rows = 0

    def needs_preconditioner(self, n_rows: int) -> bool:
        """The Gram matrix changes slowly as rows leave: refresh it when the set shrank by 10%."""
        return self.is_linear and (self._chol is None or n_rows < 0.9 * self._chol_rows)

    def set_preconditioner(self, rows: torch.Tensor) -> None:
        """Build the shared curvature approximation from ``rows`` (int64 positions)."""
        xb = self.xb[rows] if rows.shape[0] != self.xb.shape[0] else self.xb
        self._chol = gram_preconditioner(xb, self.train_size, self.model.C)
        self._chol_rows = rows.shape[0]

    def run(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One phase on ``rows`` (int64 positions). Returns (n_correct, n_heldout, train)."""
        n = rows.shape[0]
        if self.needs_preconditioner(n) and self._chol is None:
            self.set_preconditioner(rows)
        groups = None
        if self.groups is not None:
            groups = torch.unique(self.groups[rows], return_inverse=True)[1]
        train = train_masks(
            n,
            self.n_partitions,
            self.train_size,
            generator=self.generator,
            device=self.device,
            groups=groups,
            dtype=self.xb.dtype,
        )
        y = self.y[rows]
        xb = self.xb[rows] if n != self.xb.shape[0] else self.xb
        if self.is_linear:
            pred = batched_logistic_predict(
                xb,
                y,
                train,
                self.n_classes,
                model=self.model,
                chol=self._chol,
            )
        else:
            pred = _sklearn_predict(self.model, xb[:, :-1], y, train)
        heldout = 1.0 - train
        correct = ((pred == y[:, None]).to(heldout.dtype) * heldout).sum(dim=1)
        return correct, heldout.sum(dim=1), train


def _standardise_with_bias(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """float32 (N, d+1): features scaled to zero mean and unit variance, then a ones column."""
    n, d = x.shape
    mean = np.zeros(d, dtype=np.float64)
    sq = np.zeros(d, dtype=np.float64)
    step = max(1, 2**22 // d)
    for start in range(0, n, step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        mean += block.sum(axis=0)
        sq += (block * block).sum(axis=0)
    mean /= n
    var = np.maximum(sq / n - mean * mean, 0.0)
    std = np.sqrt(var)
    std[std < 1e-12] = 1.0
    out = torch.empty((n, d + 1), dtype=torch.float32, device=device)
    mean_t = torch.as_tensor(mean, dtype=torch.float32, device=device)
    inv_t = torch.as_tensor(1.0 / std, dtype=torch.float32, device=device)
    for start in range(0, n, step):
        block = torch.from_numpy(np.array(x[start : start + step], dtype=np.float32))
        out[start : start + step, :d] = (block.to(device) - mean_t) * inv_t
    out[:, d] = 1.0
    return out


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
    n = runner.xb.shape[0]
    rows = torch.arange(n, device=runner.device)
    correct, heldout, train = runner.run(rows)
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
