"""A whole filtering job on a data file: read and check, represent, filter, write, verify.

This is the Python API behind ``aflite filter``; the algorithm itself lives in
:mod:`aflite.algorithm` and never touches files. The steps live in :mod:`aflite.jobs.plan`
(options, inputs, checks), :mod:`aflite.jobs.representation` (Phi),
:mod:`aflite.jobs.finish` (what the outputs hold) and :mod:`aflite.jobs.outputs` (files).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aflite._internal.backends import make_backend
from aflite._internal.options import flag
from aflite.algorithm import FilterState, adversarial_filter
from aflite.config.files import current_names
from aflite.errors import DataError, LabelWarning, MissingExtraError, OptionWarning
from aflite.io.labelled import LabelledData
from aflite.jobs.checks import check_environment
from aflite.jobs.finish import JobOutcome, finish_job, stop_hint
from aflite.jobs.plan import (
    FilterJob,
    JobPlan,
    check_representation,
    first_difference,
    job_key,
    load_job_inputs,
    plan_job,
    with_fields,
)
from aflite.jobs.representation import compute_representation
from aflite.jobs.run_folder import RunFolder

__all__ = [
    "FilterJob",
    "JobOutcome",
    "run_filter_job",
    "load_job_inputs",
    "stop_hint",
]


def run_filter_job(
    job: FilterJob,
    *,
    progress: bool = True,
    log: Callable[[str], None] = print,
    stop_after_phases: int | None = None,
    note: Callable[[str], None] | None = None,
) -> JobOutcome:
    """Run a job end to end and return where its outputs are.

    ``stop_after_phases`` interrupts the run after that many phases (as a kill would), leaving
    only the checkpoint; it exists to test ``resume``. Options given that the run does not
    read (:meth:`~aflite.config.FilterConfig.ignored_options`) are named in one line, passed
    to ``note`` (the command line's, naming flags) or else warned as an
    :class:`~aflite.errors.OptionWarning`. An ``out_dir`` holding an earlier run
    is refused unless ``job.overwrite`` (its outputs are removed once the input has been
    checked) or ``job.resume``.
    """
    t_start = time.perf_counter()
    # Read and check everything before anything is computed or written.
    check_environment(job)  # the options were checked when ``job`` was made
    ignored = job.ignored_options(cli=note is not None)
    if ignored is not None:
        if note is None:
            warnings.warn(ignored, OptionWarning, stacklevel=2)
        else:
            note(ignored)
    # a reviewer's id files may sit in the folder too (beside its exports): never removed
    folder = RunFolder.open(
        job.out_dir,
        overwrite=job.overwrite,
        resume=job.resume,
        data=job.input,
        others=[p for p in (job.keep_ids, job.drop_ids) if p],
    )
    inputs = load_job_inputs(job)
    tiny = inputs.tiny_classes_note()
    if tiny is not None:
        (note or _warn_labels)(tiny)
    job = with_fields(job, inputs)  # the picked fields, for the checkpoint and the summary
    plan = plan_job(job, inputs)
    if job.resume:
        done = folder.finished()
        if done is not None:
            return _finished_outcome(job, inputs, done)
    with folder.lock():
        return _locked_run(
            job,
            inputs,
            plan,
            folder,
            t_start,
            progress=progress,
            log=log,
            stop_after_phases=stop_after_phases,
        )


def _finished_outcome(job: FilterJob, inputs: LabelledData, summary: dict) -> JobOutcome:
    """``--resume`` on a folder whose run has finished: nothing is computed or written. The
    run must be this job's (same options, same input), or resuming it means nothing."""
    from aflite.algorithm import FilterResult

    out = Path(job.out_dir)
    options = {k: v for k, v in (summary.get("options") or {}).items() if k != "device"}
    differs = first_difference(job_key(job), current_names(options))
    if differs is not None:
        name, here, there = differs
        what = (
            f"of another input ({there})"
            if name == "input"
            else f"with {flag(name)} {_shown(there)}, not {_shown(here)}"
        )
        raise DataError(
            f"{job.out_dir}: holds a finished run {what}, nothing to resume; pass --overwrite "
            "to replace it"
        )
    if summary.get("input_fingerprint") != inputs.table.fingerprint():
        raise DataError(
            f"{job.out_dir}: holds a finished run of another input ({job.input} has changed "
            "since), nothing to resume; pass --overwrite to replace it"
        )
    try:
        result = FilterResult.load(out / "result")
    except (OSError, ValueError, KeyError):
        raise DataError(
            f"{out / 'result'}: the finished run's result is missing or damaged, nothing to "
            "resume; pass --overwrite to run it again"
        ) from None
    outputs = summary.get("outputs") or {}
    return JobOutcome(
        out_dir=out,
        result=result,
        n_warmup=int((summary.get("counts") or {}).get("warmup", 0)),
        outputs={k: str(out / v) for k, v in outputs.items()},
        summary_text=f"{job.out_dir} already holds a finished run; nothing to resume",
    )


def _shown(value: Any) -> str:
    """A job key's value as the command line takes it."""
    if value is None:
        return "none"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    from aflite._internal.options import show

    return show(value).strip("'")


def _locked_run(
    job: FilterJob,
    inputs: LabelledData,
    plan: JobPlan,
    folder: RunFolder,
    t_start: float,
    *,
    progress: bool,
    log: Callable[[str], None],
    stop_after_phases: int | None,
) -> JobOutcome:
    """The run proper, while this process holds the output folder's lock."""
    table, rest = inputs.table, plan.rest
    ckpt = folder.checkpoint(
        {"fingerprint": table.fingerprint(), "job": job_key(job)},
        upgrade=lambda stored: stored | {"job": current_names(stored.get("job") or {})},
    )
    resume_state: FilterState | None = None
    phi = None
    loaded = ckpt.load() if job.resume else None  # another run's or a damaged one: DataError
    if loaded is not None:
        phi, resume_state = loaded
        done = 0 if resume_state is None else len(resume_state.history)
        log(f"resuming from phase {done}")
    elif job.resume:
        log("no checkpoint to resume from; starting from the beginning")

    if phi is None:
        phi = compute_representation(
            job, plan.spec, inputs, plan.warm_rows, rest, progress=progress
        )
        check_representation(phi, job.features)  # before the checkpoint is written
        folder.replace_earlier()
        # Checkpoint the representation so a resumed run filters exactly the same matrix; a
        # fresh run clears any earlier checkpoint first.
        try:
            ckpt.start(phi)
        except OSError:
            ckpt.clear()  # a full disk: a checkpoint without its manifest is nothing to keep
            raise

    phases_done = [0]

    def checkpoint(state: FilterState) -> None:
        ckpt.save(state)
        phases_done[0] += 1
        if stop_after_phases is not None and phases_done[0] >= stop_after_phases:
            raise _Interrupted

    try:
        result = _filter(job, phi, inputs, plan, resume_state, checkpoint, progress=progress)
    except (ValueError, MissingExtraError):
        # a user mistake the checks before the run could not see (DataError is a ValueError),
        # or a missing extra (Ray), before any phase: the checkpoint would only resume into the
        # same error, so it goes (and the folder, if this run created it). Later phases' work
        # is kept for --resume.
        if resume_state is None and phases_done[0] == 0:
            ckpt.clear()
        raise
    del phi  # standardised in place by now; the outputs read the checkpoint's copy
    try:
        folder.check_input()
    except DataError:
        ckpt.clear()  # made from another version of the input: no resume can use it
        raise
    outcome = finish_job(
        job,
        inputs=inputs,
        result=result,
        rest=rest,
        warm_rows=plan.warm_rows,
        phi=ckpt.features(),
        t_start=t_start,
        decisions=plan.decisions,
        folder=folder,
    )
    ckpt.clear()
    return outcome


def _filter(job, phi, inputs, plan, resume_state, checkpoint, *, progress):
    """AFLITE's phases (or one ``--by`` pass) over Phi, on the job's backend."""
    rest = plan.rest
    # multiple-choice items: the right choice's position
    labels = inputs.labels if inputs.choices is None else inputs.choices.answers
    # a distributed backend by its registered name, as aflite.filter(backend=...) takes it
    backend = None if job.backend is None else make_backend(job.backend, job.ray_address)
    try:
        groups = None if inputs.groups is None else inputs.groups[rest]
        run = {"groups": groups, "seed": job.seed, "device": job.device, "threads": job.threads}
        if job.by is not None:
            from aflite.scoring import ByScorer

            # the bias between slices is measured as the paper does: logistic regression on
            # block partitions (the options a --by run does not read, NOT_FOR_BY)
            by = {"model": "linear", "partitions": "blocks"}
            result = adversarial_filter(
                phi,
                labels[rest],
                options=job,
                ranker=ByScorer(job.by),
                target_size=plan.target,
                progress=False,
                **by,
                **run,
            )
        else:
            result = adversarial_filter(
                phi,
                labels[rest],
                options=job,
                target_size=plan.target,
                progress=progress,
                checkpoint=checkpoint,
                resume=resume_state,
                backend=backend,
                # Phi is on disk in the checkpoint: the filter may standardise it in place
                copy=False,
                protected=plan.protected,
                ids=[inputs.ids[i] for i in rest],
                **run,
            )
    except _Interrupted:
        raise KeyboardInterrupt("interrupted after a checkpoint") from None
    finally:
        if backend is not None:
            backend.close()

    return result


class _Interrupted(Exception):
    pass


def _warn_labels(message: str) -> None:
    warnings.warn(message, LabelWarning, stacklevel=3)
