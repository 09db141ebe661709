"""Where a labelled data set's labels, texts and multiple-choice items are: the fields every
command reads its input with (``aflite filter``, ``score``, ``audit``, ``experiment
compare``), declared once as :class:`DataFields`, which each command's config extends; and
the other fields of an input, each declared once here and taken by the configs that read it
(:func:`input_option`, :func:`split_option`, :func:`id_option`, :func:`group_option`,
:func:`features_option`, :func:`choice_context_option`), and the options of a run that the
commands share (:func:`out_dir_option`, :func:`seed_option`, :func:`device_option`,
:func:`drop_labels_option`, :func:`json_out_option`,
:func:`cache_dir_option`, :func:`overwrite_option`, :func:`report_option`,
:func:`card_fields_option`). ``result=False``
marks those that cannot change a filtering run's result (a checkpoint resumes across them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.checks import seed_option
from aflite._internal.options import Config, ConfigError, option
from aflite.config.names import LazyHelp
from aflite.io.choices import check_answer_format, check_choice_context, check_item_fields

__all__ = [
    "DataFields",
    "choice_context_option",
    "data_fields",
    "features_option",
    "group_option",
    "id_option",
    "input_option",
    "split_option",
    "out_dir_option",
    "seed_option",
    "drop_labels_option",
    "json_out_option",
    "device_option",
    "cache_dir_option",
    "overwrite_option",
    "report_option",
    "card_fields_option",
    "to_card_fields",
]


_NAMES = {"coerce": c.to_names, "cli_type": str, "cli_default": None}


def input_option(*, required: bool = False) -> Any:
    """The data file (or folder, or ``hf:NAME``) a command reads: its argument."""
    return option(
        None, LazyHelp("input"), metavar="INPUT", check=c.text, argument=True, required=required
    )


def split_option() -> Any:
    return option(
        None,
        "The split to read, for a Hugging Face DatasetDict folder (e.g. train).",
        metavar="TEXT",
        check=c.optional_text,
    )


def id_option() -> Any:
    return option(
        None,
        "Field with unique row ids (checked for duplicates); default: a column named id, "
        "if any; 'none' numbers the rows.",
        metavar="FIELD",
        check=c.optional_text,
        flag="--id-field",
    )


def group_option() -> Any:
    return option(
        None,
        "Rows sharing this field are kept together, never split between training and "
        "held-out rows (e.g. premise).",
        metavar="FIELD",
        check=c.optional_text,
        flag="--group-field",
    )


def _features(value: Any, name: str) -> None:
    from aflite.features.build import parse_feature_spec

    c.text(value, name)
    try:
        parse_feature_spec(value)
    except ValueError as e:
        raise c.flagged(name, e) from None


def features_option() -> Any:
    """The representation Phi: a feature spec (``ngrams``, ``sentence-transformers:MODEL``)."""
    return option("ngrams", LazyHelp("features"), metavar="KIND[:ARG]", check=_features)


def out_dir_option(default: str) -> Any:
    return option(default, "Output folder.", metavar="DIR", check=c.text, result=False)


def drop_labels_option(help: str) -> Any:  # noqa: A002 -- the command line's word
    """Class labels whose rows are left out (``help`` says how, for the command)."""
    return option((), help, metavar="LABELS", coerce=c.to_names, cli_type=str, cli_default=None)


def json_out_option(help: str, *, result: bool = True) -> Any:  # noqa: A002
    return option(None, help, flag="--json", check=c.optional_text, result=result)


def device_option() -> Any:
    return option("auto", "auto | cpu | cuda.", metavar="DEVICE", check=c.device, result=False)


def cache_dir_option() -> Any:
    return option(
        None,
        "Embedding cache folder, shared by every command (default ~/.cache/aflite).",
        metavar="DIR",
        check=c.optional_text,
        result=False,
    )


def overwrite_option() -> Any:
    return option(
        False,
        "Replace the outputs of an earlier run in --out-dir (other files stay).",
        check=c.boolean,
        result=False,
    )


def report_option() -> Any:
    return option(True, "Write report.html.", check=c.boolean, result=False)


# the card's own section of its front matter, which a given field may not replace
_CARD_OWN = ("aflite",)
# the Hub's spelling of a field given in another (its front matter reads "license")
_CARD_SPELLING = {"licence": "license"}


def to_card_fields(value: Any, name: str) -> tuple[tuple[str, str], ...]:
    """Fields for a run's data set card: ``KEY=VALUE`` texts (the command line's, one a
    ``--card-field``) or a mapping (Python, a config file) -> ``((key, value), ...)`` in
    the order given; ``licence`` is written as the Hub spells it, ``license``."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, str):
        pairs = [_key_value(value, name)]
    elif isinstance(value, (list, tuple)):
        pairs = [v if isinstance(v, (list, tuple)) else _key_value(v, name) for v in value]
    else:
        raise ConfigError(name, f"must be KEY=VALUE fields, got {type(value).__name__}")
    out: dict[str, str] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ConfigError(name, f"must be KEY=VALUE fields, got {pair!r}")
        key, text = pair
        if not isinstance(key, str) or not key.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(name, f"a field's name is letters, digits, _ and -, got {key!r}")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(name, f"field '{key}' needs a value as text, e.g. {key}=...")
        key = _CARD_SPELLING.get(key, key)
        if key in _CARD_OWN:
            raise ConfigError(name, f"'{key}' is the card's own section; name the field otherwise")
        if key in out:
            raise ConfigError(name, f"field '{key}' is given twice")
        out[key] = text
    return tuple(out.items())


