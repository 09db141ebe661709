"""Where a labelled data set's labels, texts and multiple-choice items are: the fields every
command reads its input with (``aflite filter``, ``score``, ``audit``, ``experiment
compare``), declared once as :class:`DataFields`, which each command's config extends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import Config, ConfigError, option
from aflite.config.choices import check_answer_format, check_item_fields

__all__ = ["DataFields"]


_NAMES = {"coerce": c.to_names, "cli_type": str, "cli_default": None}


@dataclass(frozen=True)
class DataFields(Config):
    """The label, text and item fields of a command's input, checked together: a text field
    named twice or naming the label, item fields named both ways or without choices.
    :attr:`choices` says whether the input is multiple-choice items."""

    label_field: str = option(
        "label",
        "Field holding the class label (the answer, for multiple-choice items).",
        metavar="FIELD",
        check=c.text,
    )
    text_fields: tuple[str, ...] = option(
        (),
        "Comma-separated text fields, e.g. premise,hypothesis; default: the only text "
        "column besides the label, id and group fields.",
        metavar="FIELDS",
        **_NAMES,
    )
    choices_field: str | None = option(
        None,
        "Multiple-choice items: the field holding each item's list of choices (e.g. "
        "endings); --label-field is then the answer.",
        metavar="FIELD",
        check=c.optional_text,
    )
    choices_fields: tuple[str, ...] = option(
        (),
        "Multiple-choice items: one field per choice, e.g. option1,option2 (an item may "
        "leave the last ones empty); --label-field is then the answer.",
        metavar="FIELDS",
        **_NAMES,
    )
    context_fields: tuple[str, ...] = option(
        (),
        "Multiple-choice items: the context the choices follow, e.g. premise,question.",
        metavar="FIELDS",
        **_NAMES,
    )
    blank: str | None = option(
        None,
        "Multiple-choice items: the mark in the context each choice fills (e.g. _).",
        metavar="TEXT",
        check=c.optional_text,
    )
    answer_format: str | None = option(
        None,
        "How the answer is given: index0 | index1 | letter | text (default: detected).",
        metavar="FORMAT",
        check=check_answer_format,
    )

    def check_together(self) -> None:
        super().check_together()
        if not self.label_field:
            raise ConfigError("label_field", "must name a field")
        seen: set[str] = set()
        for f in self.text_fields:
            if f in seen:
                raise ConfigError("text_fields", f"'{f}' is named twice")
            if f == self.label_field:
                raise ConfigError("text_fields", f"'{f}' is the label field ({{label_field}})")
            seen.add(f)
        check_item_fields(self)

    @property
    def choices(self) -> str | tuple[str, ...] | None:
        """Where the multiple-choice items' choices are (None: rows with a class label)."""
        return self.choices_field or self.choices_fields or None

    def read_arguments(self) -> dict[str, Any]:
        """These fields as the keyword arguments of :func:`aflite.io.labelled.read_labelled`."""
        return {
            "label": self.label_field,
            "text": list(self.text_fields) or None,
            "choices": self.choices,
            "context": list(self.context_fields) or None,
            "blank": self.blank,
            "answer_format": self.answer_format,
        }
