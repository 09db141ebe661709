"""``aflite`` command line: a thin layer over the Python API. :func:`main` runs the
application (:mod:`aflite.cli.app`, every command registered there) and turns errors into one
line and an exit code."""

from __future__ import annotations

import errno
import os
import sys

import typer

from aflite._internal.progress import silence_third_party_progress
from aflite._internal.text import one_line
from aflite.cli.app import app
from aflite.cli.signals import (
    Interrupted,
    install_signal_handlers,
    restore_signal_handlers,
)
from aflite.errors import DataError, MissingExtraError

__all__ = ["app", "main"]


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


if __name__ == "__main__":
    main()
