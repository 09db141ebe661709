"""The compare experiment's runs, one loop for labelled rows and multiple-choice items: per
seed, filter D and dev, draw a random subset of D of the filtered size, fit each evaluator on
each training set, score every evaluation set and record sizes, chance levels, label counts,
the filter's summary and the representation bias beside a random control. A front end
(:mod:`aflite.experiments.compare` for rows, :mod:`aflite.experiments.compare_items` for
items) prepares the sets and says how its kind of data is fitted, scored and counted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite._internal.labels import label_counts
from aflite.algorithm import FilterOptions, adversarial_filter
from aflite.audits.before_after import bias_with_control
from aflite.experiments.results import FILTERED, FULL, RANDOM, CompareResult
from aflite.reports.warnings import outcome_lines, warning_facts

__all__ = ["EvalSet", "PreparedCompare", "run_compare"]

# an evaluation set: what the evaluators read (a LabelledTexts), its features, and what the
# front end keeps beside them (a label space for rows, the items' Choices for items)
EvalSet = tuple[Any, np.ndarray, Any]


@dataclass
class PreparedCompare:
    """A compare experiment ready to run: what the filter reads of D and of dev, the
    evaluation sets that do not depend on the seed, and the front end's own steps."""

    phi_train: np.ndarray
    y_train: np.ndarray  # the labels the filter reads (answer positions of items)
    groups_train: np.ndarray | None
    phi_dev: np.ndarray
    y_dev: np.ndarray
    groups_dev: np.ndarray | None
    options: FilterOptions  # the filter's options on D
    dev_options: FilterOptions  # the same sizes in proportion to dev
    fixed: dict[str, EvalSet]  # "dev", then every other set that is the same in each run
    evaluators: list[str]
    # evaluator name, rows of D, seed -> a trained model, as ``score`` reads it
    fit: Callable[[str, np.ndarray, int], Any]
    # model, set name, set, the predictions of this model so far (by set name) -> accuracy
    score: Callable[[Any, str, EvalSet, dict[str, np.ndarray]], float]
    # rows of dev the filter kept -> the filtered dev set
    filtered_dev: Callable[[np.ndarray], EvalSet]
    # a set -> the accuracy of the best guess without its texts (majority label, position)
    chance: Callable[[EvalSet], float]
    # a set -> what its label counts count (labels of rows, answer positions of items)
    gold: Callable[[EvalSet], np.ndarray]
    warm_up: int  # rows of the training file spent on a warm-up model, not part of D
    details: dict[str, Any]
    # how D was read, as ``aflite filter`` notes it: the fields picked, D's items
    fields_note: str = ""
    items: Any = None
    # the rows' ids: the filter draws its partitions by id, as aflite filter does
    ids_train: list[Any] | None = None
    ids_dev: list[Any] | None = None


def ids_of(data: Any) -> list[Any] | None:
    """A set's row ids, as the filter takes them (None: it has none)."""
    return None if data.ids is None else list(data.ids)


def run_compare(
    prep: PreparedCompare, *, seed: int, seeds: int, device: str, progress: bool
) -> CompareResult:
    """Run ``prep`` with seeds ``seed, seed + 1, ...`` (``seeds`` of them): the models trained
    on D are fitted once, with ``seed``; the filters and the random subset use each run's."""
    n = len(prep.y_train)
    eval_names = ["dev", "dev (filtered)"] + [k for k in prep.fixed if k != "dev"]
    # D does not depend on the seed of a repeat: its models are trained once
    on_full = {ev: prep.fit(ev, np.arange(n), seed) for ev in prep.evaluators}
    runs = []
    for run_seed in range(seed, seed + int(seeds)):
        common = dict(device=device, progress=progress, seed=run_seed)
        res = adversarial_filter(
            prep.phi_train,
            prep.y_train,
            groups=prep.groups_train,
            ids=prep.ids_train,
            options=prep.options,
            **common,
        )
        rng = np.random.default_rng(run_seed)
        random_idx = np.sort(rng.choice(n, len(res.kept), replace=False))
        dev_res = adversarial_filter(
            prep.phi_dev,
            prep.y_dev,
            groups=prep.groups_dev,
            ids=prep.ids_dev,
            options=prep.dev_options,
            **common,
        )
        sets = dict(prep.fixed)
        sets["dev (filtered)"] = prep.filtered_dev(dev_res.kept)
        train_sets = {FULL: np.arange(n), RANDOM: random_idx, FILTERED: res.kept}
        rows = []
        for ev_name in prep.evaluators:
            for tr_name, idx in train_sets.items():
                model = on_full[ev_name] if tr_name == FULL else prep.fit(ev_name, idx, run_seed)
                row = {"evaluator": ev_name, "train": tr_name, "size": int(len(idx))}
                predicted: dict[str, np.ndarray] = {}
                for es_name in eval_names:
                    row[es_name] = prep.score(model, es_name, sets[es_name], predicted)
                rows.append(row)
        # before, kept and a random subset of the kept size, each at the t the filter resolved
        # on its initial set
        bias = {
            "D": bias_with_control(
                prep.phi_train,
                prep.y_train,
                res,
                random_idx,
                groups=prep.groups_train,
                seed=run_seed,
            ),
            "dev": bias_with_control(
                prep.phi_dev, prep.y_dev, dev_res, groups=prep.groups_dev, seed=run_seed
            ),
        }
        runs.append(
            {
                "seed": run_seed,
                "rows": rows,
                "sizes": {k: int(len(v)) for k, v in train_sets.items()}
                | {k: len(sets[k][0]) for k in eval_names}
                | {"warm-up": prep.warm_up},
                # the accuracy of the best guess from labels (answer positions) alone
                "majority": {k: prep.chance(sets[k]) for k in eval_names},
                # a filter can skew the label mix (where right answers sit) of what it keeps,
                # in training and eval sets
                "label_counts": {k: label_counts(prep.y_train[v]) for k, v in train_sets.items()}
                | {k: label_counts(prep.gold(sets[k])) for k in eval_names},
                "filter_summary": res.summary(),
                # the notes and warnings aflite filter prints after the same filter of D
                "filter_notes": outcome_lines(
                    res,
                    warning_facts(res, prep.y_train, items=prep.items),
                    fields_note=prep.fields_note,
                    items=prep.items,
                ),
                "bias": bias,
            }
        )
    return CompareResult(
        runs=runs,
        eval_sets=eval_names,
        seeds=list(range(seed, seed + int(seeds))),
        details=prep.details,
    )
