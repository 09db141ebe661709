"""Device and random-generator set-up shared by the algorithm and the feature code."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["resolve_device", "make_generator"]


def resolve_device(device: Any = "auto") -> torch.device:
    """``"auto"`` picks CUDA when available, else CPU. Unknown or absent devices raise ValueError."""
    if isinstance(device, torch.device):
        dev = device
    elif device is None or device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(str(device))
        except RuntimeError:
            raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu' or 'cuda'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was requested but CUDA is not available here")
    return dev


def make_generator(seed: Any, device: torch.device) -> torch.Generator:
    """One generator for a whole run. ``seed`` is an int, a numpy Generator or None (random)."""
    if seed is None:
        value = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
    elif isinstance(seed, np.random.Generator):
        value = int(seed.integers(0, 2**63 - 1))
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        value = int(seed)
    else:
        raise ValueError(f"seed must be an int, a numpy Generator or None, got {seed!r}")
    gen = torch.Generator(device=device)
    gen.manual_seed(value)
    return gen
