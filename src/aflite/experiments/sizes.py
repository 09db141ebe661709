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
    from aflite.algorithm import SizeError, check_train_covers_classes
    from aflite.algorithm.filtering import check_filter_options
    from aflite.config.base import ConfigError, show

    dev_options = as_fractions(options, n_train)
    try:
        check_filter_options(n_train, n_classes=classes[0], **_filter_options(options))
        _, t, _, _ = check_filter_options(n_dev, **_filter_options(dev_options))
        if classes[1] is not None:
            # dev's size in the user's own terms: a count of D is applied to dev in proportion
            value, fraction = options["train_size"], dev_options["train_size"]
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


def _filter_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options the sizes are checked with (not the partitions or the model family)."""
    return {k: v for k, v in options.items() if k not in ("n_partitions", "model")}
