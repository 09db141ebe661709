"""A job's checks beyond its options (those are checked once, when its
:class:`~aflite.config.FilterConfig` is made): the environment before any work, and the sizes
against the rows to filter once the input has been read. Each failure is a one-line DataError
naming the command-line flag (``--target-size: 0.001 of 50 rows is less than 1 row``).
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

from aflite._internal.options import ConfigError, show
from aflite.errors import DataError

if TYPE_CHECKING:
    from aflite.config import FilterConfig

__all__ = ["check_environment", "resolve_job_sizes"]


def _fail(name: str, why: str) -> DataError:
    return DataError(ConfigError(name, why).render(cli=True))


def check_environment(job: FilterConfig) -> None:
    """What the options leave to the environment (``AFLITE_THREADS``), before any work."""
    if job.threads is None:
        from aflite._internal.threads import resolve_threads

        try:
            resolve_threads(None)  # AFLITE_THREADS
        except ValueError as e:
            raise DataError(str(e)) from None


def resolve_job_sizes(
    job: FilterConfig, n_rows: int, n_classes: int | None = None
) -> tuple[int, int, int]:
    """(target n, train t, slice k) as row counts for ``n_rows`` rows to filter of
    ``n_classes`` classes (None: not checked, as for multiple-choice items, whose every item
    holds all its choices); a size the data cannot take is a DataError naming its flag."""

    def rows(name: str) -> int:
        value = getattr(job, name)
        if isinstance(value, Integral):
            return int(value)
        size = int(round(float(value) * n_rows))
        if name == "slice_size":
            return max(1, size)  # a fraction of a small set still removes a row per phase
        if size < 1:
            raise _fail(name, f"{show(value)} of {n_rows} rows is less than 1 row")
        return size

    target, train, k = rows("target_size"), rows("train_size"), rows("slice_size")
    if target >= n_rows:
        raise _fail("target_size", f"{target} is not smaller than the {n_rows} rows to filter")
    if train >= target:
        raise _fail(
            "train_size",
            f"{train} must be smaller than {{target_size}} ({target}): the kept rows are scored "
            "by models trained on other rows",
        )
    if n_classes is not None:
        from aflite.algorithm import SizeError, check_train_covers_classes

        try:
            check_train_covers_classes(job.train_size, train, n_classes, n_rows)
        except SizeError as e:
            raise _fail(e.field, e.why) from None
    return target, train, k
