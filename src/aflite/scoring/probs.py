"""Out-of-fold class probabilities from the user's own model, read by id.

A file in any format aflite reads (JSON Lines, CSV, Parquet, ...) with an id column and either
one column per class, named by its label, or one list column holding every class's
probability in the sorted order of the labels. Used by ``pvi`` (p_x, the model given the
input) and, as a partial-input model's, by ``partial`` and ``pvi_partial``. They should be
out of fold (each row predicted by a model that did not train on it), as aflite's own are.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = ["check_probabilities", "load_probabilities", "probabilities_for"]

_SUM_TOLERANCE = 1e-3


def check_probabilities(p: Any, n_rows: int, n_classes: int, name: str = "probs") -> np.ndarray:
    """``p`` as an (n_rows, n_classes) float64 array of probabilities (each row renormalised
    to sum to exactly 1); anything else is a one-line ValueError naming ``name``."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.shape != (n_rows, n_classes):
        raise ValueError(
            f"{name}: expected ({n_rows}, {n_classes}) probabilities (rows, classes), "
            f"got shape {arr.shape}"
        )
    i = _first_bad(arr)
    if i is not None:
        raise ValueError(f"{name}: row {i + 1} {_not_a_distribution(arr[i])}")
    return arr / arr.sum(axis=1, keepdims=True)


def _first_bad(arr: np.ndarray) -> int | None:
    sums = arr.sum(axis=1)
    bad = ~np.isfinite(arr).all(axis=1) | (arr < 0).any(axis=1)
    bad |= np.abs(sums - 1.0) > _SUM_TOLERANCE
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _not_a_distribution(row: np.ndarray) -> str:
    return (
        f"is not a probability distribution ({row.tolist()}, sum {row.sum():.4g}); "
        "give softmax outputs, not logits"
    )


def _number(v: Any, where: str, field: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise DataError(f"{where}: field '{field}' is not a probability ({v!r})")
    return float(v)


def load_probabilities(
    path: str | Path,
    ids: Sequence[Any],
    classes: Sequence[Any],
    *,
    id_field: str = "id",
    flag: str = "--probs",
) -> np.ndarray:
    """(len(ids), len(classes)) probabilities from ``path``, in the order of ``ids`` (matched
    as text: id 7 is "7"). The file's rows may be more than the data's, in any order.

    Every problem is a one-line DataError naming the file (and row and field): no id column,
    an id of the data without probabilities, a class without a column, a list of the wrong
    length, a value that is not a probability.
    """
    from aflite.io.ids import check_ids
    from aflite.io.registry import read_table

    table = read_table(str(path))
    where = f"{flag} {path}"
    if id_field not in table.columns:
        raise DataError(f"{where}: no id column '{id_field}' (columns: {', '.join(table.columns)})")
    file_ids = check_ids(table.column(id_field), id_field, table.where)
    names = [str(c) for c in classes]
    others = [c for c in table.columns if c != id_field]
    k = len(names)
    if all(n in table.columns for n in names):
        cols = [table.column(n) for n in names]
        rows = [
            [_number(col[i], table.where(i), n) for col, n in zip(cols, names)]
            for i in range(len(table))
        ]
    else:
        list_cols = [c for c in others if isinstance(table.column(c)[0], (list, tuple, np.ndarray))]
        if len(list_cols) != 1:
            missing = next(n for n in names if n not in table.columns)
            raise DataError(
                f"{where}: no column for class '{missing}' and no single list column "
                f"(columns: {', '.join(table.columns)}; classes: {', '.join(names)})"
            )
        field = list_cols[0]
        rows = []
        for i, v in enumerate(table.column(field)):
            v = list(v) if isinstance(v, (list, tuple, np.ndarray)) else v
            if not isinstance(v, list) or len(v) != k:
                got = len(v) if isinstance(v, list) else repr(v)
                raise DataError(
                    f"{table.where(i)}: field '{field}' holds {got} probabilities; the data "
                    f"has {k} classes ({', '.join(names)}, in this order)"
                )
            rows.append([_number(x, table.where(i), field) for x in v])
    index = {str(v): i for i, v in enumerate(file_ids)}
    missing_id = next((i for i in ids if str(i) not in index), None)
    if missing_id is not None:
        raise DataError(f"{where}: no probabilities for id {str(missing_id)!r}")
    order = [index[str(i)] for i in ids]
    arr = np.asarray([rows[j] for j in order], dtype=np.float64).reshape(len(ids), k)
    bad = _first_bad(arr)
    if bad is not None:
        raise DataError(f"{table.where(order[bad])}: {_not_a_distribution(arr[bad])}")
    return arr / arr.sum(axis=1, keepdims=True)


def probabilities_for(given: Any, ids: Sequence[Any], classes: Sequence[Any], flag: str) -> Any:
    """Probabilities given as a file (read by id, in the order of ``ids``,
    :func:`load_probabilities`), or as they are (an array, or None)."""
    if not isinstance(given, (str, Path)):
        return given
    return load_probabilities(given, ids, classes, flag=flag)
