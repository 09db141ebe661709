"""The rows set aside before a run filters: the warm-up rows a warm-up model trains on
(:func:`split_warmup`), and a reviewer's decisions, files of row ids to keep (never removed) or
to drop (always removed).

A decisions file holds one id per line; blank lines and lines starting with ``#`` are skipped,
so an export's id column, pasted into a file, can be read back. Every problem is a one-line
:class:`~aflite.errors.DataError` naming the file and line (or, for ids given in memory, the
option and position).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError

__all__ = ["Decisions", "read_id_file", "resolve_decisions", "split_warmup"]


def split_warmup(
    n_rows: int, fraction: float, *, seed: int = 0, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (warm-up rows, remaining rows). With ``groups``, whole groups go to warm-up."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"warm-up fraction must be in (0, 1), got {fraction}")
    rng = np.random.default_rng(seed)
    if groups is None:
        warm = rng.permutation(n_rows)[: max(1, int(round(fraction * n_rows)))]
    else:
        uniq = np.unique(groups)
        chosen = rng.permutation(uniq)[: max(1, int(round(fraction * len(uniq))))]
        warm = np.flatnonzero(np.isin(groups, chosen))
    mask = np.zeros(n_rows, dtype=bool)
    mask[warm] = True
    return np.flatnonzero(mask), np.flatnonzero(~mask)


@dataclass
class Decisions:
    """Boolean masks over the input rows, and where they came from (for ``summary.json``)."""

    protected: np.ndarray
    dropped: np.ndarray
    sources: dict[str, Any]

    def with_dropped_labels(self, rows: np.ndarray | None, labels: Any) -> Decisions:
        """These decisions and the rows whose labels were named to drop (``--drop-labels``);
        a row both kept by id and dropped by label is an error."""
        if rows is None:
            return self
        both = np.flatnonzero(rows & self.protected)
        if len(both):
            raise DataError(f"--keep-ids keeps {len(both)} rows whose label --drop-labels drops")
        sources = self.sources | {"drop_labels": list(labels)}
        return Decisions(self.protected, self.dropped | rows, sources)

    def summary(self) -> dict[str, Any]:
        return self.sources | {
            "protected": int(self.protected.sum()),
            "dropped": int(self.dropped.sum()),
        }


def read_id_file(path: str | Path) -> list[tuple[str, str]]:
    """``(where, id)`` pairs from a decisions file, ``where`` being ``FILE:LINE``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{p}: no such file") from None
    except UnicodeDecodeError:
        raise DataError(f"{p}: not UTF-8 text (one row id per line expected)") from None
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        value = line.strip()
        if value and not value.startswith("#"):
            out.append((f"{p}:{i}", value))
    return out


def _located(values: Iterable[Any], option: str) -> list[tuple[str, str]]:
    if isinstance(values, (str, bytes)):
        raise DataError(f"{option}: expected a list of ids, got a single string")
    return [(f"{option}[{i}]", str(v)) for i, v in enumerate(values)]


def resolve_decisions(
    ids: list[Any],
    *,
    keep: str | Path | Iterable[Any] | None = None,
    drop: str | Path | Iterable[Any] | None = None,
    keep_name: str = "keep_ids",
    drop_name: str = "drop_ids",
) -> Decisions:
    """Masks of the rows to protect and to drop. ``keep`` / ``drop`` are a file path (one id a
    line) or ids in memory; ids are compared as text, as ``scores.parquet`` writes them.

    An id not in ``ids`` and an id both kept and dropped are errors naming where it was read.
    """
    index = {str(v): i for i, v in enumerate(ids)}
    n = len(ids)
    masks = {"keep": np.zeros(n, bool), "drop": np.zeros(n, bool)}
    where_of: dict[str, dict[int, str]] = {"keep": {}, "drop": {}}
    sources: dict[str, Any] = {}
    for kind, given, name in (("keep", keep, keep_name), ("drop", drop, drop_name)):
        if given is None:
            continue
        if isinstance(given, (str, Path)):
            items = read_id_file(given)
            sources[f"{kind}_ids"] = str(given)
        else:
            items = _located(given, name)
            sources[f"{kind}_ids"] = f"{len(items)} ids given"
        for where, value in items:
            row = index.get(value)
            if row is None:
                raise DataError(f"{where}: unknown id {value!r} (not among the input's row ids)")
            masks[kind][row] = True
            where_of[kind].setdefault(row, where)
    both = np.flatnonzero(masks["keep"] & masks["drop"])
    if len(both):
        row = int(both[0])
        raise DataError(
            f"{where_of['drop'][row]}: id {str(ids[row])!r} is also to be kept "
            f"({where_of['keep'][row]}); a row is either kept or dropped"
        )
    return Decisions(protected=masks["keep"], dropped=masks["drop"], sources=sources)
