"""A job's options and inputs: the :class:`FilterJob` dataclass, reading and checking the data
file, and every size and option check, all before any features are computed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from aflite.config import FilterConfig, config_fields
from aflite.errors import DataError
from aflite.features.build import FeatureSpec, parse_feature_spec
from aflite.features.registry import FEATURE_KINDS
from aflite.features.warmup import split_warmup
from aflite.io.base import ImageTable
from aflite.io.decisions import Decisions, resolve_decisions
from aflite.io.ids import read_ids
from aflite.io.tables import Table, read_table
from aflite.jobs.checks import resolve_job_sizes

__all__ = [
    "FilterJob",
    "JobInputs",
    "JobPlan",
    "load_job_inputs",
    "plan_job",
    "check_representation",
    "read_labelled_texts",
    "job_key",
]


# the job API's name for a filtering run's options: one frozen config, checked when made
FilterJob = FilterConfig


@dataclass
class JobInputs:
    table: Table
    labels: np.ndarray
    ids: list[Any]
    texts: dict[str, list[str]] | None
    groups: np.ndarray | None
    picked: list[str] = field(default_factory=list)  # fields the job chose ("text", "id")
    # the job's options with the picked fields filled in
    config: FilterConfig | None = None


@dataclass
class JobPlan:
    """What a checked job will filter: the warm-up rows, the rows to filter and the target."""

    spec: FeatureSpec
    warm_rows: np.ndarray
    rest: np.ndarray
    target: int
    # the warm-up fraction the run uses: the option's, or the feature kind's own (warmup-cnn)
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


def load_job_inputs(job: FilterJob, *, pick: bool = True) -> JobInputs:
    """Read and check the data file; every problem is a one-line DataError.

    With ``pick``, a missing ``--id-field`` becomes a column named ``id`` and missing
    ``--text-fields`` (for text features) the only text column (:mod:`aflite.jobs.fields`).
    """
    from aflite.jobs.fields import NO_ID, pick_id_field, pick_text_field

    spec = parse_feature_spec(job.features)
    table = read_table(job.input, job.input_format, split=job.split)
    if FEATURE_KINDS[spec.kind].needs_images and not isinstance(table, ImageTable):
        raise DataError(
            f"{job.input}: {spec.kind} needs images: a folder of class sub-folders or an .npz "
            "with 'images' and 'labels'"
        )
    labels_raw = table.column(job.label_field)
    for i, v in enumerate(labels_raw):
        if not isinstance(v, (str, int)) or isinstance(v, bool) or v == "":
            raise DataError(
                f"{table.where(i)}: field '{job.label_field}' is not a class label ({v!r})"
            )
    labels = np.asarray([str(v) for v in labels_raw])
    if len(np.unique(labels)) < 2:
        raise DataError(f"{job.input}: field '{job.label_field}' has fewer than two classes")
    groups = None
    if job.group_field:
        groups = np.asarray([str(v) for v in table.column(job.group_field)])
    picked: list[str] = []
    if pick and (found := pick_id_field(job, table)) is not None:
        job, picked = replace(job, id_field=found), ["id"]
    if job.id_field and job.id_field != NO_ID:
        try:
            ids = read_ids(table, job.id_field)  # lists, NaN, duplicates, 2 vs "2": one line
        except DataError as e:
            if "id" not in picked:
                raise
            raise DataError(
                f"{e} (a column named id is used as --id-field; --id-field none numbers the "
                "rows instead)"
            ) from None
    else:
        ids = list(range(len(table)))
    if pick and spec.needs_text and (names := pick_text_field(job, table)) is not None:
        job = replace(job, text_fields=names)
        picked.insert(0, "text")
    if spec.needs_text and not job.text_fields:
        raise DataError("--text-fields is required for text features (e.g. premise,hypothesis)")
    texts = None
    if job.text_fields:
        # read for the report and the audits even where the features do not need text
        texts = {f: table.text_column(f) for f in job.text_fields}
    return JobInputs(table, labels, ids, texts, groups, picked, job)


def read_labelled_texts(
    path: str,
    text_fields: Sequence[str],
    *,
    label_field: str = "label",
    group_field: str | None = None,
    id_field: str | None = None,
) -> JobInputs:
    """Read a labelled text file (any format ``aflite filter`` reads) with the same checks as
    a filtering job: text fields, string labels, groups when ``group_field`` is given and
    unique ids when ``id_field`` is."""
    return load_job_inputs(
        FilterJob(
            input=path,
            label_field=label_field,
            text_fields=list(text_fields),
            group_field=group_field,
            id_field=id_field,
        ),
        pick=False,
    )


def plan_job(job: FilterJob, inputs: JobInputs) -> JobPlan:
    """Check every size against the data (a one-line DataError naming its flag) and split off
    the warm-up rows; nothing is computed or written yet. The options themselves were checked
    when ``job`` was made."""
    spec = parse_feature_spec(job.features)
    labels = inputs.labels
    n_all = len(inputs.table)
    warmup = job.warmup_fraction
    if spec.kind == "warmup-cnn" and warmup is None:
        warmup = 0.2  # the paper's ImageNet setting
    if warmup is not None:
        warm_rows, rest = split_warmup(n_all, warmup, seed=job.seed, groups=inputs.groups)
        if len(np.unique(labels[warm_rows])) < 2:
            raise DataError(f"{job.input}: the warm-up fraction holds fewer than two classes")
    else:
        warm_rows, rest = np.zeros(0, dtype=np.int64), np.arange(n_all)
    decisions = None
    if job.keep_ids is not None or job.drop_ids is not None:
        if job.keep_ids is not None and job.by is not None:
            raise DataError("--keep-ids: protecting rows applies to AFLITE's phases, not to --by")
        decisions = resolve_decisions(
            inputs.ids, keep=job.keep_ids, drop=job.drop_ids,
            keep_name="--keep-ids", drop_name="--drop-ids",
        )  # fmt: skip
        # dropped rows leave before anything else, warm-up included
        warm_rows = warm_rows[~decisions.dropped[warm_rows]]
        rest = rest[~decisions.dropped[rest]]
    target, _, _ = resolve_job_sizes(job, len(rest))
    if len(np.unique(labels[rest])) < 2:
        raise DataError(f"{job.input}: fewer than two classes among the rows to filter")
    if job.audits and not inputs.texts:
        raise DataError("--audits: the audits read text; name the text fields with --text-fields")
    return JobPlan(spec, warm_rows, rest, target, warmup, decisions)


def check_representation(phi: Any, features: str) -> None:
    """The algorithm's checks of Phi (a real, non-empty, finite matrix), run by a job before
    Phi is checkpointed, as a one-line DataError naming ``--features``."""
    from aflite.algorithm._validation import check_features

    try:
        check_features(phi)
    except ValueError as e:
        raise DataError(f"--features {features}: {e}") from None


def job_key(job: FilterJob) -> dict[str, Any]:
    """The options that decide a job's result (a checkpoint is only resumed under the same)."""
    d = {f.name: getattr(job, f.name) for f in config_fields(job) if f.metadata["result"]}
    if d["model"] == "linear":
        d.pop("model")  # so checkpoints written before there was a model option still resume
    if d["partitions"] == "uniform":
        d.pop("partitions")  # checkpoints written before block partitions were uniform
    if d["split"] is None:
        d.pop("split")  # so checkpoints written before there was a split option still resume
    if d["by"] is None:
        d.pop("by")  # likewise for checkpoints written before --by
    for k in ("keep_ids", "drop_ids"):
        if d[k] is None:
            d.pop(k)
    return json.loads(json.dumps(d, default=str))
