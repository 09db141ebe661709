"""Names ``aflite.jobs`` held before the filter's steps became the one filter pipeline
(:mod:`aflite.api.pipeline`), which :func:`aflite.filter_dataset` runs too. Each still works
and warns once where it is used; they go in a later release."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from aflite.api.pipeline import FilterPlan, FilterRun, prepare, read_rows, represent
from aflite.io.labelled import LabelledData, read_labelled

__all__ = [
    "JobPlan",
    "compute_representation",
    "load_job_inputs",
    "plan_job",
    "read_labelled_texts",
]

# the old name of what a checked run will filter
JobPlan = FilterPlan

# each old name: what replaces it
REPLACED_BY = {
    "JobPlan": "aflite.api.pipeline.FilterPlan",
    "compute_representation": "aflite.api.pipeline.represent",
    "load_job_inputs": "aflite.api.pipeline.read_rows",
    "plan_job": "aflite.api.pipeline.prepare",
    "read_labelled_texts": "aflite.io.labelled.read_labelled(..., pick=False)",
}


def warn(name: str) -> None:
    warnings.warn(
        f"aflite.jobs.{name} is deprecated; use {REPLACED_BY[name]}",
        DeprecationWarning,
        stacklevel=3,
    )


def load_job_inputs(job: Any) -> LabelledData:
    """The rows of a job's input, read and checked."""
    return read_rows(FilterRun.of_config(job))


def plan_job(job: Any, inputs: LabelledData) -> FilterPlan:
    """What a job will filter, every size checked against ``inputs``."""
    return prepare(FilterRun.of_config(job), note=lambda line: None, data=inputs)


def compute_representation(
    job: Any,
    spec: Any,
    inputs: LabelledData,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    *,
    progress: bool,
) -> np.ndarray:
    """Phi of a job's ``rest`` rows (``spec`` is the job's own feature spec)."""
    plan = FilterPlan(inputs, warm_rows, rest, target=0)
    return represent(FilterRun.of_config(job), plan, progress=progress)


def read_labelled_texts(
    path: str,
    text_fields: Sequence[str],
    *,
    label_field: str = "label",
    group_field: str | None = None,
    id_field: str | None = None,
    drop_labels: Sequence[str] | None = None,
) -> LabelledData:
    """A labelled text file read with the text fields named (none picked)."""
    return read_labelled(
        path,
        label=label_field,
        text=list(text_fields),
        id=id_field,
        group=group_field,
        pick=False,
        drop_labels=drop_labels,
    )
