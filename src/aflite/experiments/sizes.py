"""The filter's sizes in the compare experiment: counts of D applied to dev in proportion, and
both checked on their sets before any work."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_fractions", "check_sizes"]


def as_fractions(options: Any, n: int) -> Any:
    """The :class:`aflite.FilterOptions` ``options`` with sizes given as row counts of D as
    fractions, so dev is filtered in proportion."""
    from aflite.algorithm import FilterOptions

    out = {}
    for key in ("target_size", "train_size", "slice_size"):
        v = getattr(options, key)
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[key] = min(max(float(v) / n, 1e-9), 1 - 1e-9)
    return FilterOptions.of(options, **out)


def check_sizes(
    options: Any,
    n_train: int,
    n_dev: int,
    classes: tuple[int | None, int | None] = (None, None),
) -> Any:
    """The filter's checks of ``options`` on D (``n_train`` rows) and of their fractions on
    dev (``n_dev``); ``classes``: the number of classes of each (None: not checked, as for
    items), which every classifier's training part must cover. Returns dev's options."""
    from aflite._internal.options import ConfigError, show
    from aflite.algorithm import SizeError, check_train_covers_classes

    dev_options = as_fractions(options, n_train)
    try:
        options.resolve(n_train, classes[0])
        _, t, _ = dev_options.resolve(n_dev, None)
        if classes[1] is not None:
            # dev's size in the user's own terms: a count of D is applied to dev in proportion
            value, fraction = options.train_size, dev_options.train_size
            given = f"{show(fraction)} of {n_dev} rows of dev"
            if fraction != value:
                given = (
                    f"{show(value)} of {n_train} rows, in proportion {fraction:.3g} of the "
                    f"{n_dev} rows of dev,"
                )
            check_train_covers_classes(value, t, classes[1], n_dev, given=given)
    except SizeError as e:
        raise ConfigError(e.field, e.why) from None
    return dev_options
