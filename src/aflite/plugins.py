"""The built-in plug-ins of every registry, in one place.

Each registry (:class:`aflite._internal.registry.Registry`) imports the modules listed here
under its kind the first time it is read; importing a module registers what it defines with
the kind's decorator. The order is the order help lists the names in (and, for data formats,
detection tries later ones first). Only the registry being read is loaded, so listing the
feature kinds or scorers for ``--help`` imports neither torch nor sentence-transformers.

A plug-in of your own needs no entry here: register it with the kind's decorator
(``register_model``, ``register_feature_kind``, ``register_format``, ``register_audit``,
``register_example_scorer``, ``register_evaluator``, ``register_exporter``,
``register_stress_test``) in a module you import before using it by name.
"""

from __future__ import annotations

import importlib

__all__ = ["BUILTINS", "load_builtins"]

BUILTINS: dict[str, tuple[str, ...]] = {
    "model": (
        "aflite.algorithm.models.linear",
        "aflite.algorithm.models.sklearn",
        "aflite.algorithm.models.choice",
    ),
    "feature kind": ("aflite.features.kinds",),
    "format": (
        "aflite.io.formats.jsonl",
        "aflite.io.formats.delimited",
        "aflite.io.formats.parquet",
        "aflite.io.formats.hf",
        "aflite.io.formats.image_folder",
        "aflite.io.formats.image_npz",
    ),
    "audit": ("aflite.audits.builtin",),
    "scorer": (
        "aflite.scoring.predictability",
        "aflite.scoring.datamap",
        "aflite.scoring.pvi",
        "aflite.scoring.aum",
        "aflite.scoring.el2n",
        "aflite.scoring.forgetting",
        "aflite.scoring.partial",
    ),
    "evaluator": ("aflite.experiments.evaluators", "aflite.experiments.finetune_eval"),
    "exporter": ("aflite.exports.formats",),
    "stress test": ("aflite.experiments.stress",),
}


def load_builtins(kind: str) -> tuple[str, ...]:
    """Import the modules that register the built-ins of ``kind``; returns their names."""
    modules = BUILTINS[kind]
    for module in modules:
        importlib.import_module(module)
    return modules
