"""Training dynamics logged elsewhere, in allenai/cartography's format: one JSON Lines file
per epoch, ``dynamics_epoch_N.jsonl``, each line ``{"guid": ..., "logits_epoch_N": [...],
"gold": k}`` (what cartography's ``log_training_dynamics`` writes)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.scoring.dynamics import TrainingDynamics

__all__ = ["load_cartography_dynamics", "align_dynamics", "dynamics_for"]

_NAME = re.compile(r"dynamics_epoch_(\d+)\.jsonl?$")


def _epoch_files(path: Path) -> list[Path]:
    folder = path / "training_dynamics" if (path / "training_dynamics").is_dir() else path
    if not folder.is_dir():
        raise DataError(f"{path}: not a folder of dynamics_epoch_N.jsonl files")
    found = {int(m.group(1)): p for p in folder.iterdir() if (m := _NAME.search(p.name))}
    if not found:
        raise DataError(f"{folder}: no dynamics_epoch_N.jsonl files here")
    missing = sorted(set(range(max(found) + 1)) - set(found))
    if missing:
        raise DataError(f"{folder}: dynamics_epoch_{missing[0]}.jsonl is missing")
    return [found[e] for e in range(len(found))]


def _read_epoch(path: Path, epoch: int) -> dict[Any, tuple[int, list[float]]]:
    key = f"logits_epoch_{epoch}"
    out: dict[Any, tuple[int, list[float]]] = {}
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            try:
                rec = json.loads(line)
            except ValueError:
                raise DataError(f"{where}: not a JSON object") from None
            if not isinstance(rec, dict):
                raise DataError(f"{where}: not a JSON object")
            for field in ("guid", key, "gold"):
                if field not in rec:
                    raise DataError(f"{where}: field '{field}' is missing")
            logits, gold = rec[key], rec["gold"]
            if not (
                isinstance(logits, list)
                and logits
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in logits)
            ):
                raise DataError(f"{where}: '{key}' is not a list of numbers")
            if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(logits):
                raise DataError(
                    f"{where}: 'gold' is not a class index below {len(logits)} ({gold!r})"
                )
            guid = rec["guid"]
            if guid in out:
                raise DataError(f"{where}: guid {guid!r} appears twice")
            out[guid] = (gold, logits)
    return out


def load_cartography_dynamics(path: str | Path) -> TrainingDynamics:
    """Read a folder of ``dynamics_epoch_N.jsonl`` files (or the folder holding its
    ``training_dynamics/``) into :class:`~aflite.scoring.TrainingDynamics` with one repeat.

    Rows come in the order of epoch 0's file; every epoch must hold the same guids with the
    same gold label and logit width. Any mismatch is a one-line DataError naming the file.
    """
    files = _epoch_files(Path(path))
    first = _read_epoch(files[0], 0)
    ids = list(first)
    n_classes = len(next(iter(first.values()))[1])
    logits = np.empty((len(ids), 1, len(files), n_classes), dtype=np.float32)
    gold = np.asarray([first[g][0] for g in ids], dtype=np.int64)
    for epoch, f in enumerate(files):
        recs = first if epoch == 0 else _read_epoch(f, epoch)
        extra = next((g for g in recs if g not in first), None)
        if extra is not None or len(recs) != len(first):
            missing = next((g for g in first if g not in recs), extra)
            raise DataError(f"{f}: guid {missing!r} is not in every epoch's file")
        for i, g in enumerate(ids):
            k, z = recs[g]
            if k != gold[i]:
                raise DataError(f"{f}: guid {g!r} has gold {k}, epoch 0 says {gold[i]}")
            if len(z) != n_classes:
                raise DataError(f"{f}: guid {g!r} has {len(z)} logits, expected {n_classes}")
            logits[i, 0, epoch] = z
    return TrainingDynamics(logits, gold, ids, {"source": str(path), "epochs": len(files)})


def align_dynamics(
    td: TrainingDynamics, ids: list[Any], where: str = "dynamics"
) -> TrainingDynamics:
    """The rows of ``td`` in the order of ``ids`` (matched as text: guid 7 is id "7"); a row
    of the data without dynamics is a one-line DataError."""
    if td.ids is None:
        if td.logits.shape[0] != len(ids):
            raise DataError(f"{where}: {td.logits.shape[0]} rows of dynamics for {len(ids)} rows")
        return td
    index = {str(g): i for i, g in enumerate(td.ids)}
    missing = next((i for i in ids if str(i) not in index), None)
    if missing is not None:
        raise DataError(f"{where}: no training dynamics for id {str(missing)!r}")
    rows = np.asarray([index[str(i)] for i in ids], dtype=np.int64)
    return TrainingDynamics(td.logits[rows], td.gold[rows], [td.ids[r] for r in rows], td.info)


def dynamics_for(dynamics: Any, ids: list[Any]) -> TrainingDynamics | None:
    """Logged training dynamics (a folder in cartography's format, or a
    :class:`~aflite.scoring.TrainingDynamics`) in the order of ``ids``; None stays None."""
    if dynamics is None:
        return None
    where = "dynamics"
    if isinstance(dynamics, (str, Path)):
        where = str(dynamics)
        dynamics = load_cartography_dynamics(dynamics)
    return align_dynamics(dynamics, ids, where)
