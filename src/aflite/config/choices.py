"""The checks of the options that read multiple-choice items (declared once, in
:class:`aflite.config.fields.DataFields`), for every command that reads them (``aflite
filter``, ``score``, ``audit``, ``experiment compare``) and the Python calls that take them
as arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option

__all__ = [
    "check_answer_format",
    "check_item_features",
    "check_item_fields",
    "choice_context_option",
    "refuse_for_items",
]


def check_answer_format(value: Any, name: str) -> None:
    """None (detected), or one of the answer formats items are read with."""
    if value is not None:
        from aflite.io.choices import ANSWER_FORMATS

        c.choice(ANSWER_FORMATS)(value, name)


def choice_context_option() -> Any:
    return option(
        "joint",
        "Multiple-choice items: joint: the context and each choice as one text; apart: "
        "encoded apart and combined; none: each choice alone (a choices-only baseline).",
        metavar="joint|apart|none",
        check=c.choice(["joint", "apart", "none"]),
    )


def check_item_fields(config: Any) -> bool:
    """The checks the item fields of ``config`` (a :class:`~aflite.config.fields.DataFields`)
    need together; True when it reads multiple-choice items (then its ``text`` must be
    empty)."""
    if not config.choices:
        for name in ("context", "blank", "answer_format"):
            if getattr(config, name):
                raise ConfigError(name, "needs {choices}")
        if getattr(config, "choice_context", "joint") != "joint":
            raise ConfigError("choice_context", "needs {choices}")
        return False
    if config.blank is not None and not config.context:
        raise ConfigError("blank", "needs {context}, the fields holding it")
    named = [config.choices] if isinstance(config.choices, str) else list(config.choices)
    if config.label in named + list(config.context):
        raise ConfigError("label", f"'{config.label}' is a choice or context field")
    if config.text:
        raise ConfigError("text", "multiple-choice items are read from {choices} and {context}")
    return True


def check_item_features(features: str) -> None:
    """Refuse a feature kind that cannot represent each choice of an item (``features``: a
    spec already checked on its own)."""
    from aflite.features.build import parse_feature_spec

    if parse_feature_spec(features).entry.choices is None:
        from aflite.features.registry import FEATURE_KINDS

        names = ", ".join(k.usage for k in FEATURE_KINDS.values() if k.choices is not None)
        raise ConfigError("features", f"multiple-choice items take {names} features")


def refuse_for_items(values: Mapping[str, Any], names: Sequence[str]) -> None:
    """The first option of ``names`` set in ``values`` (name -> value; None, False and empty
    are unset) is a ConfigError: it only means something for rows with a class label."""
    for name in names:
        if values.get(name) not in (None, False, (), {}, []):
            raise ConfigError(name, "is not available for multiple-choice items")
