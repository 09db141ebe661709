"""The registry of audits that :func:`aflite.audits.run_audits` (and ``--audits``) can run.

An audit is a function ``audit(ctx: AuditContext) -> list[AuditResult]`` registered with
:func:`register_audit`; the built-in ones are in :mod:`aflite.audits.builtin` (listed in
:mod:`aflite.plugins`). Audits run in
registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.registry import Entry, Registry

__all__ = ["AUDITS", "Audit", "AuditContext", "register_audit"]


@dataclass
class AuditContext:
    """One data set and the options of a ``run_audits`` call, as every audit sees them."""

    texts: dict[str, Sequence[str]]
    labels: np.ndarray
    field: str
    suffix: str = ""
    tag: str = ""
    seed: int = 0
    min_count: int = 20
    identity_min_count: int | Sequence[int] | str = (10, 100)
    identity_words: dict[str, str] | None = None
    dedupe_sentences: bool = True
    tokenizer: str = "regex"
    plot_dir: str | Path | None = None
    counts_path: str | Path | None = None
    given_features: np.ndarray | None = None
    bias_train_size: int | None = None
    _features: Any = field(default=None, repr=False)

    @property
    def features(self) -> np.ndarray:
        """The given features, or n-grams of all text fields (computed once)."""
        if self.given_features is not None:
            return self.given_features
        if self._features is None:
            from aflite.features.ngrams import ngram_features

            self._features = ngram_features([self.texts[f] for f in self.texts])
        return self._features


@dataclass(frozen=True)
class Audit(Entry):
    """A registered audit: ``target(ctx) -> list[AuditResult]``; ``check(ctx)`` runs before
    any audit of the call does, so a missing dependency fails early; ``reads_features``: it
    reads ``ctx.features`` (the representation), not only the texts; ``sized``: its figures
    move with the number of rows alone, so a comparison with a smaller set runs it on a random
    control of that size too."""

    check: Callable[[AuditContext], None] | None = None
    reads_features: bool = False
    sized: bool = False


AUDITS: Registry[Audit] = Registry("audit", entry=Audit)
register_audit = AUDITS.register
"""Register ``audit(ctx) -> list[AuditResult]`` under a name (``check=`` as in :class:`Audit`)."""
