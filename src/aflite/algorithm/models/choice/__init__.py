"""The choice-wise family of multiple-choice items (``model="choice"``): its model
(:mod:`.model`) and its fit (:mod:`.fit`)."""

from aflite._internal.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {name: "aflite.algorithm.models.choice.model" for name in ("ChoiceModel", "choice_model")},
)
