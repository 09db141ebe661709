"""Progress of a filtering run: a rich bar over rows removed, a user callback, or nothing."""

from __future__ import annotations

import sys
from typing import Any

from aflite.algorithm.result import PhaseRecord

__all__ = ["Reporter"]


class Reporter:
    """``progress``: True (bar), False (nothing), None (bar on a terminal only) or a callable
    receiving each :class:`PhaseRecord`."""

    def __init__(self, progress: Any, *, total: int, done: int) -> None:
        self.callback = progress if callable(progress) else None
        show = progress if isinstance(progress, bool) else (progress is None and sys.stderr.isatty())
        self.bar = None
        if show and self.callback is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("[bold]filtering"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("filter", total=total, completed=done, info="")

    def update(self, record: PhaseRecord, size_after: int) -> None:
        if self.callback is not None:
            self.callback(record)
        if self.bar is not None:
            self.bar.update(
                self.task,
                advance=record.n_removed,
                info=f"phase {record.phase}  size {size_after}  "
                f"bias {record.representation_bias:.3f} (chance {record.chance:.3f})",
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
