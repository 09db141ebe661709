"""The audits on the data a user already holds (a pandas DataFrame, a Hugging Face
``Dataset``, a list of dicts or a file), read and checked as ``aflite audit`` reads a file."""

from __future__ import annotations

import warnings
from typing import Any

from aflite._internal.calls import checked_keywords
from aflite.config.fields import data_fields
from aflite.errors import LabelWarning
from aflite.io.dropped import without_dropped
from aflite.io.label_check import check_dropped_labels
from aflite.io.labelled import NO_ID, read_labelled

__all__ = ["audit"]


def _audit_option_names() -> list[str]:
    from aflite.audits import AuditOptions

    return AuditOptions.names()


@checked_keywords(_audit_option_names)
def audit(
    data: Any,
    *,
    label: str,
    text: str | list[str] | None = None,
    audits: str | list[str] | None = None,
    split: str | None = None,
    choices: str | list[str] | None = None,
    context: str | list[str] | None = None,
    blank: str | None = None,
    answer_format: str | None = None,
    drop_labels: str | int | list[str | int] = (),
    tag: str = "",
    options: Any = None,
    **kwargs: Any,
) -> list[Any]:
    """Run the bias audits (word-label PMI, z-statistics, partial input, Max-PPMI, KNN,
    representation bias, identity PMI; ``audits`` picks some) on ``data``'s text fields.
    The audits' options are an :class:`~aflite.audits.AuditOptions` (``options``), keywords
    of the same names (``min_count``, ``seed``, ``field``, ...), or both, checked before the
    data is read. With ``choices`` (and ``context``, ``blank``, ``answer_format``, as in
    :func:`filter_dataset`), multiple-choice items and their audits (choices-only,
    answer-position, choice-pmi, choice-length). Rows of the classes named in ``drop_labels``
    are left out (a placeholder label such as ``-`` is an error until they are). ``tag``
    names the set in each result's summary (``"compare"``: "... (compare)").
    Returns :class:`~aflite.audits.AuditResult` objects (``.summary``, ``.header``, ``.rows``).
    """
    given = dict(locals())  # this call's arguments by name, before any other local
    from aflite.audits import AUDITS, AuditOptions, run_audits

    opts = AuditOptions.of(options, **kwargs)
    if isinstance(audits, str):  # "pmi" or "pmi,partial", as the command line takes it
        audits = [a.strip() for a in audits.split(",") if a.strip()]
    for name in audits or ():
        AUDITS.lookup(name)  # an unknown name, with the closest, before the data is read
    fields = data_fields(given)
    items = fields.choices is not None
    data_ = read_labelled(
        data,
        **fields.read_arguments(),
        id=NO_ID,
        split=split,
        drop_labels=None if items else drop_labels,
        keywords=True,
    )
    check_dropped_labels(data_, drop_labels if not items else (), option="drop_labels")
    tiny = data_.tiny_classes_note()
    if tiny is not None:
        warnings.warn(tiny, LabelWarning, stacklevel=2)
    data_ = without_dropped(data_)
    return run_audits(
        data_.texts,
        data_.label_codes(),
        audits=audits,
        options=opts,
        tag=tag,
        choices=data_.choices,
    )
