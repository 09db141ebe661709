"""The public API's types: every annotation resolves, and the choices it names are the ones
the code accepts."""

from __future__ import annotations

import typing

import pytest

import aflite
from aflite import types
from aflite.algorithm.loop import selection
from aflite.jobs import FilterJob

PUBLIC = [aflite.adversarial_filter, aflite.predictability_scores, aflite.representation_bias]


@pytest.mark.parametrize("fn", PUBLIC, ids=lambda f: f.__name__)
def test_public_annotations_resolve_without_any(fn):
    import torch  # noqa: F401 -- DeviceLike names torch.device

    from aflite.algorithm import ChoiceEnsemble, LinearEnsemble  # noqa: F401
    from aflite.algorithm.models.contract import Model  # noqa: F401

    ns = {
        **vars(types),
        "torch": torch,
        "Model": Model,
        "LinearEnsemble": LinearEnsemble,
        "ChoiceEnsemble": ChoiceEnsemble,
    }
    hints = typing.get_type_hints(fn, globalns={**fn.__globals__, **ns})
    loose = [name for name, hint in hints.items() if hint is typing.Any and name != "kwargs"]
    assert not loose, f"{fn.__name__}: parameters typed Any: {loose}"


def test_the_strategy_literal_is_what_the_filter_accepts():
    assert types.STRATEGIES == typing.get_args(types.Strategy) == selection.STRATEGIES
    with pytest.raises(ValueError, match="strategy"):
        aflite.adversarial_filter([[0.0], [1.0]] * 5, [0, 1] * 5, target_size=4, strategy="slice")


def test_job_fields_are_typed_with_the_public_literals():
    hints = typing.get_type_hints(FilterJob)
    assert hints["strategy"] == types.Strategy
    assert hints["balance"] == types.Balance


def test_a_scikit_learn_classifier_satisfies_the_classifier_protocol():
    from sklearn.linear_model import LogisticRegression

    assert isinstance(LogisticRegression(), types.Classifier)
    assert not isinstance("linear", types.Classifier)
