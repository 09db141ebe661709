"""The filter's sizes against the rows it will filter: what no option's own check can see
(a fraction of 50 rows that is under one row, a target not below the rows there are, a
training part too small to hold every class). Each failure is a :class:`ConfigError` naming
its option, which the command line shows as its flag (``--target-size: 0.001 of 50 rows is
less than 1 row``)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

from aflite._internal.options import ConfigError, show

__all__ = ["target_rows"]


def target_rows(options: Any, n_rows: int, n_classes: int | None = None) -> int:
    """The target size of ``options`` (an :class:`aflite.FilterOptions`) as rows of the
    ``n_rows`` to filter, checked with the training part and, given the rows' ``n_classes``
    (None for multiple-choice items, whose every item holds all its choices), its cover of
    every class."""
    from aflite.algorithm import SizeError, check_train_covers_classes

    def rows(name: str) -> int:
        value = getattr(options, name)
        if isinstance(value, Integral):
            return int(value)
        size = int(round(float(value) * n_rows))
        if size < 1:
            raise ConfigError(name, f"{show(value)} of {n_rows} rows is less than 1 row")
        return size

    target, train = rows("target_size"), rows("train_size")
    if target >= n_rows:
        raise ConfigError(
            "target_size", f"{target} is not smaller than the {n_rows} rows to filter"
        )
    if train >= target:
        raise ConfigError(
            "train_size",
            f"{train} must be smaller than {{target_size}} ({target}): the kept rows are scored "
            "by models trained on other rows",
        )
    if n_classes is not None:
        try:
            check_train_covers_classes(options.train_size, train, n_classes, n_rows)
        except SizeError as e:
            raise ConfigError(e.field, e.why) from None
    return target
