"""The compare experiment on multiple-choice items: the choice-wise model (``choice``) trained on
D, on a random D_n of the filtered size and on the filtered D(Phi), scored by how often it
picks the right choice on dev, on dev filtered by the same procedure and on out-of-distribution
sets, each beside its chance level: the best guess from answer positions alone, max(1/K, the
share of the most frequent answer position)."""

from __future__ import annotations

from typing import Any

import numpy as np

import aflite
from aflite.audits.before_after import bias_with_control
from aflite.defaults import overrides
from aflite.errors import DataError
from aflite.experiments.evaluators import check_evaluator, default_evaluators, make_evaluator
from aflite.experiments.results import FILTERED, FULL, RANDOM, CompareResult
from aflite.experiments.sets import LabelledTexts
from aflite.io.choices import Choices
from aflite.io.labelled import LabelledData, read_labelled

__all__ = ["compare_items", "item_set"]


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


def compare_items(
    train: Any,
    dev: Any,
    *,
    read: dict[str, Any],
    ood: dict[str, Any],
    features: str,
    choice_context: str,
    evaluators: list[str] | None,
    options: dict[str, Any],
    device: str,
    seed: int,
    seeds: int,
    progress: bool,
) -> CompareResult:
    """:func:`aflite.experiments.compare_experiment` on items (its options, checked there)."""
    from aflite.experiments.sizes import check_sizes
    from aflite.features.build import parse_feature_spec
    from aflite.features.choices import shared_choice_features

    evaluators = default_evaluators(items=True) if evaluators is None else list(evaluators)
    for ev in evaluators:
        check_evaluator(ev, items=True)
    spec = parse_feature_spec(features)
    tr, tr_items = item_set("train", train, read)
    dv, dv_items = item_set("dev", dev, read)
    others = {n: item_set(n, d, read) for n, d in ood.items()}
    n = len(tr)
    dev_options = check_sizes(options, n, len(dv))
    represent = shared_choice_features(spec, tr_items, context=choice_context, seed=seed,
                                       device=device)  # fmt: skip
    phi_train, phi_dev = represent(tr_items), represent(dv_items)
    y_train, y_dev = tr_items.answers, dv_items.answers
    fixed = {"dev": (dv, phi_dev, dv_items)}
    for name, (data, items) in others.items():
        key = name if name not in ("dev", "dev (filtered)") else f"{name} (ood)"
        fixed[key] = (data, represent(items), items)
    eval_names = ["dev", "dev (filtered)"] + [k for k in fixed if k != "dev"]
    fields = list(tr.texts)

    def fit(ev_name: str, idx: np.ndarray, run_seed: int) -> Any:
        return make_evaluator(ev_name, fields, fields[-1], run_seed).fit(
            tr.subset(idx), phi_train[idx]
        )

    on_full = {ev: fit(ev, np.arange(n), seed) for ev in evaluators}
    runs = []
    for run_seed in range(seed, seed + int(seeds)):
        common = dict(device=device, progress=progress, seed=run_seed)
        res = aflite.filter(phi_train, y_train, groups=tr.groups, **options, **common)
        rng = np.random.default_rng(run_seed)
        random_idx = np.sort(rng.choice(n, len(res.kept), replace=False))
        dev_res = aflite.filter(phi_dev, y_dev, groups=dv.groups, **dev_options, **common)
        kept = dev_res.kept
        sets = dict(fixed)
        sets["dev (filtered)"] = (dv.subset(kept), phi_dev[kept], dv_items.subset(kept))
        train_sets = {FULL: np.arange(n), RANDOM: random_idx, FILTERED: res.kept}
        rows = []
        for ev_name in evaluators:
            for tr_name, idx in train_sets.items():
                ev = on_full[ev_name] if tr_name == FULL else fit(ev_name, idx, run_seed)
                row = {"evaluator": ev_name, "train": tr_name, "size": int(len(idx))}
                for es_name in eval_names:
                    data, phi, _ = sets[es_name]
                    row[es_name] = float(ev.score(data, phi))
                rows.append(row)
        bias = {
            "D": bias_with_control(phi_train, y_train, res, random_idx, groups=tr.groups,
                                   seed=run_seed),
            "dev": bias_with_control(phi_dev, y_dev, dev_res, groups=dv.groups, seed=run_seed),
        }  # fmt: skip
        runs.append(
            {
                "seed": run_seed,
                "rows": rows,
                "sizes": {k: int(len(v)) for k, v in train_sets.items()}
                | {k: len(sets[k][0]) for k in eval_names}
                | {"warm-up": 0},
                # the accuracy of the best guess from answer positions alone
                "majority": {k: sets[k][2].chance() for k in eval_names},
                # a filter can skew where the right answers sit
                "label_counts": {k: _positions(y_train[v]) for k, v in train_sets.items()}
                | {k: _positions(sets[k][2].answers) for k in eval_names},
                "filter_summary": res.summary(),
                "bias": bias,
            }
        )
    return CompareResult(
        runs=runs,
        eval_sets=eval_names,
        seeds=list(range(seed, seed + int(seeds))),
        details={
            "features": features,
            "choice_context": choice_context,
            "filter_options": overrides(options),
            "items": tr_items.as_dict() | {"note": tr_items.note()},
            "sets_represented": 2 + len(others),
        },
    )


def _positions(answers: np.ndarray) -> dict[str, int]:
    """How many right answers sit at each position (0-based)."""
    values, counts = np.unique(np.asarray(answers), return_counts=True)
    return {str(v): int(c) for v, c in zip(values, counts)}
