"""Table-3 protocol (Le Bras et al. 2020): train evaluators on the full data D, on a random
subset D_n of the filtered size, and on the filtered set D(Phi); evaluate on the original dev
set, on the dev set filtered by the same procedure, and on any out-of-distribution sets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from aflite._internal.labels import majority_rate
from aflite._internal.options import config_fields
from aflite.algorithm import PRESETS, FilterOptions
from aflite.errors import DataError
from aflite.experiments.compare_run import EvalSet, PreparedCompare, ids_of, run_compare
from aflite.experiments.evaluators import (
    EVALUATORS,
    check_evaluator,
    default_evaluators,
    evaluate,
    make_evaluator,
)
from aflite.experiments.labels import check_label_map, label_space, mapped_accuracy
from aflite.experiments.options import CompareOptions, check_item_options
from aflite.experiments.results import CompareResult
from aflite.experiments.sets import LabelledTexts, experiment_set
from aflite.experiments.sizes import check_sizes
from aflite.io.labelled import LabelledData, read_labelled

__all__ = ["CompareResult", "compare_experiment", "EVALUATORS"]

_OWN = {f.name: f.default for f in config_fields(CompareOptions)}  # compare's own defaults


def compare_experiment(
    train: Any,
    dev: Any,
    *,
    features: str = "ngrams",
    feature_fields: Sequence[str] | None = None,
    partial_field: str | None = None,
    evaluators: Sequence[str] | None = None,
    ood: dict[str, Any] | None = None,
    ood_labels: Sequence[Any] | dict[str | None, Sequence[Any]] | None = None,
    options: FilterOptions | None = None,
    warmup_fraction: float | None = None,
    warmup_finetune: bool = False,
    cache_dir: str | None = None,
    device: str = "auto",
    seed: int = _OWN["seed"],
    label_map: dict[Any, Any] | None = None,
    seeds: int = _OWN["seeds"],
    progress: bool = False,
    choices: str | Sequence[str] | None = None,
    context: str | Sequence[str] | None = None,
    blank: str | None = None,
    answer_format: str | None = None,
    choice_context: str = "joint",
    **filter_options: Any,
) -> CompareResult:
    """Run the protocol (the paper's Table 3): train ``evaluators`` on D, a random D_n of the
    filtered size and the filtered D(Phi); score them on dev, on dev filtered by the same
    procedure, and on each ``ood`` set.

    Each set is a :class:`~aflite.io.labelled.LabelledData` from
    :func:`~aflite.io.read_labelled` (``read_labelled(rows, text=["premise", "hypothesis"],
    group="premise")``), or any input it reads with its defaults; every set is checked there,
    as ``aflite experiment compare`` checks its files, and must have the training set's text
    fields. The group field of the training and dev sets keeps rows together in the filter; that
    of an ``ood`` set breaks its accuracy down by value (below).

    The options are the comparison's own
    (:class:`~aflite.experiments.options.CompareOptions`, which ``aflite experiment compare``
    takes too), checked there (a bad value is a :class:`~aflite.config.ConfigError` naming
    it), and the filter's: an
    :class:`aflite.FilterOptions` (``options``) or keywords of the same names
    (``target_size``, ``threshold``, ...), from the defaults of ``aflite filter`` (the
    ``practical`` preset); sizes given as counts apply to D, and dev is filtered to the same
    fractions. Every arm uses one representation
    (:func:`~aflite.experiments.represent.shared_representation`): ``features`` is any text
    ``--features`` spec over ``feature_fields`` (all text fields by default; the evaluators
    always see every field), fitted on the training file, optionally through a warm-up model
    (``warmup_fraction``, ``warmup_finetune``; the warm-up rows are then not part of D);
    embeddings go through the cache in ``cache_dir``. ``evaluators`` are names from
    ``EVALUATORS`` (all that need no argument by default), ``finetune:MODEL[:key=value...]``
    (:mod:`aflite.experiments.finetune_eval`) or ``sklearn.MODULE.Class``.

    Every evaluation set must carry labels the models were trained on; a set with other labels
    (HANS: entailment / non-entailment for a 3-class NLI model) is scored through
    ``label_map``, which maps predicted labels to the set's (``{"neutral": "non-entailment",
    "contradiction": "non-entailment"}``). Sets within the training labels are scored as they
    are. A set that fits neither is a DataError naming it and its unseen labels.

    ``ood_labels`` keeps only the rows of each ``ood`` set with those gold labels (the paper's
    HANS columns are its ``["non-entailment"]`` rows); a dict gives them per set name (key
    None: every other set). An ``ood`` set with a group field is also scored per value,
    each as an evaluation set ``NAME[VALUE]`` after the whole set (its size and majority rate
    in ``sizes`` and ``majority``).

    ``seeds=K`` repeats the filter (of D and of dev) and the random subset K times with seeds
    ``seed, seed + 1, ...``; the result holds every run, and its table the mean ± standard
    deviation over runs and the paired difference filtered − random. The representation and
    the models trained on D are the same in every run.

    Multiple-choice items: ``choices``, ``context``, ``blank``, ``answer_format`` (as in
    :func:`aflite.filter_dataset`) read every set given as a file or table as items (label
    field ``label``; or pass sets read by ``read_labelled(..., choices=...)``). The filter
    keeps or removes whole items, the representation is fitted on the training items
    (``choice_context`` as in the filter), and the evaluator is ``choice``, the choice-wise
    model, scored by how often it picks the right choice; ``majority`` and the table's
    ``chance`` row hold each set's chance level, max(1/K, the most frequent answer
    position's share). Options of labelled rows (``feature_fields``, ``partial_field``,
    ``label_map``, ``ood_labels``, a warm-up, ``balance``) and evaluators of labelled rows
    are refused.
    """
    from aflite._internal.device import resolve_device
    from aflite.experiments.represent import shared_representation
    from aflite.io.choices import check_answer_format, check_choice_context, check_item_fields

    check_answer_format(answer_format, "answer_format")
    check_choice_context(choice_context, "choice_context")
    own = CompareOptions.check_fields(
        {
            "feature_fields": feature_fields,
            "partial_field": partial_field,
            "evaluators": evaluators,
            "seed": seed,
            "seeds": seeds,
            "label_map": label_map,
        }
    )
    feature_fields, evaluators, label_map = (
        own["feature_fields"],
        own["evaluators"],
        own["label_map"],
    )
    options = FilterOptions.of(
        PRESETS["practical"] if options is None else options, **filter_options
    )
    balance = options.balance
    if getattr(train, "choices", None) is None:
        from types import SimpleNamespace

        # item options without choices= would be ignored: refused, as the command line does
        given = {"choices": choices, "context": context, "blank": blank}
        check_item_fields(
            SimpleNamespace(label="label", text=(), answer_format=answer_format,
                            choice_context=choice_context, **given)
        )  # fmt: skip
    if choices is not None or getattr(train, "choices", None) is not None:
        from aflite.experiments.compare_items import prepare_items

        check_item_options(
            {
                "feature_fields": feature_fields,
                "partial_field": partial_field,
                "ood_labels": ood_labels,
                "label_map": label_map,
                "balance": balance,
                "warmup_fraction": warmup_fraction,
                "warmup_finetune": warmup_finetune,
                "features": features,
            }
        )
        read = {
            "choices": choices,
            "context": context,
            "blank": blank,
            "answer_format": answer_format,
        }
        device = str(resolve_device(device))
        prepared = prepare_items(
            train,
            dev,
            read=read,
            ood=ood or {},
            features=features,
            choice_context=choice_context,
            evaluators=own["evaluators"],
            options=options,
            device=device,
            seed=seed,
        )
        return run_compare(prepared, seed=seed, seeds=seeds, device=device, progress=progress)
    if not isinstance(train, LabelledData):
        train = read_labelled(train)
    fields_note = train.fields.note()  # what was picked, as aflite filter notes it
    train = experiment_set("train", train)
    fields = list(train.texts)
    dev = experiment_set("dev", dev, fields)
    groups, dev_groups = train.groups, dev.groups
    feature_fields = fields if feature_fields is None else list(feature_fields)
    if not feature_fields or set(feature_fields) - set(fields):
        raise DataError(f"feature fields {feature_fields} must be among the text fields {fields}")
    partial_field = partial_field or fields[-1]
    evaluators = default_evaluators() if evaluators is None else list(evaluators)
    for ev in evaluators:
        check_evaluator(ev, items=False)
    from aflite.experiments.ood import for_set, restrict_labels, split_by_category

    ood = {
        n: restrict_labels(n, experiment_set(n, d, fields), for_set(ood_labels, n))
        for n, d in (ood or {}).items()
    }
    trained = np.unique(train.labels)
    check_label_map(label_map, trained)
    dev_space = label_space("dev", dev.labels, trained, label_map)
    spaces = {
        name: label_space(name, data.labels, trained, label_map) for name, data in ood.items()
    }
    device = str(resolve_device(device))

    def view(d: LabelledTexts) -> LabelledTexts:
        # the representation reads only its fields; a view per set keeps one fingerprint each
        return d.fields(feature_fields)

    rep = shared_representation(
        view(train),
        features=features,
        warmup_fraction=warmup_fraction,
        warmup_finetune=warmup_finetune,
        groups=groups,
        cache_dir=cache_dir,
        device=device,
        seed=seed,
    )
    rest = rep.rest
    d_train = train.subset(rest)
    d_groups = None if groups is None else groups[rest]
    classes = (len(np.unique(train.labels[rest])), len(np.unique(dev.labels)))
    dev_options = check_sizes(options, len(rest), len(dev), classes)
    phi_train, phi_dev = rep.phi, rep.represent(view(dev))
    fixed: dict[str, EvalSet] = {"dev": (dev, phi_dev, dev_space)}
    ood_groups: dict[str, list[str]] = {}
    group_rows: dict[str, tuple[str, np.ndarray]] = {}  # a category's set: (its set, rows)
    for name, data in ood.items():
        key = name if name not in ("dev", "dev (filtered)") else f"{name} (ood)"
        phi = rep.represent(view(data))
        fixed[key] = (data, phi, spaces[name])
        by_value = split_by_category(key, data)
        ood_groups[key] = list(by_value)
        for g_name, idx in by_value.items():
            fixed[g_name] = (data.subset(idx), phi[idx], spaces[name])
            group_rows[g_name] = (key, idx)

    def fit(ev_name: str, idx: np.ndarray, run_seed: int) -> tuple[Any, np.ndarray]:
        part = d_train.subset(idx)
        ev = make_evaluator(ev_name, fields, partial_field, run_seed)
        return ev.fit(part, phi_train[idx]), np.unique(part.labels)

    def score(
        model: tuple[Any, np.ndarray],
        es_name: str,
        entry: EvalSet,
        predicted: dict[str, np.ndarray],
    ) -> float:
        ev, seen = model
        data, phi, _ = entry
        # a subset may lack a class: check against what this model saw
        space = label_space(es_name, data.labels, seen, label_map)
        parent = group_rows.get(es_name)
        if parent is not None and parent[0] in predicted:
            # a category reads its set's predictions: a fine-tuned model predicts each row once
            return mapped_accuracy(predicted[parent[0]][parent[1]], data.labels, space)
        if hasattr(ev, "predict"):
            predicted[es_name] = np.asarray(ev.predict(data, phi))
            return mapped_accuracy(predicted[es_name], data.labels, space)
        return evaluate(ev, data, phi, space)

    def filtered_dev(kept: np.ndarray) -> EvalSet:
        return dev.subset(kept), phi_dev[kept], dev_space

    prepared = PreparedCompare(
        phi_train=phi_train,
        y_train=d_train.labels,
        groups_train=d_groups,
        ids_train=ids_of(d_train),
        ids_dev=ids_of(dev),
        phi_dev=phi_dev,
        y_dev=dev.labels,
        groups_dev=dev_groups,
        options=options,
        dev_options=dev_options,
        fixed=fixed,
        evaluators=evaluators,
        fit=fit,
        score=score,
        filtered_dev=filtered_dev,
        # the accuracy of always answering each set's most frequent label
        chance=lambda entry: majority_rate(entry[0].labels),
        gold=lambda entry: entry[0].labels,
        warm_up=len(rep.warm_rows),
        details={
            "features": features,
            "feature_fields": feature_fields,
            "filter_options": options.changed_from(PRESETS["practical"]),
            "label_map": {str(k): str(v) for k, v in (label_map or {}).items()},
            "mapped_sets": [k for k, (_, _, space) in fixed.items() if space],
            "ood_labels": {k: [str(v) for v in for_set(ood_labels, k) or []] for k in ood},
            "ood_groups": ood_groups,
            "sets_represented": rep.n_embedded,
        },
        fields_note=fields_note,
    )
    return run_compare(prepared, seed=seed, seeds=seeds, device=device, progress=progress)
