"""A data set without the rows whose labels were named to drop (``drop_labels``)."""

from __future__ import annotations

import numpy as np

from aflite.io.labelled import NO_ID, LabelledData, read_labelled

__all__ = ["without_dropped"]


def without_dropped(data: LabelledData) -> LabelledData:
    """``data`` (a :class:`~aflite.io.labelled.LabelledData`) without the rows whose labels
    were named to drop: for the audits, which measure rows but write none back, so set-aside
    rows have no output to go to."""
    if data.dropped is None:
        return data
    f = data.fields
    keep = np.flatnonzero(~data.dropped)
    return read_labelled(
        data.subset(keep),
        label=f.label,
        text=list(f.text) or None,
        id=f.id or NO_ID,
        group=f.group,
        need_text=False,
        pick=False,
    )
