"""The evaluator of multiple-choice items in the compare experiment: ``choice``, the choice-wise
linear model (:class:`aflite.ChoiceEnsemble`, the filter's own model family) fitted once on a
training set's items and scored by how often it picks the right choice."""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.experiments.evaluators import BaseEvaluator, register_evaluator

__all__ = ["ChoiceEvaluator"]


@register_evaluator("choice")
class ChoiceEvaluator(BaseEvaluator):
    """The choice-wise linear model on the filter's features of each choice: one weight vector
    shared by an item's choices, a softmax over them (multiple-choice items only)."""

    items = True

    def fit(self, train: Any, phi: np.ndarray | None) -> ChoiceEvaluator:
        """Fit one model on every item of ``train`` (answers in ``train.labels``, as text)."""
        import torch

        from aflite.algorithm import ChoiceEnsemble
        from aflite.algorithm.models.choice.fit import fit_choices
        from aflite.algorithm.numerics.item_store import (
            check_choices,
            choice_scale,
            choice_store,
            item_neg,
        )

        x, y, _ = check_choices(phi, train.labels.astype(np.int64))
        dev = torch.device("cpu")
        store = choice_store(x, dev)
        neg = item_neg(store)
        every = torch.ones((len(y), 1), dtype=torch.float32)
        fit = fit_choices(store, torch.as_tensor(y), neg, ChoiceEnsemble(), train=every)
        # the store's coordinates are item-centred and scaled: scaling the weights instead
        # scores raw choices alike (a shift an item's choices share changes no softmax)
        self.weights = choice_scale(x) * fit.weights[:, 0].double().numpy()
        return self

    def _scores(self, phi: np.ndarray | None) -> np.ndarray:
        from aflite.algorithm.numerics.item_store import valid_choices

        x = np.asarray(phi, dtype=np.float64)
        return np.where(valid_choices(x), np.nan_to_num(x) @ self.weights, -np.inf)

    def predict(self, data: Any, phi: np.ndarray | None) -> np.ndarray:
        """Each item's predicted choice position; -1 where the top score is tied (a tie is not
        broken by position, which would credit where right answers tend to sit)."""
        scores = self._scores(phi)
        pred = scores.argmax(axis=1)
        pred[(scores == scores.max(axis=1, keepdims=True)).sum(axis=1) > 1] = -1
        return pred

    def score(self, data: Any, phi: np.ndarray | None) -> float:
        """Accuracy: the share of items whose right choice scores highest, a tie of m choices
        with the right one counting 1/m (a guess among them), so items the model cannot tell
        apart count at chance."""
        scores = self._scores(phi)
        top = scores == scores.max(axis=1, keepdims=True)
        y = data.labels.astype(np.int64)
        return float(np.mean(top[np.arange(len(y)), y] / top.sum(axis=1)))
