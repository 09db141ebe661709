"""The options of a filtering run (``aflite filter``, :func:`aflite.filter_dataset`,
``aflite experiment compare``), declared once.

The algorithm's options start from the practical defaults (the ``practical`` preset, see
:mod:`aflite.config.presets`): :func:`aflite.filter` itself runs Algorithm 1 as published,
the ``paper`` preset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aflite.config import checks as c
from aflite.config.base import Config, ConfigError, option
from aflite.config.choices import (
    answer_format_option,
    blank_option,
    check_item_features,
    check_item_fields,
    choice_context_option,
    choices_field_option,
    choices_fields_option,
    context_fields_option,
    refuse_for_items,
)
from aflite.types import Balance, Strategy

__all__ = ["FilterConfig"]


def _formats() -> Any:
    from aflite.io import FORMATS

    return FORMATS


def _audits() -> Any:
    from aflite.audits import AUDITS

    return AUDITS


def _model(value: Any, name: str) -> None:
    """A model family usable by name (the registry imports torch: checked when a run is set up,
    which needs it anyway)."""
    from aflite.algorithm.models import check_model_name
    from aflite.errors import DataError

    c.text(value, name)
    try:
        check_model_name(value)
    except DataError as e:
        raise c.flagged(name, e) from None


def _strategies() -> list[str]:
    from aflite.types import STRATEGIES

    return list(STRATEGIES)


def _features(value: Any, name: str) -> None:
    from aflite.features.build import parse_feature_spec

    c.text(value, name)
    try:
        parse_feature_spec(value)
    except ValueError as e:
        raise c.flagged(name, e) from None


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


def _help(kind: str) -> str:
    """Help texts that list a registry (read when the help is made)."""
    if kind == "formats":
        return (
            "Read INPUT as this format instead of going by its name: " + ", ".join(_formats()) + "."
        )
    if kind == "audits":
        return (
            "Audits to run before/after for the report, e.g. pmi,partial,ppmi; any of "
            + ", ".join(_audits())
            + "."
        )
    if kind == "scorers":
        from aflite.scoring import scorer_names

        return (
            "Comma-separated scorers, any of "
            + ", ".join(scorer_names())
            + " (default: all but partial; partial too with --partial-text-fields)."
        )
    if kind == "input":
        from aflite.io import formats_help

        return formats_help() + "."
    from aflite.features.registry import features_help

    return features_help()


class LazyHelp(str):
    """A help text made on first use (the list of a registry's names, by ``kind``), so
    importing the config imports no registry."""

    def __new__(cls, kind: str) -> LazyHelp:
        obj = super().__new__(cls, kind)
        obj.kind = kind  # type: ignore[attr-defined]
        return obj


def help_text(value: Any) -> str:
    """The help of a field, with registry lists filled in."""
    return _help(value.kind) if isinstance(value, LazyHelp) else str(value)


_SIZE = {"coerce": c.to_size, "check": c.size, "cli_type": str, "metavar": "SIZE"}


# options of a filtering run that only mean something for rows with a class label
NOT_FOR_ITEMS = ("warmup_fraction", "by", "balance", "backend")

# options only AFLITE's re-scored phases read: a --by pass ranks by its score once and measures
# the bias with the linear family on block partitions
NOT_FOR_BY = ("threshold", "strategy", "model", "partitions")


@dataclass(frozen=True)
class FilterConfig(Config):
    """Options of one filtering run (the ``aflite filter`` command line, as a frozen
    dataclass), each checked when the object is made.

    ``id_field=None`` uses a column named ``id`` where there is one (``"none"``: row numbers);
    empty ``text_fields`` with text features use the only text column. ``cache_dir=None`` is
    ``AFLITE_CACHE`` or ``~/.cache/aflite``.
    """

    input: str = option(None, LazyHelp("input"), metavar="INPUT", check=c.text, argument=True)
    split: str | None = option(
        None,
        "The split to filter, for a Hugging Face DatasetDict folder (e.g. train).",
        check=c.optional_text,
        metavar="TEXT",
    )
    input_format: str | None = option(
        None,
        LazyHelp("formats"),
        metavar="FORMAT",
        check=lambda v, n: None if v is None else c.registered(_formats)(v, n),
    )
    label_field: str = option(
        "label", "Field holding the class label.", metavar="FIELD", check=c.text
    )
    text_fields: tuple[str, ...] = option(
        (),
        "Comma-separated text fields, e.g. premise,hypothesis; default: the only text "
        "column besides the label, id and group fields.",
        metavar="FIELDS",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
    )
    id_field: str | None = option(
        None,
        "Field with unique row ids (checked for duplicates); default: a column named id, "
        "if any; 'none' numbers the rows.",
        metavar="FIELD",
        check=c.optional_text,
    )
    group_field: str | None = option(
        None,
        "Rows sharing this field never straddle a split (e.g. premise).",
        metavar="FIELD",
        check=c.optional_text,
    )
    choices_field: str | None = choices_field_option()
    choices_fields: tuple[str, ...] = choices_fields_option()
    context_fields: tuple[str, ...] = context_fields_option()
    blank: str | None = blank_option()
    answer_format: str | None = answer_format_option()
    choice_context: str = choice_context_option()
    features: str = option("ngrams", LazyHelp("features"), metavar="KIND[:ARG]", check=_features)
    model: str = option(
        "auto",
        "Model family the partitions train: ridge (exact least squares), linear "
        "(batched logistic regression), auto (ridge where a training part has at most as many "
        "rows as there are features, else linear), or one added with aflite.register_model.",
        metavar="NAME",
        check=_model,
        algorithm=True,
        heavy=True,
    )
    target_size: Any = option(0.5, "n: rows to keep (count or fraction).", algorithm=True, **_SIZE)
    n_partitions: Any = option(
        "auto",
        "m: random partitions per phase (auto: 512 with the exact family ridge, whose "
        "partitions are cheap, 64 with logistic regression).",
        metavar="M|auto",
        coerce=c.to_auto_int,
        check=c.positive_int_or_auto,
        cli_type=str,
        algorithm=True,
    )
    train_size: Any = option(
        0.1, "t: training rows per partition (count or fraction).", algorithm=True, **_SIZE
    )
    slice_size: Any = option(
        0.05, "k: rows removed per phase at most (count or fraction).", algorithm=True, **_SIZE
    )
    threshold: float = option(
        0.6,
        "tau: minimum predictability for removal (the paper: 0.75).",
        metavar="TAU",
        check=c.unit,
        algorithm=True,
    )
    min_bias: float | None = option(
        0.02,
        "Stop when the representation bias is within this margin of chance; 'off' for "
        "Algorithm 1 as published.",
        metavar="MARGIN|off",
        coerce=c.to_margin,
        check=c.margin,
        cli_type=str,
        algorithm=True,
    )
    balance: Balance = option(
        None,
        "none | classes: remove from every class in proportion to its size.",
        metavar="none|classes",
        coerce=c.to_none("none"),
        cli_type=str,
        cli_default="none",
        check=lambda v, n: None if v in (None, "classes") else _bad_balance(v, n),
        algorithm=True,
    )
    strategy: Strategy = option(
        "slicing",
        "slicing | greedy | sampling | single_shot.",
        metavar="NAME",
        check=c.choice(_strategies),
        cli_type=str,
        algorithm=True,
    )
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
    out_dir: str = option("aflite-out", "Output folder.", metavar="DIR", check=c.text, result=False)
    partitions: str = option(
        "blocks",
        "blocks: rows dealt into blocks, each classifier trains on whole blocks "
        "(fast); uniform: independent uniform training parts (Algorithm 1's wording).",
        metavar="blocks|uniform",
        check=c.choice(["blocks", "uniform"]),
        algorithm=True,
    )
    seed: int = option(0, "Random seed.", metavar="N", check=c.seed)
    device: str = option(
        "auto", "auto | cpu | cuda.", metavar="DEVICE", check=c.device, result=False
    )
    threads: int | None = option(
        None,
        "Worker threads (default: AFLITE_THREADS, else the cores this process may run "
        "on); the result does not depend on it.",
        metavar="N",
        check=c.optional_positive_int,
        result=False,
        algorithm=True,
    )
    resume: bool = option(
        False,
        "Continue an interrupted run from its last checkpoint.",
        check=c.boolean,
        result=False,
    )
    overwrite: bool = option(
        False,
        "Replace the outputs of an earlier run in --out-dir (other files stay).",
        check=c.boolean,
        result=False,
    )
    cache_dir: str | None = option(
        None,
        "Embedding cache folder (default ~/.cache/aflite).",
        metavar="DIR",
        check=c.optional_text,
        result=False,
    )
    report: bool = option(True, "Write report.html.", check=c.boolean, result=False)
    audits: tuple[str, ...] = option(
        (),
        LazyHelp("audits"),
        metavar="NAMES",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
        check=c.all_of(c.registered(_audits)),
    )
    backend: str | None = option(
        None,
        "local | ray (partitions and embeddings on Ray).",
        metavar="local|ray",
        coerce=c.to_none("local"),
        cli_type=str,
        cli_default="local",
        check=lambda v, n: None if v in (None, "ray") else _bad_backend(v, n),
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
    drop_labels: tuple[str, ...] = option(
        (),
        "Comma-separated class labels whose rows are removed before filtering (marked "
        "dropped), e.g. '-' for no gold label.",
        metavar="LABELS",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
    )

    def check_together(self) -> None:
        from aflite.features.build import parse_feature_spec

        if self.input is None:
            raise ConfigError("input", "name the data file to filter")
        if not self.label_field:
            raise ConfigError("label_field", "must name a field")
        seen: set[str] = set()
        for f in self.text_fields:
            if f in seen:
                raise ConfigError("text_fields", f"'{f}' is named twice")
            if f == self.label_field:
                raise ConfigError("text_fields", f"'{f}' is the label field ({{label_field}})")
            seen.add(f)
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
        if self.ray_address and self.backend != "ray":
            raise ConfigError("ray_address", "needs {backend} ray")
        c.model_family(self.model, "model")  # at once: the registry's own check imports torch
        if self.model in ("choice", "choice-ridge") and not self.choices:
            raise ConfigError(
                "model",
                f"'{self.model}' fits multiple-choice items: name their choices with "
                "{choices_field} or {choices_fields}",
            )
        if self.backend != "ray":  # on Ray the workers load the model, from their own disks
            c.feature_source(self.features, "features")
        if self.backend == "ray":
            from aflite.algorithm.models import MODELS

            _model(self.model, "model")  # an unknown name is named as the model's error
            if not MODELS.lookup(self.model).distributed:
                ok = ", ".join(n for n, f in MODELS.items() if f.distributed)
                raise ConfigError("model", f"{{backend}} ray runs the model families {ok} only")
        if self.by is not None and self.backend == "ray":
            raise ConfigError("by", "scores on this machine; leave out {backend} ray")

    @property
    def choices(self) -> str | tuple[str, ...] | None:
        """Where the multiple-choice items' choices are (None: rows with a class label)."""
        return self.choices_field or self.choices_fields or None

    def _check_choices(self) -> None:
        if not check_item_fields(self):
            self._check_audit_kind(choices=False)
            return
        check_item_features(self.features)
        refuse_for_items(vars(self), NOT_FOR_ITEMS)
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
        from aflite.config.base import flag, show

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

    def algorithm_options(self) -> dict[str, Any]:
        """The options :func:`aflite.adversarial_filter` takes, by its parameter names."""
        from aflite.config.base import config_fields

        return {
            f.name: getattr(self, f.name) for f in config_fields(self) if f.metadata["algorithm"]
        }


def _bad_balance(value: Any, name: str) -> None:
    from aflite.config.base import show

    raise ConfigError(name, f"must be none or classes, got {show(value)}")


def _bad_backend(value: Any, name: str) -> None:
    from aflite.config.base import show

    raise ConfigError(name, f"must be local or ray, got {show(value)}")
