"""``aflite`` command line: a thin layer over the Python API."""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING

import typer

from aflite._internal.progress import silence_third_party_progress
from aflite._internal.text import one_line
from aflite.cli.app import app
from aflite.cli.options import config_options
from aflite.cli.signals import (
    Interrupted,
    install_signal_handlers,
    restore_signal_handlers,
)
from aflite.config import PRESETS, FilterConfig
from aflite.errors import DataError, MissingExtraError

if TYPE_CHECKING:  # the jobs package imports numpy and more: only when a command runs
    from aflite.jobs import JobOutcome

_QUIET = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's).")


@app.command("filter")
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


@app.command("demo")
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
    typer.echo("SNLI slice (CC BY-SA 4.0, Bowman et al. 2015), hypothesis-only n-gram features")
    typer.echo(
        "filter options: the defaults of `aflite filter` ("
        + ", ".join(f"{k}={v}" for k, v in PRESETS["practical"].as_options().items())
        + ")"
    )
    _echo_outcome(outcome)
    if "report" in outcome.outputs:
        typer.echo(f"open {outcome.outputs['report']} in a browser")


def _fail(message: str, code: int) -> None:
    typer.echo(f"aflite: error: {one_line(message)}", err=True)
    sys.exit(code)


def _os_message(e: OSError) -> str:
    """'PATH: what went wrong', from an OSError."""
    why = e.strerror or str(e) or type(e).__name__
    why = why[:1].lower() + why[1:]
    paths = [str(p) for p in (e.filename, e.filename2) if p is not None]
    if paths and e.errno in _WRITE_FAULTS:
        # the system's words, not a library's wrapping of them (pyarrow: "error writing bytes
        # to file. Detail: [errno 28] ...")
        why = os.strerror(e.errno)
        why = why[:1].lower() + why[1:]
        return f"{why} writing {paths[-1]}"  # no space left on device writing OUT/kept.jsonl
    return f"{' -> '.join(paths)}: {why}" if paths else why


# faults that only a write meets
_WRITE_FAULTS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def main() -> None:
    """Entry point: user mistakes become one line on stderr and exit code 2; faults of the
    file system (disk full, a folder that cannot be written) one line and exit code 1;
    SIGINT and SIGTERM one line and exit code 130 or 143."""
    previous = install_signal_handlers()
    try:
        _main()
    finally:
        restore_signal_handlers(previous)


def _main() -> None:
    if not sys.stderr.isatty():
        # off a terminal (a pipe, a log file, nohup) other libraries' bars are noise: a
        # bar redrawn as lines of carriage returns; aflite's own progress is printed by line
        silence_third_party_progress()
    try:
        code = app(prog_name="aflite", standalone_mode=False)
    except Interrupted as e:
        hint = "; run the same command with --resume to continue" if e.resumable else ""
        typer.echo(f"aflite: interrupted{hint}", err=True)
        sys.exit(e.exit_code)
    except (DataError, MissingExtraError, ValueError) as e:
        _fail(str(e), 2)
    except FileNotFoundError as e:
        _fail(_os_message(e), 2)
    except OSError as e:
        # the environment, not the data: a full disk, a folder that cannot be written, ...
        _fail(_os_message(e), 1)
    except KeyboardInterrupt:
        # only where no handler could be installed; typer itself returns 130 for it
        typer.echo("aflite: interrupted", err=True)
        sys.exit(130)
    except Exception as e:
        # usage errors from click (typer may vendor its own copy, so match by shape)
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            if hasattr(e, "format_message"):  # a usage error: one line, like every other
                ctx = getattr(e, "ctx", None)
                where = f"; see {ctx.command_path} --help" if ctx is not None else ""
                _fail(e.format_message().rstrip(".") + where, e.exit_code or 2)
            e.show()
            sys.exit(e.exit_code or 2)
        if type(e).__name__ == "Abort":
            typer.echo("aflite: aborted", err=True)
            sys.exit(1)
        raise
    # in non-standalone mode typer returns the code of an Exit (130 for an interrupt typer
    # caught itself) instead of exiting with it
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        sys.exit(code)


# register the other commands on the same app
from aflite.cli import commands as _commands  # noqa: E402,F401
from aflite.cli import experiments as _experiments  # noqa: E402,F401
from aflite.cli import score as _score  # noqa: E402,F401
from aflite.cli import stress as _stress  # noqa: E402,F401

if __name__ == "__main__":
    main()
