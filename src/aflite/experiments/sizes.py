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


def check_sizes(options: dict[str, Any], n_train: int, n_dev: int) -> dict[str, Any]:
    """The filter's checks of ``options`` on D (``n_train`` rows) and of their fractions on
    dev (``n_dev``); returns dev's options."""
    from aflite.algorithm.filtering import check_filter_options

    dev_options = as_fractions(options, n_train)
    for n, opts in ((n_train, options), (n_dev, dev_options)):
        check_filter_options(n, **{k: v for k, v in opts.items() if k != "n_partitions"})
    return dev_options
