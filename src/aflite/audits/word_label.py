"""Word–label association: PMI (Gururangan et al. 2018) and z-statistics (Gardner et al. 2021)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from scipy.stats import norm

from aflite._internal.text import word_list
from aflite.audits.base import AuditResult

__all__ = [
    "word_label_pmi",
    "word_label_zstats",
    "word_label_counts",
    "tokenize",
    "TOKEN_PATTERN",
    "presence_matrix",
]

TOKEN_PATTERN = r"(?u)\b\w+\b"


def tokenize(text: str) -> list[str]:
    import re

    return re.findall(TOKEN_PATTERN, text.lower())


def presence_matrix(
    texts: Sequence[str], min_count: int = 1, max_n: int = 1
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """(instances x n-grams) 0/1 matrix of which words (and, with ``max_n`` > 1, runs of up to
    ``max_n`` words) occur in each text, and the vocabulary."""
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(
        token_pattern=TOKEN_PATTERN, binary=True, min_df=max(1, min_count), ngram_range=(1, max_n)
    )
    if len(texts) < min_count:
        # no word can be in min_count texts (scikit-learn refuses: 'max_df corresponds to <
        # documents than min_df'): an empty vocabulary, and audits with nothing to list
        return sparse.csr_matrix((len(texts), 0)), np.zeros(0, dtype=object)
    try:
        mat = vec.fit_transform(texts).tocsr()
    except ValueError:  # 'empty vocabulary': no text holds a word seen min_count times
        return sparse.csr_matrix((len(texts), 0)), np.zeros(0, dtype=object)
    return mat, vec.get_feature_names_out()


def word_label_counts(matrix: sparse.spmatrix, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """(V, L): how many texts containing each word carry each label."""
    onehot = sparse.csr_matrix(
        (np.ones(len(codes)), (np.arange(len(codes)), codes)), shape=(len(codes), n_classes)
    )
    return np.asarray((matrix.T @ onehot).todense())


def _label_counts(texts: Sequence[str], labels: Sequence[Any], min_count: int, max_n: int = 1):
    y = np.asarray(labels)
    classes, codes = np.unique(y, return_inverse=True)
    mat, vocab = presence_matrix(texts, min_count, max_n)
    return classes, codes, vocab, word_label_counts(mat, codes, len(classes))


def word_label_pmi(
    texts: Sequence[str],
    labels: Sequence[Any],
    *,
    min_count: int = 20,
    smoothing: float = 1.0,
    top: int = 10,
    name: str = "word-label PMI",
    max_n: int = 1,
) -> AuditResult:
    """PMI(word, label) = log2 p(word, label) / (p(word) p(label)) over texts, with add-k
    smoothing on the word-label counts; words in fewer than ``min_count`` texts are dropped
    (``max_n`` > 1 counts runs of up to that many words as well).

    The table lists the ``top`` words per label with their counts; ``details['pmi']`` maps each
    label to {word: pmi} for every kept word.
    """
    classes, codes, vocab, joint = _label_counts(texts, labels, min_count, max_n)
    n = len(codes)
    p_label = np.bincount(codes, minlength=len(classes)) / n
    k = smoothing
    p_label_given_word = (joint + k) / (joint.sum(axis=1, keepdims=True) + k * len(classes))
    pmi = np.log2(p_label_given_word / p_label[None, :])
    rows: list[list[Any]] = []
    details: dict[str, Any] = {"min_count": min_count, "smoothing": k, "pmi": {}}
    for j, c in enumerate(classes):
        order = np.argsort(-pmi[:, j], kind="stable")[:top]
        for rank, i in enumerate(order, start=1):
            rows.append(
                [
                    str(c),
                    rank,
                    str(vocab[i]),
                    float(pmi[i, j]),
                    int(joint[i, j]),
                    int(joint[i].sum()),
                ]
            )
        details["pmi"][str(c)] = {str(vocab[i]): float(pmi[i, j]) for i in range(len(vocab))}
    tops = "; ".join(f"{c}: {word_list([r[2] for r in rows if r[0] == str(c)])}" for c in classes)
    summary = f"{len(vocab)} words in >= {min_count} texts; top by PMI: {tops}"
    return AuditResult(
        name, summary, ["label", "rank", "word", "pmi", "count with label", "count"], rows, details
    )


def word_label_zstats(
    texts: Sequence[str],
    labels: Sequence[Any],
    *,
    min_count: int = 20,
    alpha: float = 0.01,
    top: int = 10,
    plot: str | Path | None = None,
    name: str = "word-label z-statistics",
) -> AuditResult:
    """Gardner et al. (2021): z = (p̂ − p0) / sqrt(p0 (1 − p0) / n) for p̂ = p(label | word),
    p0 = 1/|labels|, n = texts containing the word. A word is significant for a label when z
    exceeds the one-sided Bonferroni threshold over the vocabulary (alpha / |V|).

    ``plot`` writes a PNG of z against n with the significance line, and of p̂ against n with
    the curve p0 + z* sqrt(p0 (1 − p0) / n).
    """
    classes, codes, vocab, joint = _label_counts(texts, labels, min_count)
    n_word = joint.sum(axis=1)
    p0 = 1.0 / len(classes)
    p_hat = joint / n_word[:, None]
    z = (p_hat - p0) / np.sqrt(p0 * (1 - p0) / n_word[:, None])
    z_star = float(norm.ppf(1 - alpha / max(1, len(vocab))))
    significant = z > z_star
    rows: list[list[Any]] = []
    for j, c in enumerate(classes):
        order = np.argsort(-z[:, j], kind="stable")[:top]
        for i in order:
            rows.append(
                [
                    str(c),
                    str(vocab[i]),
                    float(z[i, j]),
                    float(p_hat[i, j]),
                    int(n_word[i]),
                    bool(significant[i, j]),
                ]
            )
    n_sig = int(significant.any(axis=1).sum())
    summary = (
        f"{n_sig} of {len(vocab)} words significantly associated with a label "
        f"(z > {z_star:.2f}, alpha={alpha} Bonferroni over {len(vocab)} words)"
    )
    details = {
        "z_threshold": z_star,
        "significant": {
            str(c): [str(vocab[i]) for i in np.flatnonzero(significant[:, j])]
            for j, c in enumerate(classes)
        },
    }
    if plot is not None:
        _plot_z(z, p_hat, n_word, classes, p0, z_star, Path(plot))
        details["plot"] = str(plot)
    return AuditResult(
        name, summary, ["label", "word", "z", "p(label|word)", "n", "significant"], rows, details
    )


def _plot_z(z, p_hat, n_word, classes, p0, z_star, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aflite._internal.atomic import atomic_path
    from aflite._internal.text import plot_text

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for j, c in enumerate(classes):
        axes[0].scatter(n_word, z[:, j], s=6, alpha=0.5, label=plot_text(c))
        axes[1].scatter(n_word, p_hat[:, j], s=6, alpha=0.5, label=plot_text(c))
    ns = np.logspace(math.log10(max(1, n_word.min())), math.log10(n_word.max() + 1), 200)
    axes[0].axhline(z_star, color="k", lw=1, ls="--", label=f"z* = {z_star:.2f}")
    axes[1].plot(ns, p0 + z_star * np.sqrt(p0 * (1 - p0) / ns), "k--", lw=1, label="significance")
    for ax, ylab in zip(axes, ["z", "p(label | word)"]):
        ax.set_xscale("log")
        ax.set_xlabel("n (texts containing the word)")
        ax.set_ylabel(ylab)
    axes[0].legend(fontsize=8)
    axes[0].set_title("z-statistic of each word and label")
    axes[1].set_title("p(label | word) with the significance curve")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
