"""The options every audit reads, declared once: :class:`AuditOptions`, checked when made and
handed unchanged from ``aflite audit`` (:class:`aflite.config.AuditConfig` extends it) and
:func:`aflite.audit` through :func:`~aflite.audits.run_audits` to each audit, which reads
them from its :class:`~aflite.audits.AuditContext` (one of them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.checks import seed_option
from aflite._internal.options import Config, ConfigError, option

__all__ = ["AuditOptions", "bias_train_rows", "parse_min_counts"]


def parse_min_counts(value: str | int | Iterable[int]) -> list[int]:
    """ "10,100" / 10 / [100, 10] -> sorted distinct positive ints."""
    if isinstance(value, str):
        try:
            items = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"min counts must be integers like 10,100, got '{value}'") from None
    elif isinstance(value, int):
        items = [value]
    else:
        items = [int(v) for v in value]
    if not items or min(items) < 1:
        raise ValueError(f"min counts must be integers >= 1, got '{value}'")
    return sorted(set(items))


def bias_train_rows(
    sizes: Sequence[int], train_size: int | float | None = None, *, flag: str = "train_size"
) -> int:
    """t for representation-bias estimates that are compared, as one row count for all sets.

    ``sizes[0]`` is the initial set; the others (kept rows, a random subset, ...) are measured
    at the same t. ``train_size`` (a count, or a fraction of the initial set) is resolved on
    the initial set; a t that leaves no held-out row in some set is a one-line DataError naming
    ``flag``. By default t is min(N/2, max(N/10, 2000)) of the initial N, capped at half the
    smallest set, so every set can be measured.
    """
    from aflite.algorithm import resolve_size
    from aflite.errors import DataError

    n0, smallest = int(sizes[0]), int(min(sizes))
    if train_size is None:
        t = round(min(0.5, max(0.1, 2000 / n0)) * n0) if n0 > 50 else n0 // 2
        return max(1, min(t, smallest // 2))
    try:
        t = resolve_size(train_size, n0, flag)
    except ValueError as e:
        raise DataError(str(e)) from None
    if t >= smallest:
        raise DataError(
            f"{flag} {train_size} is {t} rows of the initial {n0}, which leaves none of the "
            f"{smallest} rows of the smaller set held out; give a count below {smallest}"
        )
    return t


def _min_counts(value: Any, name: str) -> tuple[int, ...]:
    try:
        return tuple(parse_min_counts(value))
    except (TypeError, ValueError) as e:
        raise ConfigError(name, str(e)) from None


def _words(value: Any, name: str) -> None:
    """A file of identity words (category<TAB>term a line), or the words as {term: category}."""
    if value is not None and not isinstance(value, (str, dict)):
        raise ConfigError(name, f"must be a file or a dict of words, got {value!r}")


def _optional_size(value: Any, name: str) -> None:
    if value is not None:
        c.size(value, name)


@dataclass(frozen=True, kw_only=True)
class AuditOptions(Config):
    """What the audits read besides the data. ``identity_min_count`` reads ``"10,100"``
    as (10, 100); ``identity_words`` is a file (or a {term: category} dict; None: the shipped
    list); ``save_counts`` saves the identity counts of the first set audited;
    ``bias_train_size`` is t of the bias audit, a count or a fraction of the first set."""

    field: str | None = option(
        None,
        "Field for word audits and the partial-input baseline (default: last text field).",
        metavar="FIELD",
        check=c.optional_text,
    )
    min_count: int = option(20, "Minimum texts containing a word (PMI, z).", check=c.positive_int)
    identity_min_count: tuple[int, ...] = option(
        (10, 100),
        "Minimum n-gram counts for the identity tables, e.g. 10,100 (saved at the lowest).",
        coerce=_min_counts,
        cli_type=str,
        cli_default="10,100",
    )
    identity_words: Any = option(
        None,
        "Replacement identity-word list (category<TAB>term per line).",
        coerce=c.to_path,
        check=_words,
        cli_type=str,
    )
    dedupe_sentences: bool = option(
        True,
        "Identity PMI: count a sentence repeated in a field (an SNLI premise) once.",
        check=c.boolean,
    )
    tokenizer: str = option(
        "regex", "Identity PMI tokenizer: regex | spacy.", check=c.choice(["regex", "spacy"])
    )
    plot_dir: str | None = option(
        None, "Write the z-statistics plot(s) here.", coerce=c.to_path, check=c.optional_text
    )
    save_counts: str | None = option(
        None,
        "Save identity co-occurrence counts (.npz) for `aflite pmi-query`.",
        coerce=c.to_path,
        check=c.optional_text,
    )
    bias_train_size: Any = option(
        None,
        "t of the bias audit: a count, or a fraction of INPUT; with --compare both sets "
        "are measured at this one t (default: min(N/2, max(N/10, 2000)) of INPUT, at most "
        "half the smaller set).",
        coerce=lambda v, n: None if v is None else c.to_size(v, n),
        check=_optional_size,
        cli_type=str,
    )
    seed: int = seed_option()
