"""What the choice-wise model families share (:mod:`~.choice`, :mod:`~.choice_ridge`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite.algorithm.numerics.item_store import choice_chance, choice_store, valid_choices
from aflite.algorithm.numerics.margins import NEG
from aflite.algorithm.numerics.store import FeatureStore

__all__ = ["ItemModel"]


class ItemModel:
    """What the choice-wise families share: the item store (an item's K choices as one row),
    the mask of real choices, and the chance level of a set of items."""

    def make_store(self, x: np.ndarray, device: torch.device, **kwargs: Any) -> FeatureStore:
        """The phase runner's store: one row of K*d item-centred features per item."""
        self._valid = valid_choices(x)
        return choice_store(x, device, **kwargs)

    def attach(self, store: FeatureStore, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        if getattr(self, "_valid", None) is None:
            self._valid = valid_choices(raw)
        self.store, self.y = store, y
        valid = torch.as_tensor(self._valid[store.rows], device=store.device)
        self.neg = torch.where(valid, 0.0, NEG)
        self.k = valid.shape[1]

    def chance(self, rows: np.ndarray, labels: np.ndarray) -> float:
        """Chance level of the items ``rows`` (input positions) with answers ``labels``."""
        return choice_chance(labels, self._valid[rows].sum(axis=1))
