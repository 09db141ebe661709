"""Whole jobs over data files (read, represent, filter, write): the API behind the CLI."""

from typing import Any

from aflite.config.files import with_fields
from aflite.jobs.filter_job import FilterJob, run_filter_job
from aflite.jobs.finish import JobOutcome, finish_job, stop_hint
from aflite.jobs.outputs import write_outputs

__all__ = [
    "FilterJob",
    "JobOutcome",
    "finish_job",
    "run_filter_job",
    "stop_hint",
    "with_fields",
    "write_outputs",
]


def __getattr__(name: str) -> Any:
    """The names the one filter pipeline replaced, with a DeprecationWarning."""
    import importlib

    deprecated = importlib.import_module("aflite.jobs.deprecated")
    if name not in deprecated.REPLACED_BY:
        raise AttributeError(f"module 'aflite.jobs' has no attribute {name!r}")
    deprecated.warn(name)
    return getattr(deprecated, name)
