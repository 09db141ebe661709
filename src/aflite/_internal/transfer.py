"""Every move of a phase's data between the host and the compute device, counted.

A phase on a GPU is fast only while its data stays there: at SNLI scale one (rows x
partitions) float32 matrix brought back each phase took as long as the phase's products.
Moves go through :func:`to_device` and :func:`to_host`, which count their bytes and calls
whatever the device (on a CPU the move costs nothing, but the count is what a GPU run would
move), so a test on any machine can hold a phase to O(rows) bytes (``tests/test_transfers.py``).
Host arrays go up through pinned memory without blocking the host, so reading the next chunk
of features overlaps the copy of the last.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Moves", "counting", "to_device", "to_host"]


@dataclass
class Moves:
    """Bytes and calls in each direction."""

    up_bytes: int = 0
    up_calls: int = 0
    down_bytes: int = 0
    down_calls: int = 0


_lock = threading.Lock()
_open: list[Moves] = []


@contextlib.contextmanager
def counting() -> Iterator[Moves]:
    """Count the moves made (by any thread) while the block is open."""
    moves = Moves()
    with _lock:
        _open.append(moves)
    try:
        yield moves
    finally:
        with _lock:
            _open.remove(moves)


def _count(up: bool, nbytes: int) -> None:
    if not _open:
        return
    with _lock:
        for m in _open:
            if up:
                m.up_bytes += nbytes
                m.up_calls += 1
            else:
                m.down_bytes += nbytes
                m.down_calls += 1


def to_device(
    x: np.ndarray | torch.Tensor, device: torch.device, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """``x`` (a host array or tensor) on ``device``; a tensor already there is returned as is."""
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu":  # already on a device: nothing crosses
            t = x.to(device)
            return t if dtype is None else t.to(dtype)
        t = x
    else:
        t = torch.from_numpy(np.require(x, requirements="C"))
    _count(True, t.numel() * t.element_size())
    if device.type == "cuda":
        # pinned: the copy runs from the host's memory without a staging copy by the driver,
        # and without blocking the host (the pinned block is kept until the copy is done)
        t = t.pin_memory().to(device, non_blocking=True)
    else:
        t = t.to(device)
    return t if dtype is None else t.to(dtype)


def to_host(t: torch.Tensor) -> np.ndarray:
    """A device tensor's values as a host array (a view of a CPU tensor, no copy)."""
    _count(False, t.numel() * t.element_size())
    return t.detach().cpu().numpy()
