"""Write-then-rename, so an interrupted run never leaves a half-written output.

A write in progress lives in ``.NAME.XXXX.part`` beside its target. A process killed mid-write
leaves that file behind; :func:`clean_stale_parts` removes such leftovers, and every
:func:`atomic_path` removes the leftovers of its own target before it starts.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "clean_stale_parts", "named_os_error"]

PART_SUFFIX = ".part"


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # os.umask can only be read by setting it; the lock keeps our own threads from racing
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _open_up(tmp: Path) -> None:
    """Give a finished temporary file the mode a plain ``open`` would have (0o666 less the
    umask): ``mkstemp`` creates it 0o600, which would make every output private."""
    with contextlib.suppress(OSError):  # a file system without modes keeps what it has
        base = 0o777 if stat.S_ISDIR(tmp.stat().st_mode) else 0o666
        os.chmod(tmp, base & ~current_umask())


def _finish(tmp: Path, target: Path) -> None:
    """The commit step (a rename); a separate function so tests can inject faults here."""
    os.replace(tmp, target)


def _is_part(p: Path) -> bool:
    return p.name.startswith(".") and p.name.endswith(PART_SUFFIX)


def _remove_old(paths: Iterator[Path], older_than: float) -> list[Path]:
    removed = []
    now = time.time()
    for p in paths:
        try:
            if not p.is_file() or not _is_part(p):
                continue
            if older_than > 0 and now - p.stat().st_mtime < older_than:
                continue
            p.unlink()
        except OSError:
            continue  # gone already, or not ours to remove: leave it
        removed.append(p)
    return removed


def clean_stale_parts(
    directory: str | os.PathLike, *, older_than: float = 0.0, recursive: bool = True
) -> list[Path]:
    """Remove ``.NAME.XXXX.part`` files left by interrupted writes in ``directory``.

    Only call it where no other process is writing (an output folder at the start of a run);
    ``older_than`` (seconds) spares parts that were touched recently. Returns what was removed.
    A missing or unreadable directory removes nothing.
    """
    d = Path(directory)
    if not d.is_dir():
        return []
    pattern = f"**/.*{PART_SUFFIX}" if recursive else f".*{PART_SUFFIX}"
    try:
        found = sorted(d.glob(pattern))
    except OSError:
        return []
    return _remove_old(iter(found), older_than)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, *, stale_after: float = 0.0) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` on success.

    On an exception the temporary file is deleted and ``target`` is left as it was. Parts of
    earlier, interrupted writes of the same target are removed first (only those older than
    ``stale_after`` seconds, for folders that several processes may write at once).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}."
    with contextlib.suppress(OSError):
        own = (
            p
            for p in target.parent.glob(f"{glob.escape(prefix)}*{PART_SUFFIX}")
            if "." not in p.name[len(prefix) : -len(PART_SUFFIX)]  # not a longer name's part
        )
        _remove_old(own, stale_after)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=PART_SUFFIX, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        _open_up(tmp_path)
        _finish(tmp_path, target)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        if isinstance(e, OSError):
            named = named_os_error(e, target, tmp_path)
            if named is not e:
                raise named from None
        raise


def named_os_error(e: OSError, target: Path, tmp: Path | None = None) -> OSError:
    """``e`` naming ``target`` (the file the user knows of, not its temporary part) and, for
    a short write that says no more (numpy's ``162000 requested and 16352 written``), the
    full disk it almost always is."""
    code, why = e.errno, e.strerror
    if code is None and "requested and" in str(e) and "written" in str(e):
        code, why = errno.ENOSPC, os.strerror(errno.ENOSPC)
    elif code is None and (m := re.search(r"\[errno (\d+)\]", str(e), re.I)):
        code = int(m.group(1))  # pyarrow's errors carry the errno in their text only
        why = os.strerror(code)
    if code is None:
        return e  # nothing to build a plainer error from
    name = e.filename
    if name is None or (tmp is not None and os.fsdecode(name) == str(tmp)):
        name = str(target)
    if name == e.filename and code == e.errno:
        return e
    return OSError(code, why or str(e), name)
