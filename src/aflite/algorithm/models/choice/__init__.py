"""The choice-wise family (``model="choice"``, what the logistic family runs on multiple-choice
items): per partition one weight vector shared by an item's choices, a
softmax over the item's real choices, every partition fitted at once.

Its settings are :class:`~.settings.ChoiceEnsemble`; its model (:mod:`.model`) fits through
:mod:`.fit`, whose rule for a held-out item (its right choice picked out, a tie a draw) the
exact family's items variant shares.
"""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports
from aflite.algorithm.models.choice.settings import ChoiceEnsemble
from aflite.algorithm.models.contract import Model, register_model
from aflite.algorithm.models.linear.settings import LinearEnsemble
from aflite.algorithm.numerics.item_store import choice_store, item_chance

__all__ = ["ChoiceEnsemble", "ChoiceModel"]

__getattr__, __dir__ = lazy_exports(
    __name__, {"ChoiceModel": "aflite.algorithm.models.choice.model"}
)


def _is_choice_ensemble(model: object) -> bool:
    return isinstance(model, ChoiceEnsemble)


@register_model(
    "choice",
    description="choice-wise linear model of multiple-choice items (features (N, K, d))",
    accepts=_is_choice_ensemble,
    shown="choice-wise logistic regression",
    blocks=True,
    distributed=True,
    fits="items",
    items="choice",
    store=choice_store,
    chance=item_chance,
)
def choice(settings: ChoiceEnsemble | LinearEnsemble | None) -> Model:
    from aflite.algorithm.models.choice.model import ChoiceModel

    return ChoiceModel(settings)
