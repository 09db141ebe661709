"""A run's recipe (the fields, the feature spec and every option, as a data set card holds
them) as the command line and the Python call that run it again: every option spelled out,
so neither leans on a default that a later version may change."""

from __future__ import annotations

import os
import shlex
from typing import Any

from aflite._internal.options import flag, show

__all__ = ["MATRIX", "command_options", "python_call", "cannot_rerun", "shell_command"]

# how a recipe names features given as a matrix (not in the card: no re-run reads them)
MATRIX = "a matrix given in Python"
_ID_FILES = ("keep_ids", "drop_ids")

# the filter's options as the command line names their None
_NONE_WORDS = {"min_bias": "off", "balance": "none"}
# the run's options filter_dataset does not take (the command line's alone)
_CLI_ONLY = ("warmup_fraction", "warmup_finetune", "by")


def command_options(recipe: dict[str, Any]) -> list[tuple[str, str]] | None:
    """``(flag, value)`` pairs of ``aflite filter`` for a recipe (a value of "" for a switch),
    or None where the command line cannot say it (a model object, a matrix of features, ids
    given as a list)."""
    fields, options = recipe["fields"], recipe["options"]
    if cannot_rerun(recipe) is not None or any(isinstance(options.get(k), list) for k in _ID_FILES):
        return None
    out: list[tuple[str, str]] = [("--label-field", fields["label"])]
    if fields.get("choices"):
        choices = fields["choices"]
        out.append(
            ("--choices-field" if len(choices) == 1 else "--choices-fields", ",".join(choices))
        )
        for name in ("context", "blank", "answer_format"):
            if fields.get(name):
                out.append((_flag(name), _value(fields[name])))
    elif fields.get("text"):
        out.append(("--text-fields", ",".join(fields["text"])))
    out.append(("--id-field", fields["id"] if fields.get("id") is not None else "none"))
    if fields.get("group") is not None:
        out.append(("--group-field", fields["group"]))
    for name, value in options.items():
        if name == "choice_context" and not fields.get("choices"):
            continue
        if value is None and name not in _NONE_WORDS:
            continue
        if value is False or value == []:
            continue
        out.append((_flag(name), "" if value is True else _value(value, name)))
    return out


def cannot_rerun(recipe: dict[str, Any]) -> str | None:
    """Why a recipe cannot be run again from its card, or None: features given as a matrix
    or a model given as an object are not in the card."""
    options = recipe["options"]
    if str(options.get("features", "")).startswith(MATRIX):
        return "its features were a matrix given in Python"
    model = str(options.get("model", ""))
    if "(" in model or model.startswith("<"):
        return f"its model was an object ({model})"
    return None


def shell_command(recipe: dict[str, Any], data: Any) -> str | None:
    """The ``aflite filter`` line that runs the recipe on ``data`` (a path as given, else
    ``INPUT``: the rows saved as a file), or None where no command line can."""
    pairs = command_options(recipe)
    if pairs is None:
        return None
    where = os.fspath(data) if isinstance(data, (str, os.PathLike)) else "INPUT"
    words = ["aflite", "filter", where]
    for name, value in pairs:
        words += [name] if value == "" else [name, value]
    return shlex.join(words)


def python_call(recipe: dict[str, Any], data: Any) -> str | None:
    """The :func:`aflite.filter_dataset` call that runs the recipe on ``data`` (a path, else
    the name ``data``), or None where it takes no such run (a warm-up, ``by``)."""
    fields, options = recipe["fields"], recipe["options"]
    if any(options.get(k) for k in _CLI_ONLY) or cannot_rerun(recipe) is not None:
        return None
    where = repr(os.fspath(data)) if isinstance(data, (str, os.PathLike)) else "data"
    args = [where]
    keys = {
        "label": fields["label"],
        "id": fields["id"] if fields.get("id") is not None else "none",
    }
    if fields.get("choices"):
        keys |= {k: fields.get(k) for k in ("choices", "context", "blank", "answer_format")}
    else:
        keys["text"] = fields.get("text") or None
    keys["group"] = fields.get("group")
    for name, value in options.items():
        if name in _CLI_ONLY:
            continue
        if name == "choice_context" and not fields.get("choices"):
            continue
        keys[name] = value
    args += [f"{k}={v!r}" for k, v in keys.items() if v not in (None, [], ()) or k in _KEEP_NONE]
    return f"aflite.filter_dataset({', '.join(args)})"


# None that differs from the practical preset's value: said out loud
_KEEP_NONE = {"min_bias", "slice_size"}


def _flag(name: str) -> str:
    return flag(name).split(" / ")[0]


def _value(value: Any, name: str = "") -> str:
    if value is None:
        return _NONE_WORDS[name]
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return show(value).strip("'") if isinstance(value, str) else show(value)
