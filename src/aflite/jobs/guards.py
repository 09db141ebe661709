"""What guards a run against other processes: one run at a time per output folder (a lock
file holding the writer's pid), and an input that changes while the run reads it.

The lock is ``OUT/.aflite.lock``, taken before the run reads anything. Where the system has ``flock`` the kernel holds the lock and
drops it when the process dies, so a lock left by a killed run is taken over without asking;
elsewhere a lock whose pid is no longer running is. A second run into a locked folder is a
one-line :class:`~aflite.errors.DataError` naming the folder and the pid.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from aflite.errors import DataError

__all__ = [
    "LOCK_NAME",
    "InputChanged",
    "check_input_unchanged",
    "input_stamp",
    "out_dir_lock",
]

LOCK_NAME = ".aflite.lock"

try:
    import fcntl
except ImportError:  # Windows: the pid in the file decides
    fcntl = None  # type: ignore[assignment]


def _holder(path: Path) -> str:
    with contextlib.suppress(OSError, ValueError):
        return path.read_text(encoding="ascii").split()[0]
    return "?"


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except OSError:
        return True  # running, but another user's
    return True


def _refuse(out: Path, path: Path) -> DataError:
    return DataError(
        f"{out}: another aflite run (pid {_holder(path)}) is writing here; wait for it to "
        "finish or pick another --out-dir"
    )


def _acquire_flock(out: Path, path: Path) -> int:
    for _ in range(5):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _refuse(out, path) from None
        # the holder before us may have removed the file between our open and our lock: a
        # lock on a removed file guards nothing, so try again on the one now there
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            return fd
        os.close(fd)
    raise _refuse(out, path)


def _acquire_pid(out: Path, path: Path) -> int:
    for _ in range(5):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _alive(_holder(path)):
                raise _refuse(out, path) from None
            path.unlink(missing_ok=True)  # its run is gone: take the lock over
            continue
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        return fd
    raise _refuse(out, path)


@contextlib.contextmanager
def out_dir_lock(out_dir: str | os.PathLike) -> Iterator[Path]:
    """Hold ``OUT/.aflite.lock`` for the ``with`` block; yields the lock file's path.

    The folder is created when missing; if it was created here and is empty when the block
    ends (a run that failed before writing anything), it is removed again.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        # an environment fault (exit 1), found before anything is read or written
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(out))
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    try:
        fd = _acquire_flock(out, path) if fcntl is not None else _acquire_pid(out, path)
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    try:
        yield path
    finally:
        # removed while still held, so no other run can be holding it at that moment
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only succeeds when nothing was written


def input_stamp(path: str | os.PathLike) -> list[tuple[str, int, int]]:
    """(name, size, modification time in ns) of the input file, or of every file under an
    input folder: any write to the input changes it, and taking it reads no data."""
    p = Path(path)
    try:
        files = [p] if not p.is_dir() else sorted(f for f in p.rglob("*") if f.is_file())
        stamp = []
        for f in files:
            st = f.stat()
            stamp.append((str(f.relative_to(p)) if f is not p else "", st.st_size, st.st_mtime_ns))
    except OSError:
        return []  # gone or unreadable: the comparison below reports it
    return stamp


class InputChanged(DataError):
    """The input changed while a run was using it: no outputs, and no checkpoint to resume."""


def check_input_unchanged(path: str | os.PathLike, stamp: list[tuple[str, int, int]]) -> None:
    """A one-line :class:`InputChanged` error when ``path`` no longer has the ``stamp`` taken
    when it was read: outputs copy rows from the input, so they would mix two versions of it."""
    if input_stamp(path) != stamp:
        raise InputChanged(
            f"{path}: the input changed while the run was using it, so no outputs were written; "
            "run again with --overwrite once it stays put"
        )
