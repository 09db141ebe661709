"""The filter's sizes against the rows it will filter, and the scorers' training part against
the rows they score: what no option's own check can see
(a fraction of 50 rows that is under one row, a target not below the rows there are, a
training part too small to hold every class). Each failure is a :class:`ConfigError` naming
its option, which the command line shows as its flag (``--target-size: 0.001 of 50 rows is
less than 1 row``)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

from aflite._internal.options import ConfigError, show

__all__ = ["check_scorer_train_size", "target_rows"]


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


def check_scorer_train_size(
    names: list[str], options: dict[str, Any], labels: Any, where: str
) -> None:
    """The training part of the scorers among ``names`` that train AFLITE's ensemble
    (``train_size``, e.g. predictability's; ``options`` as given, else the scorer's default)
    checked on the rows (``labels``, of the data named ``where``) as the filter checks its
    own: at least one row per class, and rows left to score."""
    import numpy as np

    from aflite.algorithm import SizeError, check_train_covers_classes, resolve_size
    from aflite.errors import DataError
    from aflite.scoring.registry import EXAMPLE_SCORERS

    readers = [EXAMPLE_SCORERS[n] for n in names if "train_size" in EXAMPLE_SCORERS[n].options]
    if not readers:
        return
    value = options.get("train_size", readers[0].options["train_size"])
    try:
        t = resolve_size(value, len(labels), "train_size")
    except ValueError as e:
        raise DataError(f"{where}: {e}") from None
    try:
        check_train_covers_classes(value, t, len(np.unique(labels)), len(labels))
    except SizeError as e:
        raise ConfigError(e.field, e.why) from None
