"""The built-in plug-ins of every registry, in one place.

Each registry (:class:`aflite._internal.registry.Registry`) imports the modules listed here
under its kind the first time it is read; importing a module registers what it defines with
the kind's decorator. The order is the order help lists the names in (and, for data formats,
detection tries later ones first). Only the registry being read is loaded, so listing the
model families, feature kinds or scorers for ``--help`` imports neither torch nor
sentence-transformers.

A plug-in of your own needs no entry here: register it with the kind's decorator
(``register_model``, ``register_feature_kind``, ``register_format``, ``register_audit``,
``register_example_scorer``, ``register_evaluator``, ``register_exporter``,
``register_stress_test``, ``register_backend``) in a module you import before using it by name. For the command
line, name that module in an entry point of the group ``aflite.plugins`` of your package::

    [project.entry-points."aflite.plugins"]
    my_models = "my_package.aflite_models"

Those modules are imported after the built-ins, the first time any registry is read.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

__all__ = [
    "BUILTINS",
    "ENTRY_POINT_GROUP",
    "has_plugin_packages",
    "load_builtins",
]

ENTRY_POINT_GROUP = "aflite.plugins"
_entry_points_loaded = False

BUILTINS: dict[str, tuple[str, ...]] = {
    # one line a family: its sub-package registers it (ridge also its items variant)
    "model": (
        "aflite.algorithm.models.linear",
        "aflite.algorithm.models.sklearn",
        "aflite.algorithm.models.ridge",
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
    "evaluator": (
        "aflite.experiments.evaluators",
        "aflite.experiments.finetune_eval",
        "aflite.experiments.choice_eval",
    ),
    "exporter": ("aflite.exports.formats",),
    "stress test": ("aflite.experiments.stress",),
    "backend": ("aflite.distributed.ray_backend",),
}


def has_plugin_packages() -> bool:
    """Whether an installed package names plug-in modules (which may register any name)."""
    return any(True for _ in entry_points(group=ENTRY_POINT_GROUP))


def load_builtins(kind: str) -> tuple[str, ...]:
    """Import the modules that register the built-ins of ``kind`` (and, once, the plug-in
    modules named by entry points); returns the built-in modules' names."""
    global _entry_points_loaded
    modules = BUILTINS[kind]
    for module in modules:
        importlib.import_module(module)
    if not _entry_points_loaded:
        _entry_points_loaded = True  # first, so a plug-in that reads a registry cannot recurse
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            ep.load()
    return modules
