"""A filtering run's provenance, the ``aflite`` section of its data set card
(:class:`~aflite.api.card.DatasetCard`): made here from the one filter pipeline's run, plan
and result, for ``aflite filter`` and :func:`aflite.filter_dataset` alike.

``recipe`` is what a re-run reads (the door that ran it, the fields, the features and every
option); its fingerprint lets ``aflite verify`` tell a card edited after the run. ``result``
holds the counts by class, the representation bias and the fingerprints: the kept set's and,
per phase, the removed ids', so a re-run that differs is placed at its first phase.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from aflite.algorithm.loop.result import kept_fingerprint
from aflite.api.card import CARD_NAME, DatasetCard
from aflite.api.pipeline import FilterPlan, FilterRun
from aflite.api.recipe import MATRIX, python_call, shell_command
from aflite.io.content import content_fingerprint, content_parts

__all__ = ["make_card", "phase_fingerprints", "recipe_fingerprint", "run_options"]

# the options of a run (beside the filter's own) that a re-run needs, in the card's order
RUN_OPTIONS = ("seed", "warmup_fraction", "warmup_finetune", "by", "choice_context",
               "drop_labels", "keep_ids", "drop_ids", "split", "input_format")  # fmt: skip


def make_card(run: FilterRun, plan: FilterPlan, result: Any) -> DatasetCard:
    """The card of a finished run (``result`` indexes ``plan.rest``), with the fields the
    run's ``card_fields`` give."""
    from aflite._internal.version import versions

    data = plan.data
    recipe = run_recipe(run, plan)
    here = versions()
    features = features_description(run)
    fingerprint = recipe_fingerprint(recipe)
    resolved, made = resolved_options(result), _result_part(plan, result)
    device = _features_device(run)
    own = dict(run.card_fields)
    tags = ["aflite", "adversarial-filtering"]
    meta = own | {"tags": tags, "size_categories": [_size_category(len(result.kept))]}
    parts = input_parts(run, data)
    content = content_fingerprint(parts)
    # the run's way back: its Python call, its command line
    python, command = python_call(recipe, run.data), shell_command(recipe, run.data)
    input_part = {
        "name": _input_name(run.data, data),
        "format": data.table.format or "memory",
        "rows": len(data),
        "fingerprint": content,
        "parts": parts,
    }
    provenance = {
        "version": here.pop("aflite"),
        "input": input_part,
        "made_by": recipe["made_by"],
        "fields": recipe["fields"],
        "features": features,
        "options": recipe["options"],
        "recipe_fingerprint": fingerprint,
        "resolved": resolved,
        "result": made,
        "environment": here | {"features_device": device},
        "reproduce": {
            "command": command,
            "python": python,
            "verify": f"aflite verify {CARD_NAME} {_shown_input(run.data)}",
        },
    }
    return DatasetCard(meta | {"aflite": _plain(provenance)})


def run_recipe(run: FilterRun, plan: FilterPlan) -> dict[str, Any]:
    """What a re-run reads, as the card holds it: the door (its labels are read as text on
    the command line, as given in Python), the fields as resolved, the feature spec and
    every option as given (``auto`` stays ``auto``: the resolution is the run's own)."""
    fields = plan.data.fields
    read = {
        "label": fields.label,
        "text": list(fields.text),
        "id": fields.id,
        "group": fields.group,
    }
    if fields.choices is not None:
        c = fields.choices
        read |= {"choices": list(c.choices), "context": list(c.context), "blank": c.blank,
                 "answer_format": c.answer_format}  # fmt: skip
        read["text"] = []  # an item's text fields are its context and choices
    return _plain(
        {
            "made_by": "command line" if run.cli else "python",
            "fields": read,
            "options": {"features": _features_spec(run.features)} | run_options(run),
        }
    )


def run_options(run: FilterRun) -> dict[str, Any]:
    """The filter's options and the run's, by name (a model object by its repr)."""
    opts = run.options
    mine = {name: getattr(opts, name) for name in type(opts).names() if _is_filter_option(name)}
    if not isinstance(mine.get("model"), str):
        mine["model"] = repr(mine["model"])
    for name in RUN_OPTIONS:
        value = getattr(run, name)
        if name in ("keep_ids", "drop_ids") and value is not None:
            value = (
                os.fspath(value)
                if isinstance(value, (str, os.PathLike))
                else sorted(map(str, value))
            )
        mine[name] = list(value) if isinstance(value, tuple) else value
    return mine


def _is_filter_option(name: str) -> bool:
    from aflite.algorithm import FilterOptions

    return name in FilterOptions.names()


