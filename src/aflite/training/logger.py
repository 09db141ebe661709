"""Training dynamics from a plain PyTorch loop, written as allenai/cartography writes them:
``OUT/training_dynamics/dynamics_epoch_N.jsonl`` (N from 0), one line per training row,
``{"guid": ID, "logits_epoch_N": [...], "gold": K}``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DynamicsLogger"]


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor, on any device
        x = x.detach().float().cpu().numpy()
    return np.asarray(x)


def _plain_id(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:  # a 0-d tensor
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError(f"a row id must be an int or a string, got {v!r}")
    return v


class DynamicsLogger:
    """Collect every training row's logits during an epoch, write the epoch's file at its end.

    >>> import numpy as np, tempfile
    >>> out = tempfile.mkdtemp()
    >>> log = DynamicsLogger(out)
    >>> for epoch in range(2):
    ...     log.log(ids=[0, 1], logits=np.array([[2.0, -1.0], [0.5, 0.1]]), gold=[0, 1])
    ...     path = log.end_epoch()
    >>> path.name
    'dynamics_epoch_1.jsonl'

    ``log`` takes one batch (ids, (B, C) logits, (B,) gold class indices; numpy arrays,
    lists or torch tensors on any device); ``end_epoch`` writes
    ``output_dir/training_dynamics/dynamics_epoch_N.jsonl`` (rows in the order first
    logged) atomically and starts the next epoch. A row logged twice in an epoch keeps its
    last logits (cartography's pass records each row once; a repeated row would otherwise
    be two rows). Read the folder with ``aflite score --dynamics output_dir``.
    """

    def __init__(self, output_dir: str | Path, *, start_epoch: int = 0) -> None:
        self.folder = Path(output_dir) / "training_dynamics"
        self.epoch = int(start_epoch)
        self._rows: dict[Any, tuple[list[float], int]] = {}
        self._n_classes: int | None = None

    def log(self, ids: Sequence[Any], logits: Any, gold: Any) -> None:
        """Record one batch of training rows."""
        z = _numpy(logits).astype(np.float64)
        g = _numpy(gold).reshape(-1)
        ids = list(ids.tolist() if hasattr(ids, "tolist") else ids)
        if z.ndim != 2 or z.shape[0] != len(ids) or g.shape[0] != len(ids):
            raise ValueError(
                f"log: {len(ids)} ids, logits of shape {z.shape} and {g.shape[0]} gold labels "
                "do not describe one batch of (B, C) logits"
            )
        if self._n_classes is None:
            self._n_classes = z.shape[1]
        elif z.shape[1] != self._n_classes:
            raise ValueError(f"log: {z.shape[1]} logits per row, earlier {self._n_classes}")
        for i, v, k in zip(ids, z.tolist(), g.tolist()):
            if isinstance(k, float) and not k.is_integer():
                raise ValueError(f"log: gold {k!r} of row {i!r} is not a class index")
            k = int(k)
            if not 0 <= k < len(v):
                raise ValueError(f"log: gold {k} of row {i!r} is not below {len(v)}")
            self._rows[_plain_id(i)] = (v, k)

    def end_epoch(self) -> Path:
        """Write this epoch's file and start the next epoch; the path written."""
        from aflite._internal.atomic import atomic_path

        if not self._rows:
            raise ValueError(f"end_epoch: no rows were logged in epoch {self.epoch}")
        self.folder.mkdir(parents=True, exist_ok=True)
        key = f"logits_epoch_{self.epoch}"
        path = self.folder / f"dynamics_epoch_{self.epoch}.jsonl"
        lines = (
            json.dumps({"guid": i, key: v, "gold": k}) + "\n" for i, (v, k) in self._rows.items()
        )
        with atomic_path(path) as tmp:
            tmp.write_text("".join(lines), encoding="utf-8")
        self._rows = {}
        self.epoch += 1
        return path
