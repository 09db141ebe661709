"""The options of an audit run (``aflite audit``), declared once. The audits' own options are
:class:`~aflite.audits.AuditOptions`, which this config extends, so every option an audit
reads from its :class:`~aflite.audits.AuditContext` reaches the command line."""

from __future__ import annotations

from dataclasses import dataclass

from aflite._internal import checks as c
from aflite._internal.options import ConfigError, option
from aflite.audits.options import AuditOptions
from aflite.config.fields import (
    DataFields,
    cache_dir_option,
    drop_labels_option,
    input_option,
    json_out_option,
)
from aflite.config.names import audit_registry

__all__ = ["AuditConfig", "AuditInput"]


@dataclass(frozen=True)
class AuditInput(DataFields):
    """What an audit run reads (the first options of :class:`AuditConfig`)."""

    input: str = input_option(required=True)
    drop_labels: tuple[str, ...] = drop_labels_option(
        "Comma-separated class labels whose rows are left out, e.g. '-' for no gold label."
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
        check=lambda v, n: None if v is None else c.all_of(c.registered(audit_registry))(v, n),
    )


@dataclass(frozen=True)
class AuditConfig(AuditOptions, AuditInput):
    """Options of one audit run (the ``aflite audit`` command line, as a frozen dataclass):
    the input's fields (:class:`~aflite.config.fields.DataFields`), the audits' own options
    (:class:`~aflite.audits.AuditOptions`, handed to them as they are) and the run's."""

    features: str | None = option(
        None,
        "Representation for knn/bias audits (as in `filter`); default: ngrams, or with "
        "--compare against a filter run, the representation that run filtered with.",
        check=c.optional_text,
    )
    cache_dir: str | None = cache_dir_option()
    json_out: str | None = json_out_option("Write all results as JSON here.")

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