def recipe_fingerprint(recipe: dict[str, Any]) -> str:
    """16 hex digits of the SHA-256 of a recipe (``made_by``, ``fields``, ``options``) as
    canonical JSON: what tells a card whose options were changed after the run."""
    core = {k: recipe[k] for k in ("made_by", "fields", "options")}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def input_parts(run: FilterRun, data: Any) -> dict[str, str]:
    """The input's content parts (:func:`aflite.io.content.content_parts`) and the bytes of
    a reviewer's id files, which decide the rows too."""
    from aflite.io.base import hash_path

    spec = run.spec
    parts = content_parts(data, images=spec is not None and spec.entry.needs_images)
    for name in ("keep_ids", "drop_ids"):
        given = getattr(run, name)
        if isinstance(given, (str, os.PathLike)) and os.path.isfile(given):
            parts[name] = hash_path(given)
    return parts


def features_description(run: FilterRun) -> dict[str, Any]:
    """The features: the spec, its kind and what else decides Phi (the kind's ``describe``:
    n-gram settings, an encoder's name, content and library version)."""
    spec = run.spec
    if spec is None:
        return {"spec": _features_spec(run.features), "kind": "matrix"}
    describe = spec.entry.describe
    return {"spec": str(spec), "kind": spec.kind} | (describe(spec) if describe else {})


def resolved_options(result: Any) -> dict[str, Any]:
    """The options as the run resolved them: the family that ran, m, and n, t, k as rows."""
    p = result.params
    keys = ("model_family", "n_partitions", "target_size", "train_size", "slice_size",
            "threshold", "min_bias", "strategy", "partitions", "balance", "seed")  # fmt: skip
    return _plain({k: p.get(k) for k in keys if k in p})


def phase_fingerprints(result: Any, ids: list[Any]) -> list[dict[str, Any]]:
    """Per phase: the rows it removed and the fingerprint of their ids (``ids`` by the
    positions ``result`` gives)."""
    phase = np.asarray(result.removed_phase)
    removed = np.asarray(result.removed)
    out = []
    for h in result.history:
        rows = removed[phase == h.phase]
        out.append(
            {
                "phase": int(h.phase),
                "removed": len(rows),
                "removed_fingerprint": kept_fingerprint(ids[i] for i in rows),
            }
        )
    return out


def _result_part(plan: FilterPlan, result: Any) -> dict[str, Any]:
    data, rest = plan.data, plan.rest
    ids = [data.ids[i] for i in rest]
    labels = np.asarray([str(v) for v in data.labels[rest]])
    kept = np.zeros(len(rest), dtype=bool)
    kept[np.asarray(result.kept, dtype=np.int64)] = True
    classes = {}
    for c in sorted(set(labels.tolist())):
        mine = labels == c
        classes[c] = {
            "filtered": int(mine.sum()),
            "kept": int((mine & kept).sum()),
            "removed": int((mine & ~kept).sum()),
        }
    return {
        "unit": result.params.get("unit", "row"),  # "item" for multiple-choice items
        "rows": {
            "input": len(data),
            "filtered": len(rest),
            "kept": int(kept.sum()),
            "removed": int((~kept).sum()),
            "dropped_by_review": len(plan.dropped),
            "warmup": len(plan.warm_rows),
        },
        "classes": classes,
        "representation_bias": {
            k: _rounded(v)
            for k, v in (
                ("before", result.initial_bias),
                ("after", result.final_bias),
                ("chance_before", result.initial_chance),
                ("chance_after", result.final_chance),
            )
        },
        "stop_reason": result.stop_reason,
        "phases": phase_fingerprints(result, ids),
        "kept_fingerprint": kept_fingerprint(ids[i] for i in np.flatnonzero(kept)),
        # a second seed's removed set against this one's, where ``check_seed`` measured it
        **({"seed_check": result.params["seed_check"]} if "seed_check" in result.params else {}),
    }


def _features_device(run: FilterRun) -> str | None:
    """Where Phi was built (an encoder's numbers move in their last bits between devices)."""
    if run.spec is None or run.features_device is None:
        return None
    if run.embed_device is not None:
        return run.embed_device
    return run.features_device.split(":")[0]  # the device's type: cuda, not cuda:1


def _features_spec(features: Any) -> str:
    if isinstance(features, str):
        return features
    shape = "x".join(str(n) for n in getattr(features, "shape", ()))
    return f"{MATRIX} ({shape})"


def _input_name(given: Any, data: Any) -> str:
    """The input as given: a path, else how messages name rows in memory (``DataFrame``)."""
    return os.fspath(given) if isinstance(given, (str, os.PathLike)) else data.where


def _shown_input(data: Any) -> str:
    import shlex

    return shlex.quote(os.fspath(data)) if isinstance(data, (str, os.PathLike)) else "INPUT"


def _size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` rows."""
    names = ["n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
             "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T"]  # fmt: skip
    return next((name for i, name in enumerate(names) if n < 1000 * 10**i), "n>1T")


def _rounded(value: float) -> float | None:
    return None if value is None or value != value else round(float(value), 4)


def _plain(value: Any) -> Any:
    """Plain YAML values: numpy scalars as Python's, tuples as lists, NaN as None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, str) and type(value) is not str:
        return str(value)  # torch's version is a str of its own type
    return value
