"""The registry of audits that :func:`aflite.audits.run_audits` (and ``--audits``) can run.

An audit is a function ``audit(ctx: AuditContext) -> list[AuditResult]`` registered with
:func:`register_audit`; the built-in ones are in :mod:`aflite.audits.builtin` (listed in
:mod:`aflite.plugins`). Audits run in
registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aflite._internal.registry import Entry, Registry
from aflite.audits.options import AuditOptions

__all__ = ["AUDITS", "Audit", "AuditContext", "audits_for", "register_audit", "wrong_kind"]


@dataclass(frozen=True, kw_only=True)
class AuditContext(AuditOptions):
    """One data set and the options of a ``run_audits`` call (an :class:`AuditOptions`, as
    given), as every audit sees them."""

    texts: dict[str, Sequence[str]]
    labels: np.ndarray
    suffix: str = ""
    tag: str = ""
    given_features: np.ndarray | None = None
    choices: Any = None  # multiple-choice items (aflite.io.choices.Choices), row-aligned
    _features: Any = field(default=None, repr=False, compare=False)

    @property
    def features(self) -> np.ndarray:
        """The given features, or n-grams of all text fields (computed once)."""
        if self.given_features is not None:
            return self.given_features
        if self._features is None:
            from aflite.features.ngrams import ngram_features

            # a cache on a frozen context: what it holds is derived from the texts alone
            object.__setattr__(
                self, "_features", ngram_features([self.texts[f] for f in self.texts])
            )
        return self._features


@dataclass(frozen=True)
class Audit(Entry):
    """A registered audit: ``target(ctx) -> list[AuditResult]``; ``check(ctx)`` runs before
    any audit of the call does, so a missing dependency fails early; ``reads_features``: it
    reads ``ctx.features`` (the representation), not only the texts; ``sized``: its figures
    move with the number of rows alone, so a comparison with a smaller set runs it on a random
    control of that size too; ``choices``: it audits multiple-choice items (``ctx.choices``)
    and runs on them only, the others on rows with a class label only."""

    check: Callable[[AuditContext], None] | None = None
    reads_features: bool = False
    sized: bool = False
    choices: bool = False


AUDITS: Registry[Audit] = Registry("audit", entry=Audit)
register_audit = AUDITS.register
"""Register ``audit(ctx) -> list[AuditResult]`` under a name (``check=`` as in :class:`Audit`)."""


def audits_for(choices: bool) -> list[str]:
    """The registered audits of multiple-choice items (``choices``) or of labelled rows."""
    return [name for name in AUDITS if AUDITS[name].choices == choices]


def wrong_kind(names: Sequence[str], choices: bool) -> str | None:
    """Why one of ``names`` cannot run on multiple-choice items (``choices``) or on labelled
    rows, in one line; None when all can."""
    for name in names:
        if AUDITS.lookup(name).choices != choices:
            if choices:
                return (
                    f"the {name} audit is for rows with a class label; multiple-choice "
                    f"items take {', '.join(audits_for(True))}"
                )
            return f"the {name} audit is for multiple-choice items (name their choices)"
    return None
