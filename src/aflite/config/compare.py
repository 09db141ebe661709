"""The options of the train-on-D / random / filtered comparison (``aflite experiment compare``
and ``experiment ood``, :func:`aflite.experiments.compare_experiment`), declared once. The
filter's options they also take are :class:`~aflite.config.FilterConfig`'s, with its
defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option
from aflite.algorithm import FilterOptions
from aflite.config.choices import check_item_features, choice_context_option, refuse_for_items
from aflite.config.fields import DataFields

__all__ = ["CompareConfig", "COMPARE_FILTER_OPTIONS", "check_item_options"]

# the filter's options compare and ood take, with the filter's defaults: every option of the
# algorithm (aflite.FilterOptions), and how the representation is made
COMPARE_FILTER_OPTIONS = (
    "group",
    "id",
    "features",
    *FilterOptions.names(),
    "warmup_fraction",
    "warmup_finetune",
    "device",
    "cache_dir",
)


# compare's options that read labelled rows (its own and the filter's): refused on items
_NOT_FOR_ITEMS = (
    "feature_fields",
    "partial_field",
    "ood_labels",
    "ood_group_field",
    "label_map",
    "warmup_fraction",
    "warmup_finetune",
    "balance",
)


def check_item_options(given: Mapping[str, Any]) -> None:
    """Refuse compare's options of labelled rows (set, not at their defaults) and, where
    ``given`` holds ``features``, a feature kind that cannot represent choices, on
    multiple-choice items: a ConfigError naming the option."""
    refuse_for_items(given, _NOT_FOR_ITEMS)
    if "features" in given:
        check_item_features(given["features"])


def _to_optional_names(value: Any, name: str) -> tuple[str, ...] | None:
    return None if value is None else c.to_names(value, name)


def _to_list(value: Any, name: str) -> tuple[str, ...]:
    """A repeatable option: the values given, in order."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"must be a list of text values, got {value!r}")
    return tuple(value)


def _evaluators(value: Any, name: str) -> None:
    from aflite.experiments.evaluators import check_evaluator

    for ev in value or ():
        try:
            check_evaluator(ev)
        except ValueError as e:
            raise c.flagged(name, e) from None


def _per_set(value: Any, name: str) -> None:
    from aflite._internal.options import flag
    from aflite.errors import DataError
    from aflite.experiments.ood import parse_per_set

    try:
        parse_per_set(value, flag(name))
    except DataError as e:
        raise c.flagged(name, e) from None


def _to_label_map(value: Any, name: str) -> Mapping[Any, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    if not isinstance(value, str):
        raise ConfigError(name, f"must be PREDICTED=LABEL,... or a mapping, got {value!r}")
    from aflite.errors import DataError
    from aflite.experiments.labels import parse_label_map

    try:
        return parse_label_map(value)
    except DataError as e:
        raise c.flagged(name, e) from None


@dataclass(frozen=True)
class CompareConfig(DataFields):
    """Options of one comparison (the ``aflite experiment compare`` command line, less the
    filter's options, as a frozen dataclass), each checked when the object is made."""

    train: str | None = option(
        None,
        "Training data file.",
        metavar="TRAIN",
        check=c.optional_text,
        argument=True,
        required=True,
    )
    dev: str | None = option(
        None, "Dev data file (evaluated as is and filtered).", check=c.optional_text, required=True
    )
    ood: tuple[str, ...] = option(
        (),
        "Extra labelled sets to evaluate on (repeatable).",
        coerce=_to_list,
        cli_type=list[str],
        cli_default=None,
    )
    ood_group_field: tuple[str, ...] = option(
        (),
        "Break each --ood set's accuracy down by this field of it (repeatable; SET:FIELD "
        "for one set, by file stem), e.g. heuristic for HANS or category for a stress set.",
        metavar="[SET:]FIELD",
        coerce=_to_list,
        check=_per_set,
        cli_type=list[str],
        cli_default=None,
    )
    ood_labels: tuple[str, ...] = option(
        (),
        "Keep only the --ood rows with these gold labels (repeatable; SET:LABEL,... for one "
        "set), e.g. hans:non-entailment as in the paper's HANS columns.",
        metavar="[SET:]LABELS",
        coerce=_to_list,
        check=_per_set,
        cli_type=list[str],
        cli_default=None,
    )
    choice_context: str = choice_context_option()
    feature_fields: tuple[str, ...] | None = option(
        None,
        "Text fields the filter's features read (default: all --text-fields; the "
        "evaluators always see every text field), e.g. hypothesis for a hypothesis-only filter.",
        metavar="FIELDS",
        coerce=_to_optional_names,
        cli_type=str,
    )
    partial_field: str | None = option(
        None,
        "Field of the partial-input evaluators (default: last text field).",
        metavar="FIELD",
        check=c.optional_text,
    )
    evaluators: tuple[str, ...] | None = option(
        None,
        "",
        coerce=_to_optional_names,
        check=_evaluators,
        cli_type=str,
    )
    seed: int = option(
        0, "Random seed (of the representation, filter and random subset).", check=c.seed
    )
    seeds: int = option(
        1,
        "Repeat the filter and the random subset with this many seeds (--seed, --seed + 1, "
        "...); cells show mean ± standard deviation, and a row the difference filtered - random.",
        check=c.positive_int,
    )
    label_map: Any = option(
        None,
        "Map predicted labels to an evaluation set's labels, for sets whose labels the "
        "models never saw, e.g. neutral=non-entailment,contradiction=non-entailment.",
        coerce=_to_label_map,
        cli_type=str,
        metavar="TEXT",
    )
    markdown: str | None = option(
        None, "Write the table as Markdown here.", check=c.optional_text, result=False
    )
    json_out: str | None = option(
        None, "Write the results as JSON here.", flag="--json", check=c.optional_text, result=False
    )

    def check_together(self) -> None:
        super().check_together()
        if self.choices is None:
            if not self.text:
                raise ConfigError(
                    "text",
                    "name the text fields, e.g. premise,hypothesis (or {choices} for "
                    "multiple-choice items)",
                )
            self._check_evaluators(items=False)
            return
        check_item_options({name: getattr(self, name) for name in self.names()})
        self._check_evaluators(items=True)

    def _check_evaluators(self, *, items: bool) -> None:
        from aflite.experiments.evaluators import check_evaluator

        for ev in self.evaluators or ():
            try:
                check_evaluator(ev, items=items)
            except ValueError as e:
                raise c.flagged("evaluators", e) from None