def _key_value(text: Any, name: str) -> tuple[str, str]:
    if not isinstance(text, str) or "=" not in text:
        raise ConfigError(name, f"must be KEY=VALUE (e.g. licence=cc-by-sa-4.0), got {text!r}")
    key, _, value = text.partition("=")
    return key.strip(), value


def card_fields_option() -> Any:
    """Fields a run's data set card carries as given: its licence, citation, name, ..."""
    return option(
        (),
        "A field of the data set card (card.md) written with the outputs, as KEY=VALUE, once "
        "per field: licence=cc-by-sa-4.0 (written license, as the Hugging Face Hub reads "
        "it), citation=..., pretty_name=...",
        metavar="KEY=VALUE",
        coerce=to_card_fields,
        cli_type=list[str],
        cli_default=None,
        flag="--card-field",
        result=False,
    )


def choice_context_option() -> Any:
    return option(
        "joint",
        "Multiple-choice items: joint: the context and each choice as one text; apart: "
        "encoded apart and combined; none: each choice alone (a choices-only baseline).",
        metavar="joint|apart|none",
        check=check_choice_context,
    )


def _to_choices(value: Any, name: str) -> str | tuple[str, ...] | None:
    """Where the choices are: one field holding each item's list (``"endings"``), or one field
    per choice (``"option1,option2"`` or a list of names); None or empty: no items."""
    names = c.to_names(value, name)
    if not names:
        return None
    return names[0] if len(names) == 1 else names


@dataclass(frozen=True)
class DataFields(Config):
    """The label, text and item fields of a command's input, checked together: a text field
    named twice or naming the label, item options without choices. ``choices`` set: the input
    is multiple-choice items. The Python API takes them as keywords of the same names
    (``label=``, ``text=``, ``choices=``, ...); the command line as ``--label-field``,
    ``--text-fields``, ``--choices-field`` (or ``--choices-fields``), ... ."""

    label: str = option(
        "label",
        "Field holding the class label (the answer, for multiple-choice items).",
        metavar="FIELD",
        check=c.text,
        flag="--label-field",
    )
    text: tuple[str, ...] = option(
        (),
        "Comma-separated text fields, e.g. premise,hypothesis; default: the only text "
        "column besides the label, id and group fields.",
        metavar="FIELDS",
        flag="--text-fields",
        **_NAMES,
    )
    choices: str | tuple[str, ...] | None = option(
        None,
        "Multiple-choice items: the field holding each item's list of choices (e.g. "
        "endings), or one field per choice, comma-separated (e.g. option1,option2; an item "
        "may leave the last ones empty); --label-field is then the answer.",
        metavar="FIELD[,FIELD...]",
        coerce=_to_choices,
        cli_type=str,
        flag=("--choices-field", "--choices-fields"),
    )
    context: tuple[str, ...] = option(
        (),
        "Multiple-choice items: the context the choices follow, e.g. premise,question.",
        metavar="FIELDS",
        flag="--context-fields",
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
        if not self.label:
            raise ConfigError("label", "must name a field")
        seen: set[str] = set()
        for f in self.text:
            if f in seen:
                raise ConfigError("text", f"'{f}' is named twice")
            if f == self.label:
                raise ConfigError("text", f"'{f}' is the label field ({{label}})")
            seen.add(f)
        check_item_fields(self)

    def read_arguments(self) -> dict[str, Any]:
        """These fields as the keyword arguments of :func:`aflite.io.labelled.read_labelled`."""
        return {
            "label": self.label,
            "text": list(self.text) or None,
            "choices": self.choices,
            "context": list(self.context) or None,
            "blank": self.blank,
            "answer_format": self.answer_format,
        }


def data_fields(arguments: Mapping[str, Any]) -> DataFields:
    """The :class:`DataFields` of a Python call's ``arguments`` (by name; the data keywords
    of :func:`aflite.filter_dataset`, :func:`aflite.score_dataset` and :func:`aflite.audit`
    are the fields' names, ``label`` to ``answer_format``), ``text="a,b"`` read as two
    fields, as the command line reads it, checked with ``choice_context`` (if the call takes
    it): a ConfigError names the argument."""
    choice_context = arguments.get("choice_context", "joint")
    check_choice_context(choice_context, "choice_context")
    given = {f.name: arguments[f.name] for f in dataclasses.fields(DataFields)}
    fields = DataFields(**given | {"label": given["label"] or "label"})
    if fields.choices is None and choice_context != "joint":
        raise ConfigError("choice_context", "needs {choices}")
    return fields
