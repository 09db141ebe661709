"""Distributed backends by name (``adversarial_filter(..., backend="ray")``), in the one
registry shape (:class:`~aflite._internal.registry.Registry`).

The algorithm looks a name up here and never imports the layers above it; a backend module
registers a factory taking no arguments with ``@register_backend("name")``; the built-in Ray
backend is listed in :mod:`aflite.plugins`.
"""

from __future__ import annotations

from typing import Any

from aflite._internal.registry import Entry, Registry

__all__ = ["BACKENDS", "register_backend", "make_backend"]

BACKENDS: Registry[Entry] = Registry("backend")
register_backend = BACKENDS.register
"""Register a factory ``factory() -> backend`` under a name (``@register_backend("ray")``)."""


def make_backend(name: str) -> Any:
    """A new backend for ``name``; a ValueError for a name nobody registered."""
    if name not in BACKENDS:
        known = ", ".join(repr(b) for b in BACKENDS)
        raise ValueError(f"unknown backend {name!r}: use None, {known} or a RayBackend")
    return BACKENDS[name].target()
