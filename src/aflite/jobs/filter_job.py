"""A whole filtering job on a data file: the one filter pipeline
(:mod:`aflite.api.pipeline`: read and check, represent, filter) inside the run's output folder
(:class:`~aflite.jobs.run_folder.RunFolder`), its checkpoint, and its outputs and report
(:mod:`aflite.jobs.finish`).

This is the Python API behind ``aflite filter``; the algorithm itself lives in
:mod:`aflite.algorithm` and never touches files.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path

from aflite.algorithm import FilterState
from aflite.api.pipeline import FilterPlan, FilterRun, filter_rows, prepare, represent
from aflite.config import FilterConfig
from aflite.config.files import RunKey
from aflite.errors import DataError, LabelWarning, MissingExtraError, OptionWarning
from aflite.io.checkpoint import Checkpoint
from aflite.jobs.finish import JobOutcome, finish_run, stop_hint
from aflite.jobs.guards import InputChanged
from aflite.jobs.run_folder import RunFolder

# the job API's name for a filtering run's options: one frozen config, checked when made
FilterJob = FilterConfig

__all__ = [
    "FilterJob",
    "JobOutcome",
    "run_filter_job",
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
    is refused unless ``job.overwrite`` (its outputs are replaced when the new ones are
    published) or ``job.resume``.
    """
    t_start = time.perf_counter()
    # Read and check everything before anything is computed or written.
    _check_threads(job)  # the options were checked when ``job`` was made
    ignored = job.ignored_options(cli=note is not None)
    if ignored is not None:
        if note is None:
            warnings.warn(ignored, OptionWarning, stacklevel=2)
        else:
            note(ignored)
    # a reviewer's id files may sit in the folder too (beside its exports): never removed
    reviews = [p for p in (job.keep_ids, job.drop_ids) if p]
    with RunFolder.open(
        job.out_dir, overwrite=job.overwrite, resume=job.resume, data=job.input, others=reviews
    ) as folder:
        run = FilterRun.of_config(job)
        plan = prepare(run, note or _warn_labels)
        key = RunKey.of(job, plan.data)  # the picked fields, the checkpoint's and summary's key
        start = folder.start(key, resume=job.resume)
        if start.finished is not None:
            return _finished_outcome(key.job, start.finished)
        return _held_run(
            key,
            run,
            plan,
            folder,
            start.checkpoint,
            t_start,
            progress=progress,
            log=log,
            stop_after_phases=stop_after_phases,
        )


def _finished_outcome(job: FilterJob, summary: dict) -> JobOutcome:
    """``--resume`` on a folder whose run has finished (this job's run: the folder checked
    that): nothing is computed or written."""
    from aflite.algorithm import FilterResult

    out = Path(job.out_dir)
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


def _held_run(
    key: RunKey,
    run: FilterRun,
    plan: FilterPlan,
    folder: RunFolder,
    ckpt: Checkpoint,
    t_start: float,
    *,
    progress: bool,
    log: Callable[[str], None],
    stop_after_phases: int | None,
) -> JobOutcome:
    """The run proper, while this process holds the output folder and its checkpoint."""
    job = key.job
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
        phi = represent(run, plan, progress=progress)  # checked before it is checkpointed
        # Checkpoint the representation so a resumed run filters exactly the same matrix; a
        # fresh run clears any earlier checkpoint first.
        try:
            ckpt.start(phi)
        except OSError:
            ckpt.clear()  # a full disk: a checkpoint without its manifest is nothing to keep
            raise
    # the checkpoint's copy of Phi, which the outputs read: the filter may standardise phi
    # in place
    recorded = ckpt.features()
    phases_done = [0]

    def checkpoint(state: FilterState) -> None:
        ckpt.save(state)
        phases_done[0] += 1
        if stop_after_phases is not None and phases_done[0] >= stop_after_phases:
            raise _Interrupted

    try:
        # Phi is on disk in the checkpoint: the filter may standardise it in place
        result = filter_rows(
            run,
            plan,
            phi,
            progress=progress,
            checkpoint=checkpoint,
            resume=resume_state,
            copy=False,
        )
    except _Interrupted:
        raise KeyboardInterrupt("interrupted after a checkpoint") from None
    except (ValueError, MissingExtraError):
        # a user mistake the checks before the run could not see (DataError is a ValueError),
        # or a missing extra (Ray), before any phase: the checkpoint would only resume into the
        # same error, so it goes (and the folder, if this run created it). Later phases' work
        # is kept for --resume.
        if resume_state is None and phases_done[0] == 0:
            ckpt.clear()
        raise
    del phi  # standardised in place by now
    try:
        outcome = finish_run(
            key, run, plan=plan, result=result, phi=recorded, t_start=t_start, folder=folder
        )
    except InputChanged:
        ckpt.clear()  # made from another version of the input: no resume can use it
        raise
    ckpt.clear()
    return outcome


class _Interrupted(Exception):
    pass


def _warn_labels(message: str) -> None:
    warnings.warn(message, LabelWarning, stacklevel=3)


def _check_threads(job: FilterJob) -> None:
    """What the options leave to the environment (``AFLITE_THREADS``), before any work."""
    if job.threads is None:
        from aflite._internal.threads import resolve_threads

        try:
            resolve_threads(None)  # AFLITE_THREADS
        except ValueError as e:
            raise DataError(str(e)) from None
