"""What the model families of multiple-choice items share (``choice``,
:mod:`aflite.algorithm.models.choice`; ``choice-ridge``, :mod:`aflite.algorithm.models.ridge.items`):
the mask of an item's real choices over the stored items. Their store (an item's K choices as
one row) and chance level are declared with each family
(:mod:`aflite.algorithm.numerics.item_store`)."""

from __future__ import annotations

import numpy as np
import torch

from aflite.algorithm.numerics.item_store import valid_choices
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["ItemModel"]


class ItemModel:
    """The base of a model of items: ``neg`` (N_store, K), 0 for a real choice and ``NEG``
    for a padded one, and ``k``, the most choices an item has."""

    def __init__(self) -> None:
        self._valid: np.ndarray | None = None  # (N, K) over the input's items, read once

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        if self._valid is None:
            self._valid = valid_choices(raw)
        self.store, self.y = store, y
        valid = torch.as_tensor(self._valid[store.rows], device=store.device)
        self.neg = torch.where(valid, 0.0, NEG)
        self.k = valid.shape[1]
