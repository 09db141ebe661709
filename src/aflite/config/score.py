"""The options of a scoring run (``aflite score``), declared once. The options each
per-example scorer declares in the registry (``epochs``, ``C``, ...) are read from it, so
every one reaches the command line and the API (:func:`scorer_options`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option
from aflite.config.fields import (
    DataFields,
    cache_dir_option,
    choice_context_option,
    device_option,
    features_option,
    group_option,
    id_option,
    input_option,
    out_dir_option,
    overwrite_option,
    report_option,
    seed_option,
    split_option,
)
from aflite.config.names import LazyHelp

__all__ = ["ScoreConfig", "check_item_inputs", "scorer_options"]


def scorer_options() -> dict[str, tuple[Any, str]]:
    """Every option a registered per-example scorer declares: name -> (default, help naming
    the scorers that read it), in registration order."""
    from aflite.scoring.registry import EXAMPLE_SCORERS

    readers: dict[str, tuple[Any, list[str]]] = {}
    for s in EXAMPLE_SCORERS.values():
        for k, v in s.options.items():
            readers.setdefault(k, (v, []))[1].append(s.name)
    return {
        k: (
            v,
            f"{_WHAT.get(k, 'An option')} (read by {', '.join(names)}).  [default: "
            f"{v if not isinstance(v, float) else format(v, '.4g')}]",
        )
        for k, (v, names) in readers.items()
    }


# what the built-in scorers' options mean; a plug-in's options are named by their scorers
_WHAT = {
    "n_partitions": "m: random partitions of the predictability score",
    "train_size": "t: training rows per partition of the predictability score (count or fraction)",
    "epochs": "Epochs of the training dynamics",
    "batch_size": "Mini-batch of the training dynamics' models (auto: a 32nd of the training "
    "rows, within [8, 128])",
    "lr": "Adam step of the training dynamics' models (auto: 0.05 / sqrt(d))",
    "l2": "L2 penalty of the training dynamics' models",
    "ambiguous_share": "Data map: the share of rows with the highest variability called ambiguous",
    "ambiguous_min": "Data map: the least variability an ambiguous row has",
    "easy_confidence": "Data map: the least confidence of an easy row",
    "C": "Inverse L2 strength of the PVI and partial-input models (auto: chosen by "
    "cross-validation)",
    "el2n_epoch": "The epoch whose error vector EL2N reads",
}


def _scorers(value: Any, name: str) -> Any:
    if value is None:
        return None
    names = c.to_names(value, name)
    if not names:
        raise ConfigError(name, "name at least one scorer")
    from aflite.scoring.registry import EXAMPLE_SCORERS

    for n in names:
        if n not in EXAMPLE_SCORERS:
            raise ConfigError(name, EXAMPLE_SCORERS.unknown(n))
    return names


def _scalar(value: Any, name: str) -> Any:
    """A scorer option from a file or the command line: '10' -> 10, '1e-3' -> 0.001."""
    if not isinstance(value, str):
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _options(value: Any, name: str) -> Mapping[str, Any]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise ConfigError(name, f"must be a table of scorer options, got {value!r}")
    known = scorer_options()
    for k in value:
        if k not in known:
            from aflite.io.base import did_you_mean

            raise ConfigError(k, f"not an option of any scorer{did_you_mean(k, list(known))}")
    return MappingProxyType({k: _scalar(v, k) for k, v in value.items()})


_FOLDS = "Folds of each cross-fit."


def _folds(value: Any, name: str) -> None:
    from numbers import Integral

    if isinstance(value, bool) or not isinstance(value, Integral) or value < 2:
        raise ConfigError(name, f"must be a whole number >= 2, got {c.show(value)}")


@dataclass(frozen=True)
class ScoreConfig(DataFields):
    """Options of one scoring run (the ``aflite score`` command line, as a frozen dataclass);
    ``options`` are scorer options (``epochs``, ``C``, ...: :func:`scorer_options`)."""

    input: str = input_option()
    scorers: tuple[str, ...] | None = option(
        None,
        LazyHelp("scorers"),
        metavar="NAMES",
        coerce=_scorers,
        cli_type=str,
    )
    choice_context: str = choice_context_option()
    partial_text: tuple[str, ...] = option(
        (),
        "Text fields of a partial input (e.g. hypothesis) for partial and pvi_partial.",
        metavar="FIELDS",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
        flag="--partial-text-fields",
    )
    id: str | None = id_option()
    group: str | None = group_option()
    features: str = features_option()
    dynamics: str | None = option(
        None,
        "Training dynamics logged elsewhere (allenai/cartography's "
        "dynamics_epoch_N.jsonl, matched by id) instead of recording them.",
        metavar="DIR",
        check=c.optional_text,
    )
    probs: str | None = option(
        None,
        "Out-of-fold class probabilities of your own model, by id (a column per class "
        "label, or one list column in sorted label order), for pvi instead of aflite's model.",
        metavar="FILE",
        check=c.optional_text,
    )
    partial_probs: str | None = option(
        None,
        "The same from your own partial-input model (e.g. hypothesis-only), for partial "
        "and pvi_partial.",
        metavar="FILE",
        check=c.optional_text,
    )
    n_folds: int = option(5, _FOLDS, metavar="K", check=_folds)
    repeats: int = option(
        1, "Cross-fits with fresh folds, averaged.", metavar="R", check=c.positive_int
    )
    split: str | None = split_option()
    out_dir: str = out_dir_option("aflite-scores")
    seed: int = seed_option()
    device: str = device_option()
    cache_dir: str | None = cache_dir_option()
    overwrite: bool = overwrite_option()
    report: bool = report_option()
    # the scorers' own options: each is a command-line option of its own (see scorer_options)
    options: Mapping[str, Any] = option(None, "", coerce=_options, entries=scorer_options)

    def check_together(self) -> None:
        if self.input is None:
            raise ConfigError("input", "name the data file to score")
        super().check_together()
        if self.choices is not None:
            self._check_items()

    def _check_items(self) -> None:
        """What scoring items allows: the feature kinds and scorers for items, no partial
        input, dynamics or probabilities."""
        from aflite.features.build import check_item_features
        from aflite.scoring.run import resolve_scorers

        check_item_features(self.features)
        check_item_inputs({n: getattr(self, n) for n in _INPUTS})
        try:
            resolve_scorers(self.scorers, has_partial=False, items=True)
        except ValueError as e:
            raise c.flagged("scorers", e) from None


# what scores labelled rows only: the partial input, training dynamics, probabilities
_INPUTS = ("partial_text", "dynamics", "probs", "partial_probs")


def check_item_inputs(given: Mapping[str, Any]) -> None:
    """Refuse, on multiple-choice items, each of ``given`` (name -> value) that is set: the
    inputs that score labelled rows only (:class:`ScoreConfig`'s, or
    :func:`aflite.score_dataset`'s arguments); a ConfigError naming it."""
    for name, value in given.items():
        if value is not None and not (isinstance(value, (tuple, list)) and not value):
            raise ConfigError(name, "multiple-choice items are scored without it")
