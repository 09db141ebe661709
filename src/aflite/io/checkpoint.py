"""Per-phase checkpoints of a filtering run (JSON + npz + npy, no pickle)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.algorithm import FilterState, PhaseRecord

__all__ = ["save_state", "load_state"]


def save_state(
    directory: Path,
    *,
    state: FilterState | None = None,
    phi: np.ndarray | None = None,
    meta: dict[str, Any] | None = None,
) -> None:
    """Write any of: the representation, the job's identity, the filter state after a phase.

    The state's arrays and its JSON are written to temporary names and renamed, the JSON last,
    so a kill at any moment leaves the previous complete checkpoint readable.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if phi is not None:
        with atomic_path(directory / "features.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.ascontiguousarray(phi, dtype=np.float32), allow_pickle=False)
    if meta is not None:
        with atomic_path(directory / "job.json") as tmp:
            tmp.write_text(json.dumps(meta))
    if state is not None:
        phase = len(state.history)
        arrays = directory / f"state-{phase}.npz"
        with atomic_path(arrays) as tmp, open(tmp, "wb") as fh:
            np.savez(
                fh,
                rows=state.rows,
                removed=np.asarray(state.removed, dtype=np.int64),
                removed_phase=np.asarray(state.removed_phase, dtype=np.int64),
                removed_score=np.asarray(state.removed_score, dtype=np.float64),
                generator_state=state.generator_state,
            )
        doc = {
            "arrays": arrays.name,
            "history": [asdict(h) for h in state.history],
            "storage_phase": state.storage_phase,
            "stop_reason": state.stop_reason,
            "stop_message": state.stop_message,
        }
        with atomic_path(directory / "state.json") as tmp:
            tmp.write_text(json.dumps(doc))
        for old in directory.glob("state-*.npz"):
            if old.name != arrays.name:
                old.unlink(missing_ok=True)


def load_state(directory: Path) -> tuple[np.ndarray, FilterState | None, dict[str, Any]]:
    """(representation, state or None if no phase finished, job identity)."""
    phi = np.load(directory / "features.npy", mmap_mode="r", allow_pickle=False)
    meta = json.loads((directory / "job.json").read_text())
    doc_path = directory / "state.json"
    if not doc_path.exists():
        return phi, None, meta
    doc = json.loads(doc_path.read_text())
    with np.load(directory / doc["arrays"], allow_pickle=False) as z:
        state = FilterState(
            rows=z["rows"],
            removed=z["removed"].tolist(),
            removed_phase=z["removed_phase"].tolist(),
            removed_score=z["removed_score"].tolist(),
            history=[PhaseRecord(**h) for h in doc["history"]],
            generator_state=z["generator_state"],
            storage_phase=doc.get("storage_phase"),
            stop_reason=doc["stop_reason"],
            stop_message=doc["stop_message"],
        )
    return phi, state, meta
