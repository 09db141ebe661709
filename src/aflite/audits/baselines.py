"""Baseline classifiers that reveal artifacts: partial input (e.g. hypothesis-only) and
Max-PPMI (Le Bras et al. 2020), plus the representation-bias estimate as an audit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from aflite._internal.labels import majority_rate
from aflite.algorithm import FilterOptions
from aflite.audits.base import AuditResult
from aflite.audits.options import bias_train_rows
from aflite.audits.word_label import presence_matrix, word_label_counts

__all__ = [
    "partial_input_baseline",
    "max_ppmi_baseline",
    "representation_bias_audit",
    "max_ppmi_features",
    "bias_train_rows",
]


def partial_input_baseline(
    texts: Sequence[str],
    labels: Sequence[Any],
    *,
    field: str = "hypothesis",
    folds: int = 5,
    seed: int = 0,
    name: str | None = None,
) -> AuditResult:
    """Cross-validated accuracy of a logistic regression on one field's word uni+bigrams,
    against the majority-class rate. Well above the majority rate = the field alone gives the
    label away."""
    from aflite.features.ngrams import ngram_features

    x = ngram_features([list(texts)], max_features=20_000, dense=False)
    y = np.asarray(labels)
    accs = []
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        clf = LogisticRegression(max_iter=2000).fit(x[tr], y[tr])
        accs.append(clf.score(x[te], y[te]))
    acc, maj = float(np.mean(accs)), majority_rate(y)
    return AuditResult(
        name or f"{field}-only baseline",
        f"{field}-only accuracy {acc:.3f} vs majority class {maj:.3f} ({folds}-fold CV, {len(y)} rows)",
        ["model", "accuracy", "majority class", "gap"],
        [[f"{field}-only logistic regression", acc, maj, acc - maj]],
        {"fold_accuracies": accs},
    )


def max_ppmi_features(
    train_texts_matrix, train_labels: np.ndarray, n_classes: int, matrix
) -> np.ndarray:
    """For each instance and label, the maximum positive PMI(word, label) over its words, with
    PMI estimated on the training rows only."""
    joint = word_label_counts(train_texts_matrix, train_labels, n_classes) + 1.0  # add-one
    p_label = np.bincount(train_labels, minlength=n_classes) / len(train_labels)
    ppmi = np.maximum(np.log2(joint / joint.sum(axis=1, keepdims=True) / p_label[None, :]), 0.0)
    out = np.zeros((matrix.shape[0], n_classes))
    m = matrix.tocsr()
    for j in range(n_classes):
        vals = m.multiply(ppmi[:, j][None, :]).tocsr()
        out[:, j] = vals.max(axis=1).toarray().ravel()
    return out


def max_ppmi_baseline(
    texts: Sequence[str],
    labels: Sequence[Any],
    *,
    folds: int = 5,
    min_count: int = 1,
    seed: int = 0,
    name: str = "Max-PPMI baseline",
) -> AuditResult:
    """A classifier whose only features are, per label, the largest positive PMI between the
    instance's words and that label (PMI from the training folds)."""
    y_raw = np.asarray(labels)
    classes, y = np.unique(y_raw, return_inverse=True)
    mat, _ = presence_matrix(list(texts), min_count)
    accs = []
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(mat, y):
        f_tr = max_ppmi_features(mat[tr], y[tr], len(classes), mat[tr])
        f_te = max_ppmi_features(mat[tr], y[tr], len(classes), mat[te])
        clf = LogisticRegression(max_iter=1000).fit(f_tr, y[tr])
        accs.append(clf.score(f_te, y[te]))
    acc, maj = float(np.mean(accs)), majority_rate(y_raw)
    return AuditResult(
        name,
        f"Max-PPMI accuracy {acc:.3f} vs majority class {maj:.3f} ({folds}-fold CV)",
        ["model", "accuracy", "majority class", "gap"],
        [["Max-PPMI logistic regression", acc, maj, acc - maj]],
        {"fold_accuracies": accs},
    )


def representation_bias_audit(
    features: Any,
    labels: Sequence[Any],
    *,
    n_partitions: int = FilterOptions.n_partitions,
    train_size: int | float = FilterOptions.train_size,
    seed: int = 0,
    name: str = "representation bias",
) -> AuditResult:
    """Mean predictability of the data under Phi (aflite.predictability_scores).

    ``train_size`` as a count is used as it is (resolve it once with :func:`bias_train_rows`
    when sets are compared); when it leaves no row held out, the result says so instead of
    giving a number.
    """
    from aflite.algorithm import predictability_scores, resolve_size

    y = np.asarray(labels)
    maj = majority_rate(y)
    header = ["estimate", "majority class", "share >= 0.75", "share >= 0.5"]
    t = resolve_size(train_size, len(y), "train_size")
    if t >= len(y):
        return AuditResult(
            name,
            f"representation bias not measured: t = {t} training rows leaves none of the "
            f"{len(y)} rows held out (majority class {maj:.3f})",
            header,
            [],
            {"train_size": t, "n_rows": len(y)},
        )
    ps = predictability_scores(features, labels, n_partitions=n_partitions, train_size=t, seed=seed)
    valid = ps.scores[~np.isnan(ps.scores)]
    return AuditResult(
        name,
        f"representation bias {ps.representation_bias:.3f} (majority class {maj:.3f}) at "
        f"t = {t} training rows; {np.mean(valid >= 0.75):.1%} of rows score >= 0.75",
        header,
        [
            [
                ps.representation_bias,
                maj,
                float(np.mean(valid >= 0.75)),
                float(np.mean(valid >= 0.5)),
            ]
        ],
        {
            "histogram": np.histogram(valid, bins=20, range=(0, 1))[0].tolist(),
            "train_size": t,
            "n_rows": len(y),
        },
    )
