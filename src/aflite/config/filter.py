"""The options of a filtering run (``aflite filter``, :func:`aflite.filter_dataset`,
``aflite experiment compare``), declared once.

The algorithm's options start from the practical defaults (the ``practical`` preset, see
:mod:`aflite.config.presets`): :func:`aflite.filter` itself runs Algorithm 1 as published,
the ``paper`` preset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, defaults_from, option
from aflite.algorithm import PRESETS, FilterOptions
from aflite.algorithm.models import asks_for_items
from aflite.config.fields import (
    DataFields,
    cache_dir_option,
    card_fields_option,
    choice_context_option,
    device_option,
    drop_labels_option,
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
from aflite.config.names import LazyHelp, audit_registry, backend_registry, format_registry

__all__ = ["FilterConfig", "FilterInput"]


def _by(value: Any, name: str) -> None:
    if value is None:
        return
    from aflite.errors import DataError
    from aflite.scoring.filter_by import parse_by

    c.text(value, name)
    try:
        parse_by(value)
    except DataError as e:
        raise c.flagged(name, e) from None


# options of a filtering run that only mean something for rows with a class label
NOT_FOR_ITEMS = ("warmup_fraction", "by", "balance")

# options only AFLITE's re-scored phases read: a --by pass ranks by its score once and measures
# the bias with the linear family on block partitions
NOT_FOR_BY = ("threshold", "strategy", "model", "partitions")


def _check_seed(value: Any, name: str) -> None:
    if value is not None:
        c.seed(value, name)


@dataclass(frozen=True)
class FilterInput(DataFields):
    """What a filtering run reads and how (the first options of :class:`FilterConfig`)."""

    input: str = input_option()
    split: str | None = split_option()
    input_format: str | None = option(
        None,
        LazyHelp("formats"),
        metavar="FORMAT",
        check=lambda v, n: None if v is None else c.registered(format_registry)(v, n),
    )
    id: str | None = id_option()
    group: str | None = group_option()
    choice_context: str = choice_context_option()
    features: str = features_option()


@dataclass(frozen=True)
@defaults_from(PRESETS["practical"].as_options())
class FilterConfig(FilterOptions, FilterInput):
    """Options of one filtering run (the ``aflite filter`` command line, as a frozen
    dataclass), each checked when the object is made: the input's fields
    (:class:`~aflite.config.fields.DataFields`), the filter's own options
    (:class:`aflite.FilterOptions`, from the ``practical`` preset) and the run's.

    ``id=None`` uses a column named ``id`` where there is one (``"none"``: row numbers);
    empty ``text`` with text features use the only text column. ``cache_dir=None`` is
    ``AFLITE_CACHE`` or ``~/.cache/aflite``.
    """

    by: str | None = option(
        None,
        "Instead of AFLITE's phases, score every row once by one per-example score (e.g. "
        "pvi, datamap:confidence; see aflite score) and remove the easiest rows in slices of "
        "--slice-size, down to --target-size or, with --min-bias, to chance; --n-partitions "
        "and --train-size set the bias measured between slices, --balance applies; "
        "--threshold, --strategy, --model and --partitions do not apply (given, they are "
        "ignored with a note).",
        metavar="SCORER[:COLUMN]",
        check=_by,
    )
    warmup_fraction: float | None = option(
        None,
        "Train a warm-up model on this fraction; it gives Phi for the rest.",
        metavar="FRACTION",
        check=c.open_unit,
    )
    warmup_finetune: bool = option(
        False,
        "With a sentence-transformers model: fine-tune the encoder itself in warm-up.",
        check=c.boolean,
    )
    out_dir: str = out_dir_option("aflite-out")
    seed: int = seed_option()
    check_seed: int | None = option(
        None,
        "Run again with this seed and report how many of the removed rows it removes too "
        "(the removed sets' Jaccard index): how settled the set is, measured; one more run.",
        metavar="N",
        coerce=c.to_int,
        check=_check_seed,
        cli_type=str,
    )
    device: str = device_option()
    threads: int | None = option(
        None,
        "Worker threads (default: AFLITE_THREADS, else the cores this process may run "
        "on); the result does not depend on it.",
        metavar="N",
        check=c.optional_positive_int,
        result=False,
    )
    resume: bool = option(
        False,
        "Continue an interrupted run from its last checkpoint.",
        check=c.boolean,
        result=False,
    )
    overwrite: bool = overwrite_option()
    cache_dir: str | None = cache_dir_option()
    report: bool = report_option()
    card_fields: tuple[tuple[str, str], ...] = card_fields_option()
    audits: tuple[str, ...] = option(
        (),
        LazyHelp("audits"),
        metavar="NAMES",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
        check=c.all_of(c.registered(audit_registry)),
    )
    backend: str | None = option(
        None,
        "local | ray (rows held in shards by Ray workers, embeddings on Ray), or a backend "
        "added with aflite.register_backend.",
        metavar="local|NAME",
        coerce=c.to_none("local"),
        cli_type=str,
        cli_default="local",
        check=lambda v, n: None if v is None else c.registered(backend_registry)(v, n),
        result=False,
    )
    ray_address: str | None = option(
        None,
        "Ray cluster address (e.g. auto, ray://head:10001); default: a local instance.",
        metavar="ADDRESS",
        check=c.optional_text,
        result=False,
    )
    keep_ids: str | None = option(
        None,
        "A reviewer's decisions: row ids (one a line) the filter must never remove.",
        metavar="FILE",
        check=c.optional_text,
    )
    drop_ids: str | None = option(
        None,
        "A reviewer's decisions: row ids (one a line) removed before filtering.",
        metavar="FILE",
        check=c.optional_text,
    )
    drop_labels: tuple[str, ...] = drop_labels_option(
        "Comma-separated class labels whose rows are removed before filtering (marked "
        "dropped), e.g. '-' for no gold label."
    )

    def check_together(self) -> None:
        from aflite.features.build import parse_feature_spec

        if self.input is None:
            raise ConfigError("input", "name the data file to filter")
        # at once, before the checks that look for files or models: the registry's own check
        FilterOptions.check_fields({"model": self.model})
        super().check_together()
        kind = parse_feature_spec(self.features).entry
        self._check_choices()
        if (
            self.warmup_finetune
            and kind.learn is None  # a kind learned on the warm-up rows is its own warm-up model
            and (kind.finetune is None or self.warmup_fraction is None)
        ):
            from aflite.features.registry import FEATURE_KINDS

            tunable = " or ".join(k.usage for k in FEATURE_KINDS.values() if k.finetune)
            raise ConfigError(
                "warmup_finetune", f"needs {{features}} {tunable} and {{warmup_fraction}}"
            )
        if self.ray_address and self.backend is None:
            raise ConfigError("ray_address", "needs {backend} ray")
        if self.check_seed is not None and self.check_seed == self.seed:
            raise ConfigError("check_seed", f"is the run's own {{seed}} {self.seed}: name another")
        if self.check_seed is not None and self.by is not None:
            raise ConfigError("check_seed", "compares two AFLITE runs: leave out {by}")
        if asks_for_items(self.model) and not self.choices:
            raise ConfigError(
                "model",
                f"'{self.model}' fits multiple-choice items: name their choices with {{choices}}",
            )
        if self.backend is None:  # a cluster's workers load the model, from their own disks
            _feature_source(self.features, "features")
        else:
            from aflite.algorithm.models import MODELS

            if not MODELS.lookup(self.model).distributed:
                ok = ", ".join(n for n, f in MODELS.items() if f.distributed)
                raise ConfigError(
                    "model", f"{{backend}} {self.backend} runs the model families {ok} only"
                )
        if self.by is not None and self.backend is not None:
            raise ConfigError("by", f"scores on this machine; leave out {{backend}} {self.backend}")

    def _check_choices(self) -> None:
        if not self.choices:
            self._check_audit_kind(choices=False)
            return
        from aflite.features.build import check_item_features

        check_item_features(self.features)
        c.refuse_for_items(vars(self), NOT_FOR_ITEMS)
        self._check_audit_kind(choices=True)

    def _check_audit_kind(self, *, choices: bool) -> None:
        from aflite.audits.registry import wrong_kind

        why = wrong_kind(self.audits, choices) if self.audits else None
        if why is not None:
            raise ConfigError("audits", why)

    def ignored_options(self, *, cli: bool) -> str | None:
        """One line naming the options this run does not read (those of AFLITE's phases under
        ``by``) that were given other values than they read as unset (the preset's, else the
        defaults; see :meth:`unset_as`), as flags with ``cli``."""
        if self.by is None:
            return None
        from aflite._internal.options import flag, show

        given = [n for n in NOT_FOR_BY if getattr(self, n) != self.unset_value(n)]
        if not given:
            return None
        if cli:
            named = [f"{flag(n)} {getattr(self, n)}" for n in given]
            by = f"--by {self.by}"
        else:
            named = [f"{n}={show(getattr(self, n))}" for n in given]
            by = f"by={show(self.by)}"
        names = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
        verb = "do" if len(named) > 1 else "does"
        return f"{names} {verb} not apply with {by}; ignored"


def _feature_source(value: Any, name: str) -> None:
    """What a feature spec names can be had on this machine (a sentence-transformers model
    found, or downloadable): refused in well under a second, before torch is imported."""
    from aflite.errors import DataError
    from aflite.features.build import check_feature_source

    try:
        check_feature_source(value)
    except DataError as e:
        raise c.flagged(name, e) from None
