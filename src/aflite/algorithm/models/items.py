"""What the model families of multiple-choice items share (``choice``,
:mod:`aflite.algorithm.models.choice`; ``choice-ridge``, :mod:`aflite.algorithm.models.ridge.items`):
the mask of an item's real choices over the stored items. Their store (an item's K choices as
one row) and chance level are declared with each family
(:mod:`aflite.algorithm.numerics.item_store`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aflite._internal.transfer import to_host
from aflite.algorithm.numerics.item_store import check_answers, item_neg
from aflite.algorithm.numerics.store import StoredRows

__all__ = ["ItemModel"]


class ItemModel:
    """The base of a model of items: ``neg`` (N_store, K), 0 for a real choice and ``NEG``
    for a padded one, and ``k``, the most choices an item has, from the store's record of
    each item's real choices (wherever its features are held)."""

    def attach(self, store: StoredRows, raw: Any, y: torch.Tensor, n_classes: int) -> None:
        # ``raw`` (the Model protocol's) is not read: the store knows each item's choices,
        # wherever its features are held
        self.store, self.y = store, y
        valid = store.real_choices(store.rows)
        # an answer must be a real choice: checked here for items read only by the store (a
        # sharded input's), before any phase
        check_answers(valid, to_host(y).astype(np.int64), rows=store.rows)
        self.neg = item_neg(store).to(y.device)
        self.k = valid.shape[1]
