"""Per-phase checkpoints of a filtering run (JSON + npz + npy, no pickle) under one manifest.

The manifest (``manifest.json``) names the run it belongs to (job options, input fingerprint,
seed) and the SHA-256 of every checkpoint file. It is written last and atomically after every
change, so a kill at any moment leaves either the previous complete checkpoint or the new one:
files the manifest does not list are ignored, and a resume trusts nothing the manifest does not
vouch for.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.algorithm import FilterState, PhaseRecord
from aflite.errors import DataError

__all__ = ["Checkpoint"]

MANIFEST = "manifest.json"
# how the state after a phase continues: 2 draws the partitions on the CPU, in the rows'
# canonical order, with the model family's own block size; a checkpoint of another format
# cannot be continued into the same result; 3: the exact family's default m is resolved from
# the rows (fewer partitions past 50,000 rows), so a run of format 2 may have used another m
FORMAT = 3
FEATURES = "features.npy"
# what a run that cannot resume does instead: without --resume, the folder's checkpoint is an
# earlier run that only --overwrite replaces
START_OVER = "pass --overwrite instead of --resume to start over"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _save(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, array, allow_pickle=False)


def _savez(path: Path, arrays: dict[str, Any]) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _remove(path: Path) -> None:
    """Delete one checkpoint file (a separate function so tests can inject kills here)."""
    path.unlink(missing_ok=True)


class Checkpoint:
    """The checkpoint folder of one run, identified by ``identity`` (a JSON-able dict).

    ``start(phi)`` clears whatever was there and records the representation; ``save(state)``
    records the state after a phase; ``load()`` returns what a resume may continue from, or
    None when nothing valid is there, and raises a one-line :class:`DataError` when the folder
    holds another run's checkpoint or a damaged one.
    """

    def __init__(
        self,
        directory: str | Path,
        identity: dict[str, Any],
        upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.identity = json.loads(json.dumps(identity, default=str))
        # an identity written by an earlier version, in this version's terms (renamed options)
        self._upgrade = upgrade
        self._files: dict[str, str] = {}

    # -- writing ---------------------------------------------------------------------------
    def start(self, phi: np.ndarray) -> None:
        """A fresh run: remove any earlier checkpoint, then record the representation."""
        self.clear()
        self.directory.mkdir(parents=True, exist_ok=True)
        array = np.ascontiguousarray(phi, dtype=np.float32)
        self._files = {FEATURES: self._write(FEATURES, lambda tmp: _save(tmp, array))}
        self._write_manifest(phase=None)

    def save(self, state: FilterState) -> None:
        """Record the state after a phase; older state files go once the manifest moved on."""
        phase = len(state.history)
        arrays = {
            "rows": state.rows,
            "removed": np.asarray(state.removed, dtype=np.int64),
            "removed_phase": np.asarray(state.removed_phase, dtype=np.int64),
            "removed_score": np.asarray(state.removed_score, dtype=np.float64),
            "removed_se": np.asarray(state.removed_se, dtype=np.float64),
            "generator_state": state.generator_state,
            **({} if state.last_scores is None else {"last_scores": state.last_scores}),
            **({} if state.blocks_state is None else {"blocks_state": state.blocks_state}),
            **(
                {}
                if state.survived_score is None
                else {"survived_score": state.survived_score, "survived_se": state.survived_se}
            ),
        }
        doc = json.dumps(
            {
                "history": [asdict(h) for h in state.history],
                "storage_phase": state.storage_phase,
                "blocks_phase": state.blocks_phase,
                "stop_reason": state.stop_reason,
                "stop_message": state.stop_message,
            }
        )
        npz, meta = f"state-{phase}.npz", f"state-{phase}.json"
        files = {FEATURES: self._files.get(FEATURES) or _sha256(self.directory / FEATURES)}
        files[npz] = self._write(npz, lambda tmp: _savez(tmp, arrays))
        files[meta] = self._write(meta, lambda tmp: tmp.write_text(doc))
        self._files = files
        self._write_manifest(phase=phase)
        for old in self.directory.glob("state-*"):
            if old.name not in files:
                _remove(old)

    def features(self) -> np.ndarray:
        """The recorded representation, memory-mapped (read-only)."""
        return np.load(self.directory / FEATURES, mmap_mode="r", allow_pickle=False)

    def clear(self) -> None:
        """Remove the checkpoint; the manifest goes first, so a kill half-way through leaves
        nothing a resume would trust."""
        _remove(self.directory / MANIFEST)
        shutil.rmtree(self.directory, ignore_errors=True)

    def _write_manifest(self, *, phase: int | None) -> None:
        doc = {"identity": self.identity, "phase": phase, "files": self._files, "format": FORMAT}
        self._write(MANIFEST, lambda tmp: tmp.write_text(json.dumps(doc, indent=1)), digest=False)

    def _write(self, name: str, write: Callable[[Path], Any], *, digest: bool = True) -> str:
        """One file of the checkpoint, written beside its target and renamed into place
        (``write(tmp)``), and its SHA-256 as written ("" with ``digest`` off)."""
        path = self.directory / name
        with atomic_path(path) as tmp:
            write(tmp)
        return _sha256(path) if digest else ""

    # -- reading ---------------------------------------------------------------------------
    def stored_identity(self) -> Any:
        """The identity the checkpoint here was written under (read through ``upgrade``), or
        None where there is none or its manifest cannot be read (:meth:`load` says so)."""
        try:
            identity = json.loads((self.directory / MANIFEST).read_text())["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if self._upgrade is not None and isinstance(identity, dict):
            identity = self._upgrade(identity)
        return identity

    def load(self) -> tuple[np.ndarray, FilterState | None] | None:
        """(representation, state or None before the first phase), or None if no checkpoint."""
        where = self.directory / MANIFEST
        if not where.exists():
            return None
        try:
            doc = json.loads(where.read_text())
            identity, files, phase = doc["identity"], dict(doc["files"]), doc["phase"]
        except (OSError, ValueError, KeyError, TypeError):
            raise DataError(f"{where}: damaged checkpoint manifest; {START_OVER}") from None
        _check_manifest(where, files, phase)
        if doc.get("format", 1) != FORMAT:
            raise DataError(
                f"{self.directory}: the checkpoint was written by an earlier version of aflite, "
                f"whose partitions a resumed run could not continue; {START_OVER}"
            )
        if self._upgrade is not None:
            identity = self._upgrade(identity)
        if identity != self.identity:
            raise DataError(
                f"{self.directory}: the checkpoint belongs to another input or other options; "
                + START_OVER
            )
        for name, digest in files.items():
            path = self.directory / name
            if not path.is_file() or _sha256(path) != digest:
                raise DataError(
                    f"{path}: checkpoint file is missing or does not match its manifest; "
                    + START_OVER
                )
        phi = np.load(self.directory / FEATURES, mmap_mode="r", allow_pickle=False)
        self._files = files
        if phase is None:
            return phi, None
        try:
            meta = json.loads((self.directory / f"state-{phase}.json").read_text())
            with np.load(self.directory / f"state-{phase}.npz", allow_pickle=False) as z:
                state = FilterState(
                    rows=z["rows"],
                    removed=z["removed"].tolist(),
                    removed_phase=z["removed_phase"].tolist(),
                    removed_score=z["removed_score"].tolist(),
                    removed_se=z["removed_se"].tolist() if "removed_se" in z.files else [],
                    survived_score=z["survived_score"] if "survived_score" in z.files else None,
                    survived_se=z["survived_se"] if "survived_se" in z.files else None,
                    history=[PhaseRecord(**h) for h in meta["history"]],
                    generator_state=z["generator_state"],
                    storage_phase=meta.get("storage_phase"),
                    stop_reason=meta["stop_reason"],
                    stop_message=meta["stop_message"],
                    last_scores=z["last_scores"] if "last_scores" in z.files else None,
                    blocks_state=z["blocks_state"] if "blocks_state" in z.files else None,
                    blocks_phase=meta.get("blocks_phase"),
                )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"{self.directory}: damaged checkpoint state ({e})") from None
        return phi, state


def _check_manifest(where: Path, files: dict[Any, Any], phase: Any) -> None:
    """A manifest names only the files a checkpoint writes, by plain names inside its folder:
    a phase that is a whole number and ``features.npy`` plus that phase's state files. A
    resume reads nothing else (no ``../`` escapes, no absolute paths)."""
    if phase is not None and (isinstance(phase, bool) or not isinstance(phase, int) or phase < 0):
        raise DataError(
            f"{where}: damaged checkpoint manifest (phase {phase!r} is not a phase number); "
            + START_OVER
        )
    allowed = {FEATURES} | (
        set() if phase is None else {f"state-{phase}.npz", f"state-{phase}.json"}
    )
    for name, digest in files.items():
        if name not in allowed or not isinstance(digest, str):
            raise DataError(
                f"{where}: damaged checkpoint manifest (it names {str(name)!r}, not a file of "
                f"this checkpoint); {START_OVER}"
            )
    if set(files) != allowed:
        missing = ", ".join(sorted(allowed - set(files)))
        raise DataError(
            f"{where}: damaged checkpoint manifest (it does not list {missing}); " + START_OVER
        )
