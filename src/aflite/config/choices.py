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
    "check_item_arguments",
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
        "joint", "Multiple-choice items: joint: the context and each choice as one text; apart: "
        "encoded apart and combined; none: each choice alone (a choices-only baseline).",
        metavar="joint|apart|none", check=c.choice(["joint", "apart", "none"]),
    )  # fmt: skip


def check_item_fields(config: Any) -> bool:
    """The checks the item fields of ``config`` need together; True when it reads
    multiple-choice items (then its ``text_fields`` must be empty)."""
    if config.choices_field and config.choices_fields:
        raise ConfigError("choices_fields", "name the choices one way: this or {choices_field}")
    if len(config.choices_fields) == 1:
        raise ConfigError(
            "choices_fields", "name two or more fields, or {choices_field} for one list"
        )
    if not (config.choices_field or config.choices_fields):
        for name in ("context_fields", "blank", "answer_format"):
            if getattr(config, name):
                raise ConfigError(name, "needs {choices_field} or {choices_fields}")
        if getattr(config, "choice_context", "joint") != "joint":
            raise ConfigError("choice_context", "needs {choices_field} or {choices_fields}")
        return False
    if config.blank is not None and not config.context_fields:
        raise ConfigError("blank", "needs {context_fields}, the fields holding it")
    named = [config.choices_field] if config.choices_field else list(config.choices_fields)
    if config.label_field in named + list(config.context_fields):
        raise ConfigError("label_field", f"'{config.label_field}' is a choice or context field")
    if config.text_fields:
        raise ConfigError(
            "text_fields", "multiple-choice items are read from {choices_field} / "
            "{choices_fields} and {context_fields}",
        )  # fmt: skip
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


# a config field -> the argument of a Python call (``aflite.score_dataset``) that gives it
_ARGUMENTS = {"choices_field": "choices", "choices_fields": "choices", "context_fields": "context",
              "text_fields": "text", "label_field": "label"}  # fmt: skip


def check_item_arguments(
    *, label: str | None, text: Any, choices: Any, context: Any, blank: str | None,
    answer_format: str | None, choice_context: str,
) -> bool:  # fmt: skip
    """:func:`check_item_fields` (and the checks of ``answer_format`` and ``choice_context``
    on their own) on the arguments of a Python call (``choices``: one field holding a list,
    or several fields): True when it reads items; a ConfigError names the argument."""
    import re
    from types import SimpleNamespace

    check_answer_format(answer_format, "answer_format")
    choice_context_option().metadata["check"](choice_context, "choice_context")
    names = (choices,) if isinstance(choices, str) else tuple(choices or ())
    config = SimpleNamespace(
        label_field=label, text_fields=(text,) if isinstance(text, str) else tuple(text or ()),
        choices_field=names[0] if len(names) == 1 else None,
        choices_fields=names if len(names) > 1 else (),
        context_fields=(context,) if isinstance(context, str) else tuple(context or ()),
        blank=blank, answer_format=answer_format, choice_context=choice_context,
    )  # fmt: skip
    try:
        return check_item_fields(config)
    except ConfigError as e:
        why = re.sub(r"\{choices_field\} (or|/) \{choices_fields\}", "{choices}", e.why)
        why = re.sub(r"\{([a-z_]+)\}", lambda m: _ARGUMENTS.get(m.group(1), m.group(1)), why)
        raise ConfigError(_ARGUMENTS.get(e.field, e.field), why) from None
