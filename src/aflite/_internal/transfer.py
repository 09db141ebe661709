"""Every move of a phase's data between the host and the compute device, counted.

A phase on a GPU is fast only while its data stays there: at SNLI scale one (rows x
partitions) float32 matrix brought back each phase took as long as the phase's products.
Moves go through :func:`to_device` and :func:`to_host`, which count their bytes and calls
whatever the device (on a CPU the move costs nothing, but the count is what a GPU run would
move), so a test on any machine can hold a phase to O(rows) bytes (``tests/test_transfers.py``).
Host arrays go up through pinned memory without blocking the host, so reading the next chunk
of features overlaps the copy of the last.

The messages of a distributed backend are counted the same way (:func:`count_messages`):
bytes sent to its workers and received from them, so a test can hold a phase on a cluster to
O(steps * m * C * d + rows) bytes, never O(rows * d).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Moves", "count_messages", "counting", "payload_bytes", "to_device", "to_host"]


@dataclass
class Moves:
    """Bytes and calls in each direction."""

    up_bytes: int = 0
    up_calls: int = 0
    down_bytes: int = 0
    down_calls: int = 0
    sent_bytes: int = 0  # to a cluster's workers
    received_bytes: int = 0  # from them
    messages: int = 0  # calls of a worker


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


def count_messages(sent: int, received: int, calls: int) -> None:
    """Count a distributed backend's traffic: bytes sent to workers, received from them, and
    the calls that carried them."""
    if not _open:
        return
    with _lock:
        for m in _open:
            m.sent_bytes += sent
            m.received_bytes += received
            m.messages += calls


def payload_bytes(value: object) -> int:
    """The bytes of the arrays and tensors in ``value`` (nested in tuples, lists and dicts):
    what a message carries, headers left out."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(payload_bytes(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return sum(payload_bytes(v) for v in value)
    return 0


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
        t = torch.from_numpy(np.require(x, requirements=["C", "W"]))
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
