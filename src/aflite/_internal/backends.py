"""Distributed backends by name (``adversarial_filter(..., backend="ray")``).

The algorithm looks a name up here and never imports the layers above it; a backend package
registers its factory, and :mod:`aflite` registers the built-in Ray backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["BACKENDS", "register_backend", "make_backend"]

BACKENDS: dict[str, Callable[[], Any]] = {}


def register_backend(name: str, factory: Callable[[], Any]) -> None:
    """Make ``backend=name`` start a backend with ``factory()`` (no arguments)."""
    BACKENDS[name] = factory


def make_backend(name: str) -> Any:
    """A new backend for ``name``; ValueError for a name nobody registered."""
    factory = BACKENDS.get(name)
    if factory is None:
        known = ", ".join(repr(b) for b in BACKENDS)
        raise ValueError(f"unknown backend {name!r}: use None, {known} or a RayBackend")
    return factory()
