"""Parsing of option values shared by the commands; a bad value is a one-line DataError."""

from __future__ import annotations

from aflite.errors import DataError


def features_help() -> str:
    """``--features``: the registered feature kinds."""
    from aflite.features import kinds as _kinds  # noqa: F401  (registers the built-in kinds)
    from aflite.features.registry import features_help as _help

    return _help()


def input_help() -> str:
    """``INPUT``: the registered data formats."""
    from aflite.io import formats_help

    return formats_help() + "."


def format_names() -> list[str]:
    """The registered data formats, for ``--input-format``."""
    from aflite.io import FORMATS

    return list(FORMATS)


def audit_names() -> list[str]:
    """The registered audits, in the order they run."""
    from aflite.audits import AUDITS

    return list(AUDITS)


def evaluator_names() -> list[str]:
    """The registered compare evaluators."""
    from aflite.experiments.evaluators import EVALUATORS

    return list(EVALUATORS)


def parse_size(value: str, name: str) -> int | float:
    """'5000' -> 5000 rows; '0.3' -> a fraction."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        raise DataError(f"{name} must be a row count or a fraction, got '{value}'") from None


def parse_min_bias(value: str) -> float | None:
    if value.strip().lower() in ("off", "none"):
        return None
    try:
        return float(value)
    except ValueError:
        raise DataError(f"--min-bias must be a margin such as 0.02, or 'off', got '{value}'") from None


def parse_balance(value: str) -> str | None:
    if value not in ("none", "classes"):
        raise DataError(f"--balance must be none or classes, got '{value}'")
    return None if value == "none" else value


def parse_fields(value: str | None) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()] if value else []
