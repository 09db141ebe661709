"""Audits of multiple-choice items (:class:`~aflite.io.choices.Choices`): artifacts that give
the right choice away without the context.

- :func:`choices_only_baseline`: the choice-wise model on the choices alone, cross-validated;
- :func:`answer_position_baseline`: always answering the most frequent answer position;
- :func:`choice_pmi`: words that mark the right choice (word-label PMI, right vs wrong);
- :func:`choice_length`: token counts of right vs wrong choices, and picking the longest or
  the shortest choice.

Each is measured against chance, the mean of 1/K over items (K: an item's number of choices).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.audits.base import AuditResult
from aflite.audits.word_label import tokenize

__all__ = [
    "answer_position_baseline",
    "choice_length",
    "choice_pmi",
    "choices_only_baseline",
]


def _chance(items: Any) -> float:
    return float(np.mean(1.0 / items.n_choices))


def answer_position_baseline(items: Any, *, name: str = "answer-position baseline") -> AuditResult:
    """The accuracy of always answering the most frequent answer position, and each position's
    share of the answers, against chance (1/K on average)."""
    answers = np.asarray(items.answers, dtype=np.int64)
    counts = np.bincount(answers, minlength=items.width)
    n = len(answers)
    shares = counts / max(1, n)
    best = int(np.argmax(counts))
    acc, chance = float(shares[best]), _chance(items)
    rows = [[j, int(counts[j]), float(shares[j])] for j in range(len(counts))]
    summary = (
        f"always answering position {best} is right for {acc:.3f} of {n} items "
        f"(chance {chance:.3f}); shares: " + ", ".join(f"{s:.2f}" for s in shares)
    )
    details = {"accuracy": acc, "chance": chance, "position": best, "shares": shares.tolist()}
    return AuditResult(name, summary, ["position", "answers", "share"], rows, details)


def _pick_accuracy(lengths: list[np.ndarray], answers: np.ndarray, pick: Any) -> float:
    """Expected accuracy of picking ``pick`` (max or min) of each item's lengths, a tie
    broken at random: a tie is no evidence for the right choice."""
    total = 0.0
    for lens, a in zip(lengths, answers):
        best = lens == pick(lens)
        total += best[a] / best.sum()
    return total / max(1, len(answers))


def choice_length(items: Any, *, name: str = "choice length") -> AuditResult:
    """Mean tokens of right and wrong choices, and the accuracy of picking the longest and the
    shortest choice of each item (ties count as a random pick among the tied) vs chance."""
    answers = np.asarray(items.answers, dtype=np.int64)
    lengths = [np.asarray([len(tokenize(o)) for o in opts]) for opts in items.options]
    right = np.asarray([lens[a] for lens, a in zip(lengths, answers)], dtype=np.float64)
    wrong = np.concatenate([np.delete(lens, a) for lens, a in zip(lengths, answers)]).astype(
        np.float64
    )
    longest = _pick_accuracy(lengths, answers, np.max)
    shortest = _pick_accuracy(lengths, answers, np.min)
    chance = _chance(items)
    rows = [
        ["mean tokens, right choices", float(right.mean())],
        ["mean tokens, wrong choices", float(wrong.mean()) if len(wrong) else 0.0],
        ["pick the longest: accuracy", longest],
        ["pick the shortest: accuracy", shortest],
        ["chance", chance],
    ]
    summary = (
        f"right choices {right.mean():.1f} tokens, wrong {wrong.mean():.1f}; picking the "
        f"longest is right for {longest:.3f}, the shortest for {shortest:.3f} (chance {chance:.3f})"
    )
    details = {
        "right_mean": float(right.mean()),
        "wrong_mean": float(wrong.mean()),
        "longest": longest,
        "shortest": shortest,
        "chance": chance,
    }
    return AuditResult(name, summary, ["statistic", "value"], rows, details)


def choice_pmi(
    items: Any, *, min_count: int = 20, top: int = 10, name: str = "choice PMI", max_n: int = 1
) -> AuditResult:
    """Word-label PMI over every choice as a text labelled ``right`` or ``wrong``
    (:func:`aflite.audits.word_label.word_label_pmi`): the words (n-grams up to ``max_n``
    words) most associated with the right choice, with their counts."""
    from aflite.audits.word_label import word_label_pmi

    texts = [o for opts in items.options for o in opts]
    labels = [
        "right" if j == a else "wrong"
        for opts, a in zip(items.options, items.answers)
        for j in range(len(opts))
    ]
    return word_label_pmi(texts, labels, min_count=min_count, top=top, name=name, max_n=max_n)


FOLDS = 5


def choices_only_baseline(
    items: Any, *, folds: int = FOLDS, seed: int = 0, name: str = "choices-only baseline"
) -> AuditResult:
    """The choice-wise model (:class:`~aflite.ChoiceEnsemble`) on
    n-grams of the choices alone, no context: the share of items whose right choice it picks
    out, ``folds``-fold cross-validated, against chance. Well above chance, the choices give
    the answer away."""
    import torch

    from aflite.algorithm import ChoiceEnsemble
    from aflite.algorithm.models.choice.fit import choice_heldout_counts, fit_choices
    from aflite.algorithm.numerics.item_store import choice_store, item_neg
    from aflite.features.choices import spread
    from aflite.features.ngrams import ngram_features

    n = len(items)
    flat = ngram_features([[o for opts in items.options for o in opts]], min_df=1, seed=seed)
    x = spread(np.asarray(flat, dtype=np.float64), items.n_choices)
    device = torch.device("cpu")
    store = choice_store(x, device)
    y = torch.as_tensor(np.asarray(items.answers, dtype=np.int64))
    neg = item_neg(store)
    rng = np.random.default_rng(seed)
    fold = rng.permutation(np.arange(n) % folds)
    held = torch.as_tensor(fold[:, None] == np.arange(folds)[None, :], dtype=torch.float32)
    fit = fit_choices(store, y, neg, ChoiceEnsemble(), train=1.0 - held)
    correct, _ = choice_heldout_counts(store, y, neg, fit, heldout=held)
    acc, chance = float(correct.sum()) / max(1, n), _chance(items)
    per_fold = [float(correct[torch.as_tensor(fold == f)].mean()) for f in range(folds)]
    rows = [[f, int((fold == f).sum()), a] for f, a in enumerate(per_fold)]
    summary = (
        f"the choice-wise model on the choices alone picks the right one for {acc:.3f} of "
        f"{n} items ({folds}-fold cross-validated; chance {chance:.3f}, {x.shape[2]} n-grams)"
    )
    details = {"accuracy": acc, "chance": chance, "folds": folds, "n_features": int(x.shape[2])}
    return AuditResult(name, summary, ["fold", "items", "accuracy"], rows, details)
