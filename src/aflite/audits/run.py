"""Run a set of audits over one data set: the API behind ``aflite audit``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aflite.audits.base import AuditResult
from aflite.audits.options import AuditOptions
from aflite.audits.registry import AUDITS, AuditContext, register_audit

__all__ = ["AUDITS", "AuditOptions", "register_audit", "run_audits"]


def run_audits(
    texts: dict[str, Sequence[str]],
    labels: Sequence[Any],
    *,
    options: AuditOptions | None = None,
    audits: Sequence[str] | None = None,
    features: np.ndarray | None = None,
    tag: str = "",
    choices: Any = None,
    progress: Callable[[str], None] | None = None,
    **kwargs: Any,
) -> list[AuditResult]:
    """Run ``audits`` (names from ``AUDITS``; all of them by default) with ``options`` (an
    :class:`~aflite.audits.AuditOptions`, or keywords of the same names: ``field``,
    ``min_count``, ``identity_min_count``, ``identity_words``, ``dedupe_sentences``,
    ``tokenizer``, ``plot_dir``, ``save_counts``, ``bias_train_size``, ``seed``). Word audits
    use ``field`` (default: the last text field, e.g. the hypothesis); identity PMI reports
    each text field and all of them together at each of ``identity_min_count`` (saved to
    ``save_counts`` at the lowest); ``knn`` and ``bias`` use ``features`` (computed from
    n-grams of all fields if None). ``bias_train_size`` is t for ``bias``: sets that are
    compared are measured at one t (:func:`aflite.audits.baselines.bias_train_rows`).
    ``progress(name)`` is called after each audit. ``choices``
    (:class:`~aflite.io.choices.Choices`, row-aligned) are multiple-choice items: they take
    the audits registered with ``choices=True`` (choices-only, answer-position, choice-pmi,
    choice-length), labelled rows the others; by default every audit of the kind runs."""
    from aflite.audits.registry import audits_for, wrong_kind
    from aflite.errors import DataError

    opts = AuditOptions.of(options, **kwargs)
    audits = audits_for(choices is not None) if audits is None else list(audits)
    for a in audits:
        AUDITS.lookup(a)
    why = wrong_kind(audits, choices is not None)
    if why is not None:
        raise DataError(why)
    fields = list(texts)
    field = opts.field or fields[-1]
    if field not in texts:
        raise ValueError(f"field '{field}' is not among the text fields ({', '.join(fields)})")
    ctx = AuditContext(
        **(opts.as_dict() | {"field": field}),
        texts=texts,
        labels=np.asarray([str(v) for v in labels]),
        suffix=f" ({tag})" if tag else "",
        tag=tag,
        given_features=features,
        choices=choices,
    )
    chosen = [name for name in AUDITS if name in audits]
    for name in chosen:
        if AUDITS[name].check is not None:
            AUDITS[name].check(ctx)
    out: list[AuditResult] = []
    for name in chosen:
        out.extend(AUDITS[name].target(ctx))
        if progress is not None:
            progress(name)  # one call per audit run
    return out
