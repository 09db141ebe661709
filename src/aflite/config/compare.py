"""The options of the train-on-D / random / filtered comparison (``aflite experiment compare``
and ``experiment ood``, :func:`aflite.experiments.compare_experiment`), declared once: the
comparison's own (:class:`aflite.experiments.options.CompareOptions`), which this config
extends with the sets it reads; the filter's options they also take are
:class:`~aflite.config.FilterConfig`'s, with its defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option
from aflite.algorithm import FilterOptions
from aflite.config.fields import DataFields, choice_context_option, json_out_option
from aflite.experiments.options import CompareOptions, check_item_options

__all__ = ["CompareConfig", "CompareSets", "COMPARE_FILTER_OPTIONS", "check_item_options"]

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


def _to_list(value: Any, name: str) -> tuple[str, ...]:
    """A repeatable option: the values given, in order."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"must be a list of text values, got {value!r}")
    return tuple(value)


def _per_set(value: Any, name: str) -> None:
    from aflite._internal.options import flag
    from aflite.errors import DataError
    from aflite.experiments.ood import parse_per_set

    try:
        parse_per_set(value, flag(name))
    except DataError as e:
        raise c.flagged(name, e) from None


@dataclass(frozen=True)
class CompareSets(DataFields):
    """The sets a comparison reads (the first options of :class:`CompareConfig`)."""

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


@dataclass(frozen=True)
class CompareConfig(CompareOptions, CompareSets):
    """Options of one comparison (the ``aflite experiment compare`` command line, less the
    filter's options, as a frozen dataclass), each checked when the object is made: the
    sets' fields (:class:`~aflite.config.fields.DataFields`), the comparison's own options
    (:class:`~aflite.experiments.options.CompareOptions`) and the sets it reads."""

    markdown: str | None = option(
        None, "Write the table as Markdown here.", check=c.optional_text, result=False
    )
    json_out: str | None = json_out_option("Write the results as JSON here.", result=False)

    def check_together(self) -> None:
        super().check_together()
        if self.choices is None:
            if not self.text:
                raise ConfigError(
                    "text",
                    "name the text fields, e.g. premise,hypothesis (or {choices} for "
                    "multiple-choice items)",
                )
            self.check_evaluators(items=False)
            return
        check_item_options({name: getattr(self, name) for name in self.names()})
        self.check_evaluators(items=True)
