"""The options of an audit run (``aflite audit``), declared once. Every option an audit reads
from its :class:`~aflite.audits.AuditContext` is a field here (``test_config`` checks it), so
each reaches the command line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option
from aflite.config.fields import DataFields

__all__ = ["AuditConfig", "AUDIT_CONTEXT_OPTIONS"]

# the option of the audit config each AuditContext field is read from (the others are the
# data: texts, labels, and how a run tags its results)
AUDIT_CONTEXT_OPTIONS = {
    "field": "field",
    "seed": "seed",
    "min_count": "min_count",
    "identity_min_count": "identity_min_count",
    "identity_words": "identity_words",
    "dedupe_sentences": "dedupe_sentences",
    "tokenizer": "tokenizer",
    "plot_dir": "plot_dir",
    "counts_path": "save_counts",
    "given_features": "features",
    "bias_train_size": "bias_train_size",
}


def _optional_size(value: Any, name: str) -> None:
    if value is not None:
        c.size(value, name)


def _audits() -> Any:
    from aflite.audits import AUDITS

    return AUDITS


def _min_counts(value: Any, name: str) -> None:
    from aflite.audits import parse_min_counts

    try:
        parse_min_counts(value)
    except (TypeError, ValueError) as e:
        raise ConfigError(name, str(e)) from None


@dataclass(frozen=True)
class AuditConfig(DataFields):
    """Options of one audit run (the ``aflite audit`` command line, as a frozen dataclass)."""

    input: str = option(
        None,
        "Data file (any format `filter` reads).",
        metavar="INPUT",
        check=c.text,
        argument=True,
        required=True,
    )
    drop_labels: tuple[str, ...] = option(
        (),
        "Comma-separated class labels whose rows are left out, e.g. '-' for no gold label.",
        metavar="LABELS",
        coerce=c.to_names,
        cli_type=str,
        cli_default=None,
    )
    field: str | None = option(
        None,
        "Field for word audits and the partial-input baseline (default: last text field).",
        metavar="FIELD",
        check=c.optional_text,
    )
    compare: str | None = option(
        None,
        "A second file (e.g. kept.jsonl) or a filter run's folder (its kept rows), "
        "audited the same way and shown side by side.",
        check=c.optional_text,
    )
    audits: tuple[str, ...] | None = option(
        None,
        "",
        coerce=lambda v, n: None if v is None else c.to_names(v, n),
        cli_type=str,
        check=lambda v, n: None if v is None else c.all_of(c.registered(_audits))(v, n),
    )
    min_count: int = option(20, "Minimum texts containing a word (PMI, z).", check=c.positive_int)
    identity_min_count: str = option(
        "10,100",
        "Minimum n-gram counts for the identity tables, e.g. 10,100 (saved at the lowest).",
        check=_min_counts,
    )
    identity_words: str | None = option(
        None,
        "Replacement identity-word list (category<TAB>term per line).",
        check=c.optional_text,
    )
    dedupe_sentences: bool = option(
        True,
        "Identity PMI: count a sentence repeated in a field (an SNLI premise) once.",
        check=c.boolean,
    )
    tokenizer: str = option(
        "regex", "Identity PMI tokenizer: regex | spacy.", check=c.choice(["regex", "spacy"])
    )
    features: str | None = option(
        None,
        "Representation for knn/bias audits (as in `filter`); default: ngrams, or with "
        "--compare against a filter run, the representation that run filtered with.",
        check=c.optional_text,
    )
    cache_dir: str | None = option(
        None,
        "Embedding cache folder, shared with `filter` (default ~/.cache/aflite).",
        metavar="DIR",
        check=c.optional_text,
    )
    json_out: str | None = option(
        None, "Write all results as JSON here.", flag="--json", check=c.optional_text
    )
    plot_dir: str | None = option(
        None, "Write the z-statistics plot(s) here.", check=c.optional_text
    )
    save_counts: str | None = option(
        None,
        "Save identity co-occurrence counts (.npz) for `aflite pmi-query`.",
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
    seed: int = option(0, "Random seed.", check=c.seed)

    def check_together(self) -> None:
        if self.input is None:
            raise ConfigError("input", "name the data file to audit")
        super().check_together()
        items = self.choices is not None
        if not self.text and not items:
            raise ConfigError(
                "text",
                "name at least one text field (or {choices} for multiple-choice items)",
            )
        from aflite.audits.registry import wrong_kind

        why = wrong_kind(self.audits, items) if self.audits else None
        if why is not None:
            raise ConfigError("audits", why)
