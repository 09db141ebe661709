"""K-fold cross-fitting: the fold of every row, and out-of-fold class probabilities of the
converged linear model (the filter's L2 logistic regression), all K fold models fitted at once.

Every row is scored only by models that never trained on it: in each of R repeats the rows are
dealt into K folds, and the model of fold k trains on the other K - 1 folds and predicts fold k.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "AUTO_PENALTIES",
    "crossfit_folds",
    "oof_choice_probabilities",
    "oof_probabilities",
    "oof_prior",
]


def crossfit_folds(
    y: np.ndarray,
    n_folds: int,
    *,
    repeats: int = 1,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
) -> np.ndarray:
    """(R, N) fold of every row in each of ``repeats`` cross-fits.

    Without groups the folds are stratified: each class's rows, in random order, are dealt
    round the folds, continuing where the previous class stopped, so fold sizes differ by at
    most one and every fold holds every class in proportion. With ``groups`` (codes), whole
    groups in random order go to the currently smallest fold, so a group never straddles a
    split.
    """
    n = len(y)
    if not isinstance(n_folds, (int, np.integer)) or isinstance(n_folds, bool) or n_folds < 2:
        raise ValueError(f"n_folds must be an int >= 2, got {n_folds!r}")
    n_units = n if groups is None else len(np.unique(groups))
    if n_folds > n_units:
        what = "rows" if groups is None else "groups"
        raise ValueError(f"n_folds ({n_folds}) is more than the {n_units} {what}")
    out = np.empty((repeats, n), dtype=np.int64)
    for r in range(repeats):
        if groups is None:
            order = np.concatenate([rng.permutation(np.flatnonzero(y == c)) for c in np.unique(y)])
            out[r, order] = np.arange(n) % n_folds
        else:
            codes = np.unique(groups, return_inverse=True)[1]
            sizes = np.bincount(codes)
            fold_of_group = np.empty(len(sizes), dtype=np.int64)
            load = np.zeros(n_folds, dtype=np.int64)
            for g in rng.permutation(len(sizes)):
                k = int(np.argmin(load))  # ties go to the lowest fold
                fold_of_group[g] = k
                load[k] += sizes[g]
            out[r] = fold_of_group[codes]
    return out


def _train_masks(folds: np.ndarray, n_folds: int) -> np.ndarray:
    """(N, R*K) 1 where a row trains model r*K + k (it is not in fold k of repeat r)."""
    r, n = folds.shape
    masks = folds.T[:, :, None] != np.arange(n_folds)[None, None, :]
    return masks.reshape(n, r * n_folds).astype(np.float32)


# Per-row L2 penalties tried by C="auto": mean cross-entropy + penalty / 2 * ||W||^2, i.e.
# C = 1 / (penalty * training rows). On SNLI MiniLM and n-gram features (4,800 training rows)
# the held-out log-loss was lowest near penalty 0.2 and C = 1 overfitted badly (log-loss 3.7
# against 1.1 for the class prior).
AUTO_PENALTIES = (1.0, 0.1, 0.01)


def oof_probabilities(
    x: Any,
    y: np.ndarray,
    n_classes: int,
    folds: np.ndarray,
    *,
    C: float | str = "auto",
    device: Any = "cpu",
) -> tuple[np.ndarray, dict[str, Any]]:
    """(R, N, n_classes) out-of-fold class probabilities of L2 logistic regression, and
    how they were fitted (``C``, the held-out log-loss of each ``C`` tried).

    The R x K fold models are fitted as one batched problem with the filter's converged
    solver (:class:`~aflite.LinearEnsemble`, ``C`` as in scikit-learn, on features
    standardised over all rows); each row's probabilities come from the model of its own
    fold. ``C="auto"`` fits each of :data:`AUTO_PENALTIES` and keeps the one with the lowest
    mean held-out log-loss: the best member of the model family, as V-information asks
    (one scalar chosen on held-out rows; no row is ever scored by a model trained on it).
    A class absent from a model's training folds gets probability 0.
    """
    from aflite._internal.device import resolve_device
    from aflite.algorithm.numerics.store import FeatureStore

    dev = resolve_device(device)
    store = FeatureStore(np.asarray(x), dev)
    return _best(C, y, folds, lambda c: _fit_predict(store, y, n_classes, folds, c))


def oof_choice_probabilities(
    x: np.ndarray,
    y: np.ndarray,
    folds: np.ndarray,
    *,
    C: float | str = "auto",
    device: Any = "cpu",
) -> tuple[np.ndarray, dict[str, Any]]:
    """(R, N, K) out-of-fold probabilities of each item's choices under the choice-wise
    model (:class:`~aflite.ChoiceEnsemble`: one weight vector, a softmax over the item's
    real choices; 0 for a padded one), fitted for all R x K folds at once, ``C`` as in
    :func:`oof_probabilities` (``"auto"``: the penalty per training item with the lowest
    held-out log-loss)."""
    import torch

    from aflite._internal.device import resolve_device
    from aflite.algorithm import ChoiceEnsemble
    from aflite.algorithm.models.choice.fit import fit_choices
    from aflite.algorithm.numerics.item_store import choice_store, item_neg

    dev = resolve_device(device)
    n, k, d = x.shape
    store = choice_store(x, dev)
    neg = item_neg(store)
    yt = torch.as_tensor(y, dtype=torch.int64, device=dev)
    n_folds = int(folds.max()) + 1
    train = torch.as_tensor(_train_masks(folds, n_folds), device=dev)
    xs = store.standardised().view(n, k, d)

    def fit_predict(c: float) -> np.ndarray:
        w = fit_choices(store, yt, neg, ChoiceEnsemble(C=c), train=train).weights  # (d, P)
        out = np.empty((folds.shape[0], n, k))
        for r in range(folds.shape[0]):
            own = torch.as_tensor(r * n_folds + folds[r], device=dev)  # the held-out model
            logits = torch.einsum("nkd,dn->nk", xs, w[:, own]).double() + neg.double()
            out[r] = torch.softmax(logits, dim=1).cpu().numpy()
        return out

    return _best(C, y, folds, fit_predict)


def _best(
    C: float | str, y: np.ndarray, folds: np.ndarray, fit_predict: Any
) -> tuple[np.ndarray, dict[str, Any]]:
    """The out-of-fold probabilities of the ``C`` (from the grid for ``"auto"``) with the
    lowest mean held-out log-loss, and the losses."""
    n_folds = int(folds.max()) + 1
    n_train = len(y) * (n_folds - 1) / n_folds
    if C == "auto":
        grid = [1.0 / (pen * n_train) for pen in AUTO_PENALTIES]
    elif isinstance(C, (int, float)) and not isinstance(C, bool) and C > 0:
        grid = [float(C)]
    else:
        raise ValueError(f"C must be a positive number or 'auto', got {C!r}")
    best: tuple[float, float, np.ndarray] | None = None
    losses = {}
    for c in grid:
        probs = fit_predict(c)
        gold = np.take_along_axis(
            probs, np.broadcast_to(y[None, :, None], probs.shape[:2] + (1,)), 2
        )
        loss = float(-np.log(np.clip(gold, 1e-12, 1.0)).mean())
        losses[f"{c:.6g}"] = round(loss, 6)
        if best is None or loss < best[0]:
            best = (loss, c, probs)
    assert best is not None
    return best[2], {"C": best[1], "log_loss": losses}


def _fit_predict(
    store: Any, y: np.ndarray, n_classes: int, folds: np.ndarray, c: float
) -> np.ndarray:
    import torch

    from aflite.algorithm import LinearEnsemble
    from aflite.algorithm.models.linear.ensemble import fit_ensemble

    dev = store.device
    n_folds = int(folds.max()) + 1
    yt = torch.as_tensor(y, dtype=torch.int64, device=dev)
    train = torch.as_tensor(_train_masks(folds, n_folds), device=dev)
    ens, _ = fit_ensemble(store, yt, train, n_classes, LinearEnsemble(C=c))
    r = folds.shape[0]
    own = torch.as_tensor(
        np.arange(r)[None, :] * n_folds + folds.T, dtype=torch.int64, device=dev
    )  # (N, R): the model that held each row out
    out = np.empty((r, len(y), n_classes), dtype=np.float64)
    for s, e, xb in store.chunks():
        logits = ens.logits(xb)  # (n, R*K, C)
        mine = torch.gather(logits, 1, own[s:e, :, None].expand(-1, -1, n_classes))
        out[:, s:e] = torch.softmax(mine.double(), dim=2).permute(1, 0, 2).cpu().numpy()
    return out


def oof_prior(y: np.ndarray, n_classes: int, folds: np.ndarray) -> np.ndarray:
    """(R, N, n_classes) the null model out of fold: each row gets the class frequencies of
    the rows its fold's model trained on (what a model fitted on an empty input learns)."""
    r, n = folds.shape
    n_folds = int(folds.max()) + 1
    out = np.empty((r, n, n_classes), dtype=np.float64)
    for i in range(r):
        counts = np.zeros((n_folds, n_classes))
        np.add.at(counts, (folds[i], y), 1.0)
        train = counts.sum(axis=0, keepdims=True) - counts  # every fold but k
        out[i] = (train / train.sum(axis=1, keepdims=True))[folds[i]]
    return out
