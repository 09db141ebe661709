"""The registries' names the command line's help lists and the options check against (read
when the help is made or a value is checked; none of them imports torch), and the help texts
made of them (:class:`LazyHelp`)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "LazyHelp",
    "audit_names",
    "audit_registry",
    "backend_registry",
    "evaluator_names",
    "format_registry",
    "help_text",
    "scorer_names",
    "stress_test_names",
]


def audit_registry() -> Any:
    """The audit registry (what --audits names are checked against)."""
    from aflite.audits import AUDITS

    return AUDITS


def audit_names(*, choices: bool = False) -> list[str]:
    """The registered audits of labelled rows (or of multiple-choice items, ``choices``), in
    the order they run."""
    from aflite.audits.registry import audits_for

    return audits_for(choices)


def evaluator_names(*, items: bool = False) -> list[str]:
    """The compare evaluators that need no argument (the default set), of labelled rows or
    of multiple-choice ``items``."""
    from aflite.experiments.evaluators import default_evaluators

    return default_evaluators(items=items)


def scorer_names() -> list[str]:
    """The registered per-example scorers (imports no torch)."""
    from aflite.scoring import scorer_names as names

    return names()


def stress_test_names() -> list[str]:
    from aflite.experiments.stress import STRESS_TESTS

    return list(STRESS_TESTS)


def format_registry() -> Any:
    """The data formats (what --input-format names are checked against)."""
    from aflite.io import FORMATS

    return FORMATS


def backend_registry() -> Any:
    """The distributed backends (what --backend names are checked against)."""
    from aflite._internal.backends import BACKENDS

    return BACKENDS


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


def _help(kind: str) -> str:
    """Help texts that list a registry (read when the help is made)."""
    if kind == "formats":
        names = ", ".join(format_registry())
        return f"Read INPUT as this format instead of going by its name: {names}."
    if kind == "audits":
        return (
            "Audits to run before/after for the report, e.g. pmi,partial,ppmi; any of "
            + ", ".join(audit_registry())
            + "."
        )
    if kind == "scorers":
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
