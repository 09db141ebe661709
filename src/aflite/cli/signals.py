"""SIGINT and SIGTERM as an exception the command line turns into one line and exit 128+N.

The handlers raise :class:`Interrupted`, a ``BaseException`` that typer and click do not
catch (they turn ``KeyboardInterrupt`` into a bare return value), so it reaches ``main()``
through every ``finally`` and ``atomic_path`` cleanup on the way, and a checkpoint written
before the signal stays intact.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["Interrupted", "install_signal_handlers", "restore_signal_handlers"]

Handlers = dict[int, object]


class Interrupted(BaseException):
    """The process got SIGINT or SIGTERM; ``resumable`` is set by commands that take
    ``--resume``, so the message can say how to continue."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.resumable = False

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports a process killed by it."""
        return 128 + self.signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


def install_signal_handlers() -> Handlers:
    """Raise :class:`Interrupted` on SIGINT and SIGTERM in the main thread; return the
    handlers replaced, for :func:`restore_signal_handlers`.

    A signal the parent set to be ignored (``nohup``, a background job without job control)
    stays ignored. Elsewhere than the main thread Python cannot install handlers: nothing
    happens.
    """
    previous: Handlers = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler == signal.SIG_IGN or handler is None:
            continue  # ignored, or set outside Python: leave it alone
        previous[sig] = handler
        signal.signal(sig, _raise)
    return previous


def restore_signal_handlers(previous: Handlers) -> None:
    """Put back the handlers :func:`install_signal_handlers` replaced (``main()`` may run
    inside another program, e.g. a test runner)."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]
