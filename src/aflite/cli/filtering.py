"""``aflite filter`` and ``aflite demo``: one filter job each, its outcome printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from aflite._internal.progress import silence_third_party_progress
from aflite._internal.text import one_line
from aflite.cli.options import config_options
from aflite.cli.signals import Interrupted
from aflite.config import PRESETS, FilterConfig

if TYPE_CHECKING:  # the jobs package imports numpy and more: only when a command runs
    from aflite.jobs import JobOutcome

_QUIET = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's).")


@config_options(FilterConfig, presets=True, config_file=True)
def filter_cmd(quiet: bool = _QUIET, *, config: FilterConfig) -> None:
    """Filter a labelled data file; write kept / removed / warm-up rows, scores and a summary."""
    if quiet:
        silence_third_party_progress()  # before the libraries with bars are imported
    from aflite.jobs import run_filter_job

    try:
        outcome = run_filter_job(config, progress=not quiet, note=_note)
    except Interrupted as e:
        e.resumable = True  # a checkpoint, if one was written, is left for --resume
        raise
    _echo_outcome(outcome)


def _echo_outcome(outcome: JobOutcome) -> None:
    """The result and the output paths on stdout; notes and warnings on stderr, beside the
    progress bars, so that ``> file`` or a pipe gets the result alone."""
    typer.echo(outcome.summary_text)
    for line in outcome.notices:
        typer.echo(line, err=True)


def _note(message: str) -> None:
    typer.echo(f"aflite: note: {one_line(message)}", err=True)


@config_options(
    FilterConfig,
    only=("out_dir", "resume", "overwrite"),
    defaults={"out_dir": "aflite-demo"},
    helps={
        "resume": "Continue an interrupted demo.",
        "overwrite": "Replace the outputs of an earlier run in --out-dir (an earlier demo's "
        "always are).",
    },
    into="options",
)
def demo_cmd(quiet: bool = _QUIET, *, options: dict) -> None:
    """Filter the bundled SNLI slice (6,000 pairs) on hypothesis-only n-grams, then print
    where the outputs are."""
    if quiet:
        silence_third_party_progress()
    from aflite.jobs import run_filter_job
    from aflite.jobs.run_tools import demo_job

    job = demo_job(options["out_dir"], resume=options["resume"], overwrite=options["overwrite"])
    try:
        outcome = run_filter_job(job, progress=not quiet)
    except Interrupted as e:
        e.resumable = True
        raise
    typer.echo(
        "SNLI slice (CC BY-SA 4.0, Bowman et al. 2015), hypothesis-only n-gram features, "
        "grouped by premise (--group-field premise)"
    )
    typer.echo(
        "filter options: the defaults of `aflite filter` ("
        + ", ".join(f"{k}={v}" for k, v in PRESETS["practical"].as_options().items())
        + ")"
    )
    _echo_outcome(outcome)
    if "report" in outcome.outputs:
        typer.echo(f"open {outcome.outputs['report']} in a browser")


# the commands of this module, by name: registered on the command line by aflite.cli.app
COMMANDS = {"filter": filter_cmd, "demo": demo_cmd}
