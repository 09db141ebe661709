"""An output folder that already holds a run: refused, replaced (``--overwrite``) or continued
(``--resume``), decided before any work is done."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from aflite.errors import DataError

__all__ = [
    "check_out_dir",
    "finished_run",
    "previous_run",
    "STAGING",
    "publish",
]

# a run writes its outputs here first and moves them into the folder last (see publish)
STAGING = ".aflite-staging"

# what a run writes; kept / removed / warm-up rows take the input's format (kept.jsonl,
# kept.csv, a kept/ dataset folder, ...), so those match by the name before the first dot
FIXED_OUTPUTS = ("summary.json", "scores.parquet", "report.html", "card.md", "result", ".checkpoint",
                 STAGING)  # fmt: skip
ROW_OUTPUTS = ("kept", "removed", "warmup")


def _is_output_name(name: str) -> bool:
    if name in FIXED_OUTPUTS:
        return True
    if name.startswith(".") and name.endswith(".part"):
        # an interrupted write of one of the outputs: .kept.jsonl.abc123.part
        return _is_output_name(name[1:].rsplit(".", 2)[0])
    return name.split(".", 1)[0] in ROW_OUTPUTS


def previous_run(out_dir: str | Path) -> list[Path]:
    """The outputs of an earlier run in ``out_dir`` (sorted), or [] when there are none.

    Besides the names every run writes, the names an earlier ``summary.json`` lists count,
    and those ``aflite export`` gives the files it writes into the folder by default.
    """
    out = Path(out_dir)
    if not out.is_dir():
        return []
    from aflite.exports.registry import default_export_names

    # the review files `aflite export` wrote beside the run's outputs describe that run's rows
    exports = default_export_names()
    found = {p for p in out.iterdir() if _is_output_name(p.name) or p.name in exports}
    try:
        listed = json.loads((out / "summary.json").read_text()).get("outputs", {})
        for name in listed.values() if isinstance(listed, dict) else ():
            # only plain names inside the folder; a summary cannot point elsewhere
            if isinstance(name, str) and Path(name).name == name and name not in ("", ".", ".."):
                if (out / name).exists():
                    found.add(out / name)
    except (OSError, ValueError, AttributeError):
        pass  # no summary, or one that is not ours to read: the fixed names still count
    return sorted(found)


def finished_run(out_dir: str | Path) -> dict | None:
    """The ``summary.json`` of the finished run in ``out_dir``, or None when there is none.

    A run publishes ``summary.json`` last and clears its checkpoint after that, so a folder
    with a summary and no checkpoint holds a finished run; one that still has a checkpoint is
    left to ``--resume``, which completes it.
    """
    out = Path(out_dir)
    if (out / ".checkpoint").exists():
        return None
    try:
        summary = json.loads((out / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) else None


def check_out_dir(
    out_dir: str | Path,
    *,
    overwrite: bool,
    resume: bool,
    inputs: tuple[str | Path, ...] = (),
) -> list[Path]:
    """Refuse an output folder holding an earlier run unless ``overwrite`` or ``resume`` (a
    folder another run holds is refused before, by :func:`~aflite.jobs.guards.out_dir_lock`).

    Returns the earlier run's outputs that ``overwrite`` replaces (when the new outputs are
    published, see :func:`publish`); [] otherwise. An input file inside those outputs is
    refused, since replacing the run would delete it.
    """
    if overwrite and resume:
        raise DataError("--overwrite and --resume cannot be used together: pick one")
    found = previous_run(out_dir)
    if not found or resume:
        return []
    if not overwrite:
        names = ", ".join(p.name for p in found[:3]) + (", ..." if len(found) > 3 else "")
        raise DataError(
            f"{out_dir}: holds a previous run ({names}); pass --overwrite to replace it "
            "or --resume to continue it"
        )
    for given in inputs:
        path = Path(given).resolve()
        for p in found:
            if path == p.resolve() or p.resolve() in path.parents:
                raise DataError(
                    f"{given}: the input is an output of the run in {out_dir} that --overwrite "
                    "would remove; write to another --out-dir"
                )
    return found


def publish(
    stage: Path, out: Path, last: str = "summary.json", replaces: Sequence[Path] = ()
) -> None:
    """Move everything in ``stage`` into ``out``, ``last`` last, then remove ``stage``; the
    earlier run's outputs the new ones do not replace (``replaces``: kept.csv beside a new
    kept.jsonl) go just before ``last`` comes in.

    A folder without ``summary.json`` holds no finished run, however many of the other
    outputs a kill left there (``--resume`` writes them again).
    """
    trash = stage / ".replaced"
    names = sorted(p.name for p in stage.iterdir() if p.name != last)
    for name in names:
        _move_in(stage / name, out / name, trash)
    for p in replaces:
        if p.name not in names and p.name != last:
            _remove(p)
    _move_in(stage / last, out / last, trash)
    shutil.rmtree(stage, ignore_errors=True)


def _move_in(src: Path, target: Path, trash: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        # a folder output (kept/ as a dataset) of an earlier run: a rename cannot replace a
        # non-empty folder, so move it aside first
        trash.mkdir(exist_ok=True)
        _move(target, trash / target.name)
    _move(src, target)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def _move(src: Path, dst: Path) -> None:
    """One rename of :func:`publish` (a separate function so tests can inject kills here)."""
    os.replace(src, dst)
