"""Whole jobs over data files (read, represent, filter, write): the API behind the CLI."""

from aflite.jobs.filter_job import run_filter_job
from aflite.jobs.finish import JobOutcome, finish_job, stop_hint
from aflite.jobs.outputs import write_outputs
from aflite.jobs.plan import (
    FilterJob,
    JobPlan,
    load_job_inputs,
    plan_job,
    read_labelled_texts,
    with_fields,
)
from aflite.jobs.representation import compute_representation

__all__ = [
    "FilterJob",
    "JobOutcome",
    "JobPlan",
    "compute_representation",
    "finish_job",
    "load_job_inputs",
    "plan_job",
    "read_labelled_texts",
    "run_filter_job",
    "stop_hint",
    "with_fields",
    "write_outputs",
]
