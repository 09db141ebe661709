"""Progress bars (rich) that can be silenced."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported only when a bar is shown
    from rich.console import Console

__all__ = ["progress_bar", "progress_console", "silence_third_party_progress"]

# read when those libraries are imported: set before, they never show a bar
_QUIET_ENV = {
    "TQDM_DISABLE": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}


def silence_third_party_progress() -> None:
    """Turn off the progress bars of tqdm, Hugging Face ``datasets``, ``transformers`` and
    the hub (model downloads, as sentence-transformers does them).

    Nothing is imported for it: the environment switches reach libraries imported later (and
    subprocesses), and ``datasets``, ``transformers`` and the hub, if already imported, are
    told directly. tqdm reads ``TQDM_DISABLE`` when it is imported, so call this first.
    """
    os.environ.update(_QUIET_ENV)
    if "datasets" in sys.modules:
        with contextlib.suppress(Exception):
            sys.modules["datasets"].disable_progress_bars()
    if "transformers" in sys.modules:
        with contextlib.suppress(Exception):
            sys.modules["transformers"].logging.disable_progress_bar()
    if "huggingface_hub" in sys.modules:
        with contextlib.suppress(Exception):
            sys.modules["huggingface_hub"].utils.disable_progress_bars()


LINE_SECONDS = 10.0


def _lines(label: str) -> Callable[[int, int], None]:
    last = [-math.inf]

    def update(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= LINE_SECONDS:
            last[0] = now
            share = f" ({done / total:.0%})" if total else ""
            print(f"{label}: {done}/{total}{share}", file=sys.stderr, flush=True)

    return update


def progress_console() -> Console:
    """The console every bar draws on: stderr, as pip's, cargo's and git's do, so stdout holds
    only results (rich's default console is stdout)."""
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def progress_bar(label: str, *, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """Yield ``update(done, total)``; shows a bar only when enabled and updated at least once.
    Off a terminal (a pipe, a log, nohup) a bar would show only when it ends: there a line
    every ``LINE_SECONDS`` and one at the end instead."""
    if not enabled:
        yield lambda done, total: None
        return
    if not sys.stderr.isatty():
        yield _lines(label)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=progress_console(),
    )
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(label, total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()
