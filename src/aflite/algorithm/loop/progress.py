"""Progress of a filtering run: a rich bar over rows removed, a user callback, or nothing;
and the warning for classifiers that did not converge."""

from __future__ import annotations

import contextvars
import math
import sys
import warnings
from typing import Any

from aflite._internal.progress import progress_console
from aflite._internal.text import plural
from aflite.algorithm.loop.result import PhaseRecord

__all__ = ["ConvergenceWarning", "Reporter", "warn_if_unconverged"]


class ConvergenceWarning(UserWarning):
    """Some classifiers of a phase stopped at the iteration cap before reaching ``tol``."""


def warn_if_unconverged(
    info: dict[str, Any], phase: int, tol: float | None, *, stacklevel: int = 2
) -> None:
    """Warn when a classifier ended unconverged: at the iteration cap, or stalled more than
    ten times above the tolerance; ``stacklevel`` as for :func:`warnings.warn`."""
    residual = info.get("residual", 0.0)
    stalled_far = info.get("n_stalled") and tol is not None and residual > 10 * tol
    if info.get("n_capped") or stalled_far:
        why = (
            f"{plural(info['n_capped'], 'classifier')} stopped at the iteration cap "
            f"({info.get('iterations')})"
            if info.get("n_capped")
            else f"{plural(info['n_stalled'], 'classifier')} stalled"
        )
        warnings.warn(
            f"phase {phase}: {why} with relative gradient norm {residual:.1e}"
            f"{f' (tol {tol:g})' if tol else ''}; raise LinearEnsemble(max_iter=...) or loosen tol",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


# what the progress of a run is called: "filtering", or the second run of a seed check
LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("progress_label", default="filtering")


class Reporter:
    """``progress``: True (bar), False (nothing), None (bar on a terminal only) or a callable
    receiving each :class:`PhaseRecord`."""

    def __init__(self, progress: Any, *, total: int, done: int, noun: str = "row") -> None:
        self.noun, self.label = noun, LABEL.get()
        self.callback = progress if callable(progress) else None
        show = (
            progress if isinstance(progress, bool) else (progress is None and sys.stderr.isatty())
        )
        self.bar = None
        # asked for progress off a terminal (a pipe, a log, nohup): a line a phase, flushed
        # at once, instead of a bar that only shows when it ends
        self.lines = bool(show) and self.callback is None and not sys.stderr.isatty()
        self.total, self.done = total, done
        if show and self.callback is None and not self.lines:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn(f"[bold]{self.label}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                transient=False,
                console=progress_console(),
            )
            self.bar.start()
            self.task = self.bar.add_task("filter", total=total, completed=done, info="")

    def update(self, record: PhaseRecord, size_after: int) -> None:
        if self.callback is not None:
            self.callback(record)
        self.done += record.n_removed
        if self.lines:
            print(
                f"{self.label}: phase {record.phase}: {plural(record.size_before, self.noun)}, bias "
                f"{record.representation_bias:.3f} (chance {record.chance:.3f}), removed "
                f"{record.n_removed}; {self.done}/{self.total} ({record.seconds:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
        if self.bar is not None:
            self.bar.update(
                self.task,
                advance=record.n_removed,
                info=f"phase {record.phase}  size {size_after}  "
                f"bias {record.representation_bias:.3f} (chance {record.chance:.3f})",
            )

    def finish(self, size: int, bias: float, chance: float) -> None:
        """Show the kept set's bias, measured after the last phase, as the bar's last word."""
        # score_kept=False leaves the kept set's bias unmeasured (NaN): say so
        shown = "not measured" if math.isnan(bias) else f"{bias:.3f}"
        info = f"done  size {size}  bias {shown} (chance {chance:.3f})"
        if self.bar is not None:
            self.bar.update(self.task, info=info)
        elif self.lines:
            print(f"{self.label}: {info}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
