"""The compare experiment on multiple-choice items: the choice-wise model (``choice``) trained on
D, on a random D_n of the filtered size and on the filtered D(Phi), scored by how often it
picks the right choice on dev, on dev filtered by the same procedure and on out-of-distribution
sets, each beside its chance level: the best guess from answer positions alone, max(1/K, the
share of the most frequent answer position)."""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.algorithm import PRESETS
from aflite.errors import DataError
from aflite.experiments.compare_run import EvalSet, PreparedCompare, ids_of
from aflite.experiments.evaluators import check_evaluator, default_evaluators, make_evaluator
from aflite.experiments.sets import LabelledTexts
from aflite.io.choices import Choices
from aflite.io.labelled import LabelledData, read_labelled

__all__ = ["item_set", "prepare_items", "read_item_sets"]


def item_set(name: str, data: Any, read: dict[str, Any]) -> tuple[LabelledTexts, Choices]:
    """Set ``name`` as items: a :class:`LabelledData` read with ``choices=``, or any input
    :func:`read_labelled` reads, read with the item options ``read`` (label field ``label``)."""
    if not isinstance(data, LabelledData):
        data = read_labelled(data, **read)
    if data.choices is None:
        raise DataError(
            f"{name}: not read as multiple-choice items; read every set with the same "
            "choices= (--choices-field / --choices-fields)"
        )
    return LabelledTexts.of(data), data.choices


def read_item_sets(sets: list[tuple[str, Any]], read: dict[str, Any]) -> list[LabelledData]:
    """The ``(name, data)`` sets of a comparison read as items, train first; an answer format
    not given in ``read`` is the one detected on train, for every set: a 0-based set none of
    whose answers is 0 would otherwise be read as 1-based, every answer one off. A set given
    already read must not have detected indexes of the other base."""
    out: list[LabelledData] = []
    for name, data in sets:
        if not isinstance(data, LabelledData):
            data = read_labelled(data, **read)
        items = item_set(name, data, read)[1]
        if not out:
            first = items
            read = read | {"answer_format": items.answer_format}
        elif items.detected and {items.answer_format, first.answer_format} == {"index0", "index1"}:
            raise DataError(
                f"{name}: answers detected as {items.answer_format}, the training set's as "
                f"{first.answer_format}; read every set with the same answer_format= "
                "(--answer-format)"
            )
        out.append(data)
    return out


def prepare_items(
    train: Any,
    dev: Any,
    *,
    read: dict[str, Any],
    ood: dict[str, Any],
    features: str,
    choice_context: str,
    evaluators: list[str] | None,
    options: Any,
    device: str,
    seed: int,
) -> PreparedCompare:
    """:func:`aflite.experiments.compare_experiment` on items (its options, checked there),
    ready for :func:`~aflite.experiments.compare_run.run_compare`."""
    from aflite.experiments.sizes import check_sizes
    from aflite.features.build import parse_feature_spec
    from aflite.features.choices import shared_choice_features

    evaluators = default_evaluators(items=True) if evaluators is None else list(evaluators)
    for ev in evaluators:
        check_evaluator(ev, items=True)
    spec = parse_feature_spec(features)
    names = ["train", "dev", *ood]
    sets = read_item_sets(list(zip(names, [train, dev, *ood.values()])), read)
    (tr, tr_items), (dv, dv_items), *rest = (item_set(n, d, read) for n, d in zip(names, sets))
    others = dict(zip(ood, rest))
    dev_options = check_sizes(options, len(tr), len(dv))
    represent = shared_choice_features(
        spec, tr_items, context=choice_context, seed=seed, device=device
    )
    phi_train, phi_dev = represent(tr_items), represent(dv_items)
    fixed: dict[str, EvalSet] = {"dev": (dv, phi_dev, dv_items)}
    for name, (data, items) in others.items():
        key = name if name not in ("dev", "dev (filtered)") else f"{name} (ood)"
        fixed[key] = (data, represent(items), items)
    fields = list(tr.texts)

    def fit(ev_name: str, idx: np.ndarray, run_seed: int) -> Any:
        return make_evaluator(ev_name, fields, fields[-1], run_seed).fit(
            tr.subset(idx), phi_train[idx]
        )

    def filtered_dev(kept: np.ndarray) -> EvalSet:
        return dv.subset(kept), phi_dev[kept], dv_items.subset(kept)

    return PreparedCompare(
        phi_train=phi_train,
        y_train=tr_items.answers,
        groups_train=tr.groups,
        ids_train=ids_of(tr),
        ids_dev=ids_of(dv),
        phi_dev=phi_dev,
        y_dev=dv_items.answers,
        groups_dev=dv.groups,
        options=options,
        dev_options=dev_options,
        fixed=fixed,
        evaluators=evaluators,
        fit=fit,
        score=lambda ev, _name, entry, _predicted: float(ev.score(entry[0], entry[1])),
        filtered_dev=filtered_dev,
        # the accuracy of the best guess from answer positions alone
        chance=lambda entry: entry[2].chance(),
        # a filter can skew where the right answers sit
        gold=lambda entry: entry[2].answers,
        warm_up=0,
        details={
            "features": features,
            "choice_context": choice_context,
            "filter_options": options.changed_from(PRESETS["practical"]),
            "items": tr_items.as_dict() | {"note": tr_items.note()},
            "sets_represented": 2 + len(others),
        },
        fields_note=sets[0].fields.note(),
        items=tr_items,
    )
