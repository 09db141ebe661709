"""A job's plan: its inputs read and checked (the data file, every size and option against
the data) and what it will filter, all before any features are computed. The options
themselves are :class:`aflite.config.FilterConfig` (``FilterJob`` here)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aflite.config import FilterConfig, config_fields
from aflite.errors import DataError
from aflite.features.build import FeatureSpec, parse_feature_spec
from aflite.features.warmup import split_warmup
from aflite.io.base import ImageTable
from aflite.io.decisions import Decisions, resolve_decisions
from aflite.io.label_check import check_dropped_labels
from aflite.io.labelled import LabelledData, as_table, read_labelled
from aflite.jobs.checks import resolve_job_sizes

__all__ = [
    "FilterJob",
    "JobPlan",
    "load_job_inputs",
    "plan_job",
    "check_representation",
    "read_labelled_texts",
    "with_fields",
    "job_key",
    "summary_options",
    "first_difference",
]


# the job API's name for a filtering run's options: one frozen config, checked when made
FilterJob = FilterConfig


@dataclass
class JobPlan:
    """What a checked job will filter: the warm-up rows, the rows to filter and the target."""

    spec: FeatureSpec
    warm_rows: np.ndarray
    rest: np.ndarray
    target: int
    # the warm-up fraction the run uses: the option's, or the feature kind's own (the CNN's)
    warmup_fraction: float | None = None
    # a reviewer's decisions (--keep-ids / --drop-ids): masks over all input rows
    decisions: Decisions | None = None

    @property
    def dropped(self) -> np.ndarray:
        """Input rows removed by review before filtering."""
        if self.decisions is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.decisions.dropped)

    @property
    def protected(self) -> np.ndarray | None:
        """Mask over ``rest``: rows the filter must not remove."""
        if self.decisions is None or not self.decisions.protected.any():
            return None
        return self.decisions.protected[self.rest]


def load_job_inputs(job: FilterJob, *, pick: bool = True) -> LabelledData:
    """Read and check the data file (:func:`aflite.io.labelled.read_labelled`, as every entry
    point does); every problem is a one-line DataError.

    With ``pick``, a missing ``--id-field`` becomes a column named ``id`` and missing
    ``--text-fields`` (for text features) the only text column; the data's ``fields`` say
    which (:func:`with_fields` gives the job with them filled in).
    """
    spec = parse_feature_spec(job.features)
    table = as_table(job.input, split=job.split, input_format=job.input_format)
    if spec.entry.needs_images and not isinstance(table, ImageTable):
        raise DataError(
            f"{job.input}: {spec.kind} needs images: a folder of class sub-folders or an .npz "
            "with 'images' and 'labels'"
        )
    return read_labelled(
        table,
        **job.read_arguments(),
        id=job.id,
        group=job.group,
        need_text=spec.needs_text,
        pick=pick,
        drop_labels=job.drop_labels,
    )


def with_fields(job: FilterJob, data: LabelledData) -> FilterJob:
    """A copy of ``job`` with the fields ``data`` was read with (those picked filled in)."""
    picked = data.fields.picked
    return replace(
        job,
        text=tuple(data.fields.text) if "text" in picked else job.text,
        id=data.fields.id if "id" in picked else job.id,
    )


def read_labelled_texts(
    path: str,
    text_fields: Sequence[str],
    *,
    label_field: str = "label",
    group_field: str | None = None,
    id_field: str | None = None,
    drop_labels: Sequence[str] | None = None,
) -> LabelledData:
    """Read a labelled text file (any format ``aflite filter`` reads) with the same checks as
    a filtering job: text fields, string labels, groups when ``group_field`` is given and
    unique ids when ``id_field`` is."""
    return read_labelled(
        path,
        label=label_field,
        text=list(text_fields),
        id=id_field,
        group=group_field,
        pick=False,
        drop_labels=drop_labels,
    )


def plan_job(job: FilterJob, inputs: LabelledData) -> JobPlan:
    """Check every size against the data (a one-line DataError naming its flag) and split off
    the warm-up rows; nothing is computed or written yet. The options themselves were checked
    when ``job`` was made."""
    spec = parse_feature_spec(job.features)
    labels = inputs.labels
    check_dropped_labels(inputs, job.drop_labels)
    n_all = len(inputs.table)
    warmup = job.warmup_fraction
    if warmup is None:
        warmup = spec.entry.default_warmup_fraction
    if warmup is not None:
        warm_rows, rest = split_warmup(n_all, warmup, seed=job.seed, groups=inputs.groups)
        if len(np.unique(labels[warm_rows])) < 2:
            raise DataError(f"{job.input}: the warm-up fraction holds fewer than two classes")
    else:
        warm_rows, rest = np.zeros(0, dtype=np.int64), np.arange(n_all)
    decisions = None
    if job.keep_ids is not None or job.drop_ids is not None or inputs.dropped is not None:
        if job.keep_ids is not None and job.by is not None:
            raise DataError("--keep-ids: protecting rows applies to AFLITE's phases, not to --by")
        decisions = resolve_decisions(
            inputs.ids,
            keep=job.keep_ids,
            drop=job.drop_ids,
            keep_name="--keep-ids",
            drop_name="--drop-ids",
        ).with_dropped_labels(inputs.dropped, job.drop_labels)
        # dropped rows leave before anything else, warm-up included
        warm_rows = warm_rows[~decisions.dropped[warm_rows]]
        rest = rest[~decisions.dropped[rest]]
    n_classes = None if inputs.choices is not None else len(np.unique(labels[rest]))
    target, _, _ = resolve_job_sizes(job, len(rest), n_classes)
    if n_classes is not None and n_classes < 2:
        raise DataError(f"{job.input}: fewer than two classes among the rows to filter")
    if job.audits and not inputs.texts:
        raise DataError("--audits: the audits read text; name the text fields with --text-fields")
    return JobPlan(spec, warm_rows, rest, target, warmup, decisions)


def check_representation(phi: Any, features: str) -> None:
    """The algorithm's checks of Phi (a real, non-empty, finite matrix), run by a job before
    Phi is checkpointed, as a one-line DataError naming ``--features``."""
    from aflite.algorithm import check_features
    from aflite.algorithm.choices import check_choices

    try:
        if np.ndim(phi) == 3:  # multiple-choice items: (N, K, d), padded choices NaN rows
            check_choices(phi, np.zeros(len(phi), dtype=np.int64))
        else:
            check_features(phi)
    except ValueError as e:
        raise DataError(f"--features {features}: {e}") from None


# options a job's key leaves out at these values, so that checkpoints and summaries written
# before the option existed (or, for partitions, before block partitions) still match
_LEFT_OUT = {
    "model": "linear",
    "partitions": "uniform",
    "split": None,
    "by": None,
    "keep_ids": None,
    "drop_ids": None,
    "choices": None,
    "context": (),
    "blank": None,
    "answer_format": None,
    "choice_context": "joint",
    "drop_labels": (),
}


def job_key(job: FilterJob) -> dict[str, Any]:
    """The options that decide a job's result (a checkpoint is only resumed under the same)."""
    d = {f.name: getattr(job, f.name) for f in config_fields(job) if f.metadata["result"]}
    for k, left_out in _LEFT_OUT.items():
        if d[k] == left_out:
            d.pop(k)
    return json.loads(json.dumps(d, default=str))


def summary_options(job: FilterJob) -> dict[str, Any]:
    """The job key as a run's ``summary.json`` records it: with every left-out value that is
    not the option's own default (``partitions="uniform"``, the paper preset's), so that
    ``--config summary.json`` repeats the run."""
    d = job_key(job)
    for f in config_fields(job):
        if f.name in _LEFT_OUT and f.name not in d and f.default != _LEFT_OUT[f.name]:
            d[f.name] = _LEFT_OUT[f.name]
    return d


def first_difference(key: dict[str, Any], other: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first option on which two job keys differ, with its value in each, or None."""
    for name in [*key, *(k for k in other if k not in key)]:
        here = key.get(name, _LEFT_OUT.get(name))
        there = other.get(name, _LEFT_OUT.get(name))
        if json.dumps(here, default=str) != json.dumps(there, default=str):
            return name, here, there
    return None
