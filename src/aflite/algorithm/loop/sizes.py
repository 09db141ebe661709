"""The filter's sizes as row counts: the target size n, the training-part size t and the slice
size k, each an int or a fraction of the rows, checked against the rows they are for."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "SizeError",
    "check_train_covers_classes",
    "resolve_filter_sizes",
    "resolve_size",
    "resolve_slice_size",
]


def resolve_size(value: Any, n: int, name: str) -> int:
    """An int is a row count; a float in (0, 1) is a fraction of ``n``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an int or a fraction in (0, 1), got {value!r}")
    if isinstance(value, Integral):
        size = int(value)
    elif isinstance(value, Real):
        if not 0.0 < float(value) < 1.0:
            raise ValueError(f"{name} as a fraction must be in (0, 1), got {value}")
        size = int(round(float(value) * n))
    else:
        raise ValueError(f"{name} must be an int or a fraction in (0, 1), got {value!r}")
    if size < 1:
        raise ValueError(f"{name} must be at least 1 row, got {size}")
    return size


class SizeError(ValueError):
    """A size the rows cannot take, as ``field`` and ``why``, so a caller can name the field
    its own way (the command line as ``--train-size``)."""

    def __init__(self, field: str, why: str) -> None:
        self.field, self.why = field, why
        super().__init__(f"{field}: {why}")


def _typed(value: Any) -> str:
    """A size as the user most likely typed it: 30, not 30.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check_train_covers_classes(
    value: Any, t: int, n_classes: int, n_rows: int, *, given: str | None = None
) -> None:
    """``train_size`` = ``value``, resolved to ``t`` of ``n_rows`` rows, gives every classifier
    at least one row per class (else a :class:`SizeError`): a classifier trained on fewer rows
    than there are classes can never predict some of them, so its scores are not AFLITE's.
    ``given`` says how the size was given where the value alone would mislead."""
    if t >= n_classes:
        return
    if given is None:
        fraction = not isinstance(value, Integral)
        given = f"{_typed(value)} of {n_rows} rows" if fraction else _typed(value)
    rows = "row" if t == 1 else "rows"
    raise SizeError(
        "train_size",
        f"{given} gives each classifier {t} training {rows}, fewer than the {n_classes} classes",
    )


def resolve_slice_size(slice_size: Any, n: int) -> int:
    """Rows per slice: like :func:`resolve_size`, but a fraction of a small set still
    removes one row per slice."""
    if isinstance(slice_size, bool) or not isinstance(slice_size, (int, np.integer, float)):
        raise ValueError(f"slice_size must be a positive int or a fraction, got {slice_size!r}")
    if isinstance(slice_size, float) and 0.0 < slice_size < 1.0:
        slice_size = max(1, int(round(slice_size * n)))
    return resolve_size(slice_size, n, "slice_size")


def resolve_filter_sizes(
    n_input: int,
    *,
    target_size: Any,
    train_size: Any,
    slice_size: Any,
    n_classes: int | None = None,
) -> tuple[int, int, int]:
    """(target size n, train size t, slice size k) as row counts for the ``n_input`` rows to
    filter, checked: n < n_input, t < n (so the kept set can still be scored out of sample),
    k >= 1 and, given their ``n_classes`` (None for multiple-choice items, each of which
    holds every choice), t >= n_classes."""
    n = resolve_size(target_size, n_input, "target_size")
    if n >= n_input:
        raise ValueError(f"target_size ({n}) must be smaller than the number of rows ({n_input})")
    t = resolve_size(train_size, n_input, "train_size")
    if t >= n:
        raise ValueError(
            f"train_size ({t}) must be smaller than target_size ({n}): Algorithm 1 needs t < n "
            "so the kept set can still be scored out of sample"
        )
    if n_classes is not None:
        check_train_covers_classes(train_size, t, n_classes, n_input)
    return n, t, int(resolve_slice_size(slice_size, n_input))
