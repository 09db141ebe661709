"""The adversarial filter: batched model ensembles, predictability scores, AFLITE and AFOPT.

Pure array code: nothing here reads or writes data files. Three folders: :mod:`.loop` (the
filter's one driver and what it runs: phases, partitions, rankers, selection, state, result,
options), :mod:`.models` (the model-family contract and registry, one sub-package per family,
its model and solvers together) and :mod:`.numerics` (what the families share: the stored
rows, block plans, ordered sums, L-BFGS); :mod:`.afopt` is the exact optimum on a few rows.

The names below are imported on first use: the options (:class:`FilterOptions`,
:data:`PRESETS`) need no torch, so a command's config and ``--help`` load none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aflite._internal.lazy import lazy_exports, moved_modules

_MODULES = {
    "aflite.algorithm.afopt": ("OptimumResult", "optimum", "subset_bias"),
    "aflite.algorithm.loop.by_scores": ("ByScores",),
    "aflite.algorithm.loop.filtering": ("ConvergenceWarning", "adversarial_filter"),
    "aflite.algorithm.loop.inputs": ("check_features", "encode_groups", "encode_labels"),
    "aflite.algorithm.loop.options": ("PRESETS", "FilterOptions"),
    "aflite.algorithm.loop.predictability": (
        "PhaseScores",
        "predictability_scores",
        "representation_bias",
    ),
    "aflite.algorithm.loop.result": ("STOP_REASONS", "FilterResult", "PhaseRecord"),
    "aflite.algorithm.loop.selection": ("STRATEGIES",),
    "aflite.algorithm.loop.state": ("FilterState",),  # no torch: a checkpoint reads it
    "aflite.algorithm.loop.sizes": ("SizeError", "check_train_covers_classes", "resolve_size"),
    "aflite.algorithm.models": ("MODELS", "Model", "PhaseCounts", "register_model"),
    "aflite.algorithm.models.choice.settings": ("ChoiceEnsemble",),
    "aflite.algorithm.models.linear.settings": ("LinearEnsemble",),
    "aflite.algorithm.models.ridge.settings": ("RidgeEnsemble",),
    "aflite.algorithm.numerics.report": ("SolveReport",),
    "aflite.algorithm.numerics.shards": ("ShardedFeatures",),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}
__all__ = [
    "OptimumResult",
    "optimum",
    "subset_bias",
    "ByScores",
    "ConvergenceWarning",
    "FilterState",
    "adversarial_filter",
    "check_features",
    "encode_groups",
    "encode_labels",
    "PRESETS",
    "FilterOptions",
    "PhaseScores",
    "predictability_scores",
    "representation_bias",
    "STOP_REASONS",
    "FilterResult",
    "PhaseRecord",
    "STRATEGIES",
    "SizeError",
    "check_train_covers_classes",
    "resolve_size",
    "MODELS",
    "Model",
    "PhaseCounts",
    "register_model",
    "ChoiceEnsemble",
    "LinearEnsemble",
    "RidgeEnsemble",
    "SolveReport",
    "ShardedFeatures",
]


def _auto_partitions() -> dict[bool, int]:
    from aflite.algorithm.models import MODELS

    return {True: MODELS["ridge"].partitions_for(0), False: MODELS["linear"].partitions_for(0)}


# n_partitions="auto" was read from a dict keyed by whether a family is exact; each family
# declares its own m now
_DEPRECATED = {"AUTO_PARTITIONS": (_auto_partitions, "aflite.MODELS[name].partitions_for(n_rows)")}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, deprecated=_DEPRECATED)

# The modules of the algorithm before it was split into loop/, models/ and numerics/: their
# old paths still import, with a DeprecationWarning naming the new one.
_A = "aflite.algorithm."
_LINEAR, _RIDGE = _A + "models.linear.", _A + "models.ridge."
moved_modules(
    {
        _A + "_validation": {
            **dict.fromkeys(
                ("canonical_ranks", "check_features", "encode_groups", "encode_labels"),
                _A + "loop.inputs",
            ),
            **dict.fromkeys(
                (
                    "SizeError",
                    "check_train_covers_classes",
                    "resolve_filter_sizes",
                    "resolve_size",
                    "resolve_slice_size",
                ),
                _A + "loop.sizes",
            ),
            "threshold_fraction": _A + "loop.selection",
        },
        _A + "by_scores": _A + "loop.by_scores",
        _A + "choices": _A + "numerics.item_store",
        _A + "filtering": _A + "loop.filtering",
        _A + "options": _A + "loop.options",
        _A + "partitions": {
            **dict.fromkeys(
                ("block_design", "grouped_inclusion", "train_masks"), _A + "loop.partitions"
            ),
            **dict.fromkeys(
                ("MIN_BLOCKS_PER_PART", "BlockDesign", "default_block_rows"), _A + "numerics.blocks"
            ),
        },
        _A + "phases": _A + "loop.phases",
        _A + "progress": _A + "loop.progress",
        _A + "rankers": _A + "loop.rankers",
        _A + "result": _A + "loop.result",
        _A + "scoring": _A + "loop.predictability",
        _A + "selection": _A + "loop.selection",
        _A + "settle": _A + "loop.settle",
        _A + "sparse_rows": _A + "numerics.sparse_rows",
        _A + "state": _A + "loop.state",
        _A + "storage": _A + "numerics.store",
        _A + "models.base": _A + "models.contract",
        _A + "models.choice_ridge": _RIDGE + "items",
        _A + "solvers": {
            "Ensemble": _LINEAR + "ensemble",
            "LinearEnsemble": _LINEAR + "settings",
            "SolveReport": _A + "numerics.report",
            "boehning_inverse": _LINEAR + "primal",
            "choose_solver": _LINEAR + "ensemble",
            "fit_ensemble": _LINEAR + "ensemble",
            "heldout_counts": _LINEAR + "ensemble",
            "predict_all": _LINEAR + "ensemble",
        },
        _A + "solvers.blocks": {
            **dict.fromkeys(
                ("BlockPlan", "BlockTask", "TASK_ROWS", "plan_blocks"), _A + "numerics.blocks"
            ),
            "NEG": _A + "numerics.margins",
            "loss_residual": _LINEAR + "block_pass",
        },
        _A + "solvers.choice": _A + "models.choice.fit",
        _A + "solvers.ensemble": _LINEAR + "ensemble",
        _A + "solvers.kernel": _RIDGE + "kernel",
        _A + "solvers.lbfgs": _A + "numerics.lbfgs",
        _A + "solvers.margins": _A + "numerics.margins",
        _A + "solvers.preconditioner": _A + "numerics.preconditioner",
        _A + "solvers.primal": {
            **dict.fromkeys(
                ("boehning_inverse", "solve_primal", "stacked_logits"), _LINEAR + "primal"
            ),
            "NEG": _A + "numerics.margins",
        },
        _A + "solvers.reduce": _A + "numerics.reduce",
        _A + "solvers.ridge": _RIDGE + "fit",
        _A + "solvers.ridge_direct": _RIDGE + "direct",
        _A + "solvers.ridge_heldout": _RIDGE + "heldout",
        _A + "solvers.ridge_sparse": _RIDGE + "sparse",
        _A + "solvers.span": _LINEAR + "span",
        _A + "solvers.sparse_pass": _LINEAR + "block_pass",
        _A + "solvers.tasks": {
            "BlockTask": _A + "numerics.blocks",
            "loss_residual": _LINEAR + "block_pass",
        },
    }
)

if TYPE_CHECKING:
    from aflite.algorithm.afopt import OptimumResult, optimum, subset_bias
    from aflite.algorithm.loop.by_scores import ByScores
    from aflite.algorithm.loop.filtering import ConvergenceWarning, adversarial_filter
    from aflite.algorithm.loop.inputs import check_features, encode_groups, encode_labels
    from aflite.algorithm.loop.options import PRESETS, FilterOptions
    from aflite.algorithm.loop.predictability import (
        PhaseScores,
        predictability_scores,
        representation_bias,
    )
    from aflite.algorithm.loop.result import STOP_REASONS, FilterResult, PhaseRecord
    from aflite.algorithm.loop.selection import STRATEGIES
    from aflite.algorithm.loop.sizes import SizeError, check_train_covers_classes, resolve_size
    from aflite.algorithm.loop.state import FilterState
    from aflite.algorithm.models import MODELS, Model, PhaseCounts, register_model
    from aflite.algorithm.models.choice.settings import ChoiceEnsemble
    from aflite.algorithm.models.linear.settings import LinearEnsemble
    from aflite.algorithm.models.ridge.settings import RidgeEnsemble
    from aflite.algorithm.numerics.report import SolveReport
    from aflite.algorithm.numerics.shards import ShardedFeatures
