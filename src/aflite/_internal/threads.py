"""Threads for the filter's products: as many as the cores this process may run on, each
running single-threaded torch operations on its own share of the work.

Why not torch's own thread pool: its OpenMP threads meet at a barrier after every operation,
so when another program holds one of the cores the whole pool waits for the thread that is
not running (4-6x slower on two cores with one busy). Here each pass is cut into the same
tasks whatever the thread count, a task runs entirely on one thread, and the results are
combined in task order: a busy core only means that thread takes fewer tasks, and the
numbers do not depend on how many threads there were.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

__all__ = ["available_cores", "resolve_threads", "compute_threads", "workers", "Workers"]

T = TypeVar("T")
R = TypeVar("R")
ENV = "AFLITE_THREADS"


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), not the machine's count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: Any = None) -> int:
    """``threads`` if given, else ``AFLITE_THREADS``, else the available cores."""
    source = "threads"
    if threads is None:
        raw = os.environ.get(ENV, "").strip()
        if not raw:
            return available_cores()
        source = ENV
        try:
            threads = int(raw)
        except ValueError:
            raise ValueError(f"{ENV} must be a positive whole number, got {raw!r}") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"{source} must be a positive whole number, got {threads!r}")
    return threads


def _one_torch_thread() -> None:
    import torch  # here: resolve_threads checks AFLITE_THREADS before the data is read

    torch.set_num_threads(1)


class Workers:
    """Runs tasks on ``n`` threads, each with one torch thread; results come back in task
    order. With one thread the tasks run in the caller's thread."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._pool = (
            ThreadPoolExecutor(n, thread_name_prefix="aflite", initializer=_one_torch_thread)
            if n > 1
            else None
        )

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        if self._pool is None:
            return map(fn, items)
        return self._pool.map(fn, items)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


_state = threading.local()
_pools: dict[int, Workers] = {}
_lock = threading.Lock()


def _pool(n: int) -> Workers:
    with _lock:
        if n not in _pools:
            _pools[n] = Workers(n)
        return _pools[n]


@contextlib.contextmanager
def compute_threads(threads: Any = None) -> Iterator[Workers]:
    """Inside: the filter's products run on ``threads`` worker threads (see the module
    docstring) and torch runs single-threaded in this thread; torch's setting comes back
    after. Nested uses keep the outer setting."""
    outer = getattr(_state, "workers", None)
    if outer is not None:
        yield outer
        return
    import torch

    pool = _pool(resolve_threads(threads))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    _state.workers = pool
    try:
        # NumPy's BLAS (the exact family's symmetric products) runs single-threaded in each
        # worker too, for the same reason as torch
        with threadpool_limits(limits=1, user_api="blas"):
            yield pool
    finally:
        _state.workers = None
        torch.set_num_threads(before)


def workers() -> Workers:
    """The workers of the enclosing :func:`compute_threads`, or one in-thread worker."""
    return getattr(_state, "workers", None) or _pool(1)
