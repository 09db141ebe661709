"""The registries' names the command line's help lists (read when the help is made; none of
them imports torch)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "audit_names",
    "audit_registry",
    "evaluator_names",
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
