"""Whole jobs over data files (read, represent, filter, write): the API behind the CLI."""

from aflite.jobs.filter_job import FilterJob, JobOutcome, run_filter_job

__all__ = ["FilterJob", "JobOutcome", "run_filter_job"]
