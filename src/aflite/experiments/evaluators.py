"""The registry of evaluators for the compare experiment: models trained on each training set
and scored on each evaluation set. An evaluator is a class registered with
:func:`register_evaluator`; its constructor takes ``(name, fields, partial_field, seed)`` and it
has ``fit(train, phi) -> self`` and ``predict(data, phi) -> labels`` (the experiment computes
accuracy from the predictions, through a label map when the set needs one). A class with
``takes_argument = True`` is named ``KIND:ARG`` (``finetune:MODEL``) and may check such a name
with a classmethod ``check_name``. A class with ``items = True`` evaluates multiple-choice
items, and only those (:mod:`aflite.experiments.choice_eval`). Any ``sklearn.MODULE.Class``
name also works, trained on the filter's features. The built-in evaluators are here and in :mod:`aflite.experiments.finetune_eval`
(listed in :mod:`aflite.plugins`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from aflite._internal.registry import Entry, Registry
from aflite._internal.text import did_you_mean
from aflite.errors import DataError

if TYPE_CHECKING:
    from aflite.experiments.sets import LabelledTexts

__all__ = [
    "EVALUATORS",
    "check_evaluator",
    "default_evaluators",
    "evaluate",
    "make_evaluator",
    "register_evaluator",
]


@dataclass(frozen=True)
class Evaluator(Entry):
    """A registered evaluator class (``target``); ``takes_argument``: named ``KIND:ARG``
    (read from the class's ``takes_argument`` when not given); ``items``: it evaluates
    multiple-choice items, and only those (read from the class's ``items``: ``fit`` gets
    (N, K, d) features and answer positions, ``predict`` returns positions). The description
    defaults to the first paragraph of the class's docstring."""

    takes_argument: bool = False
    items: bool = False

    def __post_init__(self) -> None:
        given = self.takes_argument or getattr(self.target, "takes_argument", False)
        object.__setattr__(self, "takes_argument", bool(given))
        object.__setattr__(self, "items", bool(self.items or getattr(self.target, "items", False)))
        if not self.description:
            doc = " ".join((self.target.__doc__ or "").strip().split("\n\n")[0].split())
            object.__setattr__(self, "description", doc)


EVALUATORS: Registry[Evaluator] = Registry("evaluator", entry=Evaluator)
register_evaluator = EVALUATORS.register
"""Register an evaluator class under a name (``@register_evaluator("name")``)."""


def _estimator(name: str) -> Any:
    module, _, cls = name.rpartition(".")
    if not module.startswith("sklearn"):
        hint = did_you_mean(name, list(EVALUATORS))
        raise DataError(
            f"unknown evaluator '{name}' (choose from {', '.join(EVALUATORS.usages())} "
            f"or sklearn.MODULE.Class{hint})"
        )
    try:
        return getattr(importlib.import_module(module), cls)()
    except (ImportError, AttributeError):
        raise ValueError(f"unknown scikit-learn estimator '{name}'") from None


def _registered(name: str) -> type | None:
    entry = EVALUATORS.get(name)
    if entry is not None and not entry.takes_argument:
        return entry.target
    entry = EVALUATORS.get(name.partition(":")[0])
    return entry.target if entry is not None and entry.takes_argument else None


def default_evaluators(*, items: bool = False) -> list[str]:
    """The evaluators a comparison trains when none are named: every registered one that
    needs no argument (``finetune:MODEL`` must be asked for), of labelled rows, or of
    multiple-choice ``items``."""
    return [n for n, e in EVALUATORS.items() if not e.takes_argument and e.items == items]


def check_evaluator(name: str, *, items: bool | None = None) -> None:
    """A ValueError (DataError) for a name that is neither registered nor a scikit-learn
    class, or whose argument its evaluator refuses; with ``items`` True (False), one that
    cannot evaluate multiple-choice items (labelled rows)."""
    cls = _registered(name)
    if cls is None:
        _estimator(name)
    elif hasattr(cls, "check_name"):
        cls.check_name(name)
    if items is None or bool(getattr(cls, "items", False)) == items:
        return
    if items:
        raise DataError(
            f"evaluator '{name}' cannot evaluate multiple-choice items (evaluators for items: "
            f"{', '.join(default_evaluators(items=True))})"
        )
    raise DataError(
        f"evaluator '{name}' evaluates multiple-choice items only (read the sets as items: "
        "--choices-field / --choices-fields, choices=)"
    )


def make_evaluator(name: str, fields: list[str], partial_field: str, seed: int) -> Any:
    cls = _registered(name) or _SklearnEvaluator
    return cls(name, fields, partial_field, seed)


class BaseEvaluator:
    """What an evaluator class inherits: its name, the text fields it sees, the partial-input
    field and its seed; accuracy from ``predict``."""

    def __init__(self, name: str, fields: list[str], partial_field: str, seed: int) -> None:
        self.name, self.fields, self.partial_field, self.seed = name, fields, partial_field, seed

    def predict(self, data: LabelledTexts, phi: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def score(self, data: LabelledTexts, phi: np.ndarray | None) -> float:
        """Accuracy on ``data`` in the training label space."""
        return float(np.mean(self.predict(data, phi) == data.labels))


class _SklearnEvaluator(BaseEvaluator):
    """A scikit-learn classifier on the filter's features."""

    def _model(self) -> Any:
        return _estimator(self.name)

    def fit(self, train: LabelledTexts, phi: np.ndarray | None) -> _SklearnEvaluator:
        self.model = self._model()
        self.model.fit(phi, train.labels)
        return self

    def predict(self, data: LabelledTexts, phi: np.ndarray | None) -> np.ndarray:
        return np.asarray(self.model.predict(phi))


@register_evaluator("logreg")
class LogRegEvaluator(_SklearnEvaluator):
    """Logistic regression on the filter's features."""

    def _model(self) -> Any:
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=2000)


@register_evaluator("partial")
class PartialInputEvaluator(BaseEvaluator):
    """Logistic regression on word n-grams of the partial-input field alone."""

    def fit(self, train: LabelledTexts, phi: np.ndarray | None) -> PartialInputEvaluator:
        from sklearn.linear_model import LogisticRegression

        from aflite.features.ngrams import NgramVectorizer

        texts = [train.texts[f] for f in self._fields()]
        self.vec = NgramVectorizer(max_features=20_000).fit(texts)
        self.model = LogisticRegression(max_iter=2000).fit(
            self.vec.transform(texts, dense=False), train.labels
        )
        return self

    def _fields(self) -> list[str]:
        return [self.partial_field]

    def predict(self, data: LabelledTexts, phi: np.ndarray | None) -> np.ndarray:
        x = self.vec.transform([data.texts[f] for f in self._fields()], dense=False)
        return np.asarray(self.model.predict(x))


@register_evaluator("ngrams")
class NgramEvaluator(PartialInputEvaluator):
    """Logistic regression on word n-grams of every text field (one vocabulary per field):
    for NLI, a pair model that needs no representation of the filter's."""

    def _fields(self) -> list[str]:
        return self.fields


@register_evaluator("max-ppmi")
class MaxPPMIEvaluator(BaseEvaluator):
    """The Max-PPMI baseline: per-class maximum word-label PPMI of the partial-input field."""

    def fit(self, train: LabelledTexts, phi: np.ndarray | None) -> MaxPPMIEvaluator:
        from sklearn.linear_model import LogisticRegression

        from aflite.audits.baselines import max_ppmi_features
        from aflite.audits.word_label import presence_matrix

        self.classes, codes = np.unique(train.labels, return_inverse=True)
        mat, vocab = presence_matrix(train.texts[self.partial_field])
        self.vocab = {w: i for i, w in enumerate(vocab)}
        self.train_mat, self.train_codes = mat, codes
        feats = max_ppmi_features(mat, codes, len(self.classes), mat)
        self.model = LogisticRegression(max_iter=1000).fit(feats, codes)
        return self

    def predict(self, data: LabelledTexts, phi: np.ndarray | None) -> np.ndarray:
        from sklearn.feature_extraction.text import CountVectorizer

        from aflite.audits.baselines import max_ppmi_features

        vec = CountVectorizer(token_pattern=r"(?u)\b\w+\b", binary=True, vocabulary=self.vocab)
        mat = vec.transform(data.texts[self.partial_field])
        feats = max_ppmi_features(self.train_mat, self.train_codes, len(self.classes), mat)
        return self.classes[self.model.predict(feats)]


def evaluate(
    evaluator: Any, data: LabelledTexts, phi: np.ndarray | None, label_map: Any = None
) -> float:
    """Accuracy of a fitted evaluator on ``data``; predictions go through ``label_map`` when
    the set is scored in a mapped label space. An evaluator with ``score`` but no ``predict``
    can only be scored in its training labels."""
    from aflite.experiments.labels import mapped_accuracy

    if hasattr(evaluator, "predict"):
        return mapped_accuracy(evaluator.predict(data, phi), data.labels, label_map)
    if label_map:
        raise DataError(
            f"evaluator '{getattr(evaluator, 'name', evaluator)}' has no predict(), so its "
            "predictions cannot go through --label-map"
        )
    return float(evaluator.score(data, phi))
