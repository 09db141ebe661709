"""The filter's sizes in the compare experiment: counts of D applied to dev in proportion, and
both checked on their sets before any work."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_fractions", "check_sizes"]


def as_fractions(options: dict[str, Any], n: int) -> dict[str, Any]:
    """Sizes given as row counts of D, as fractions, so dev is filtered in proportion."""
    out = dict(options)
    for key in ("target_size", "train_size", "slice_size"):
        v = out[key]
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[key] = min(max(float(v) / n, 1e-9), 1 - 1e-9)
    return out


def check_sizes(
    options: dict[str, Any],
    n_train: int,
    n_dev: int,
    classes: tuple[int | None, int | None] = (None, None),
) -> dict[str, Any]:
    """The filter's checks of ``options`` on D (``n_train`` rows) and of their fractions on
    dev (``n_dev``); ``classes``: the number of classes of each (None: not checked, as for
    items), which every classifier's training part must cover. Returns dev's options."""
    from aflite.algorithm._validation import SizeError
    from aflite.algorithm.filtering import check_filter_options
    from aflite.config.base import ConfigError

    dev_options = as_fractions(options, n_train)
    sets = ((n_train, options, classes[0], ""), (n_dev, dev_options, classes[1], " of dev"))
    for n, opts, n_classes, of in sets:
        try:
            check_filter_options(
                n, n_classes=n_classes, **{k: v for k, v in opts.items() if k != "n_partitions"}
            )
        except SizeError as e:
            raise ConfigError(e.field, e.why.replace(" gives each", f"{of} gives each")) from None
    return dev_options
