"""The choice-wise model family: a phase of AFLITE on multiple-choice items (features (N, K, d)).

Each row of the store is one item, its K choices' standardised features side by side
(:func:`aflite.algorithm.numerics.item_store.choice_store`), so partitions, compaction and the slice
selection work on items unchanged; an item is kept or removed with all its choices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite.algorithm.loop.partitions import BlockDesign
from aflite.algorithm.models.base import PhaseCounts, register_model
from aflite.algorithm.models.choice.fit import ChoiceEnsemble, choice_heldout_counts, fit_choices
from aflite.algorithm.models.items import ItemModel
from aflite.algorithm.numerics.blocks import TASK_ROWS, plan_blocks

__all__ = ["ChoiceModel", "choice_model"]


def _is_choice_ensemble(model: object) -> bool:
    return isinstance(model, ChoiceEnsemble)


@register_model(
    "choice",
    description="choice-wise linear model of multiple-choice items (features (N, K, d))",
    accepts=_is_choice_ensemble,
)
class ChoiceModel(ItemModel):
    """All partitions' choice-wise models of a phase fitted at once
    (:mod:`aflite.algorithm.models.choice.fit`); a held-out item counts as predicted when its
    right choice is picked out."""

    supports_blocks = True

    def __init__(self, model: ChoiceEnsemble | None = None) -> None:
        self.model = model or ChoiceEnsemble()
        self._valid: np.ndarray | None = None

    def score(
        self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        fit = fit_choices(self.store, self.y, self.neg, self.model, train=train)
        correct, held = choice_heldout_counts(self.store, self.y, self.neg, fit, heldout=heldout)
        return PhaseCounts(correct, held, fit.report.to_dict())

    def score_blocks(
        self, design: BlockDesign, positions: torch.Tensor, current: torch.Tensor
    ) -> PhaseCounts:
        """One phase on block partitions of the items."""
        # a task of TASK_ROWS rows of d features stays in cache: here a row is an item's K choices
        rows = (1 << 18 if self.store.device.type == "cuda" else TASK_ROWS) // self.k
        plan = plan_blocks(self.store, self.y, design, positions, self.k, task_rows=max(1, rows))
        fit = fit_choices(self.store, self.y, self.neg, self.model, plan=plan)
        correct, held = choice_heldout_counts(self.store, self.y, self.neg, fit, plan=plan)
        return PhaseCounts(correct, held, fit.report.to_dict())

    def describe(self) -> str:
        return repr(self.model)


def choice_model(model: Any, backend: Any = None) -> Any:
    """The model of a multiple-choice run: ``"choice"``, ``"linear"`` or ``"auto"`` (the
    default model names) -> the choice-wise model with default settings; a :class:`ChoiceEnsemble` as is; a
    :class:`~aflite.LinearEnsemble` lends its C, tol, max_iter and history; ``"ridge"`` or a
    :class:`~aflite.RidgeEnsemble` -> the choice-wise least-squares model
    (:mod:`~aflite.algorithm.models.ridge.items`)."""
    from aflite.algorithm.models.linear.ensemble import LinearEnsemble
    from aflite.algorithm.models.ridge.fit import RidgeEnsemble
    from aflite.algorithm.models.ridge.items import ChoiceRidgeModel

    if backend is not None:
        raise ValueError(
            "multiple-choice features run on the local choice-wise model only (no backend)"
        )
    if isinstance(model, str) and model in ("choice", "linear", "auto"):
        return ChoiceModel(ChoiceEnsemble())
    if isinstance(model, str) and model in ("ridge", "choice-ridge"):
        return ChoiceRidgeModel()
    if isinstance(model, RidgeEnsemble):
        if model.form not in ("auto", "primal"):
            raise ValueError(
                "multiple-choice items are fitted by the exact family's primal form only: "
                f"use RidgeEnsemble(form='auto') or form='primal', not form={model.form!r}"
            )
        return ChoiceRidgeModel(model)
    if isinstance(model, ChoiceEnsemble):
        return ChoiceModel(model)
    if isinstance(model, LinearEnsemble):
        return ChoiceModel(
            ChoiceEnsemble(C=model.C, tol=model.tol, max_iter=model.max_iter, history=model.history)
        )
    if isinstance(model, str):
        from aflite.algorithm.models.base import check_model_name

        check_model_name(model)  # an unknown name: the registry's message, with a did-you-mean
    raise ValueError(
        f"features of shape (n_items, n_choices, n_features) are scored by the choice-wise "
        f"models: use model='choice' (or a ChoiceEnsemble) or model='ridge' (or a "
        f"RidgeEnsemble), not {model!r}"
    )
