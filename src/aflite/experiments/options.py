"""The options the train-on-D / random / filtered comparison reads itself
(:func:`aflite.experiments.compare_experiment`), declared once with their checks, as the
filter's are with the algorithm (:class:`aflite.FilterOptions`) and the audits' with the
audits (:class:`aflite.audits.AuditOptions`): ``aflite experiment compare``'s config
(:class:`aflite.config.CompareConfig`) extends :class:`CompareOptions`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.checks import seed_option
from aflite._internal.options import Config, ConfigError, option

__all__ = ["CompareOptions", "NOT_FOR_ITEMS", "check_item_options"]

# compare's options that read labelled rows (its own and the filter's): refused on items
NOT_FOR_ITEMS = (
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
    c.refuse_for_items(given, NOT_FOR_ITEMS)
    if "features" in given:
        from aflite.features.build import check_item_features

        check_item_features(given["features"])


def _to_optional_names(value: Any, name: str) -> tuple[str, ...] | None:
    return None if value is None else c.to_names(value, name)


def _evaluators(value: Any, name: str) -> None:
    from aflite.experiments.evaluators import check_evaluator

    for ev in value or ():
        try:
            check_evaluator(ev)
        except ValueError as e:
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


@dataclass(frozen=True, kw_only=True)
class CompareOptions(Config):
    """What the comparison does besides the filter's options and where its sets are: the
    features' fields, the evaluators, the seeds and how predicted labels map to a set's."""

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
    seed: int = seed_option("Random seed (of the representation, filter and random subset).")
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

    def check_evaluators(self, *, items: bool) -> None:
        """The evaluators named, for labelled rows or for multiple-choice ``items``."""
        from aflite.experiments.evaluators import check_evaluator

        for ev in self.evaluators or ():
            try:
                check_evaluator(ev, items=items)
            except ValueError as e:
                raise c.flagged("evaluators", e) from None
