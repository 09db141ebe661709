"""Distributed backends by name (``adversarial_filter(..., backend="ray")``), in the one
registry shape (:class:`~aflite._internal.registry.Registry`).

The algorithm looks a name up here and never imports the layers above it; a backend module
registers a factory with ``@register_backend("name")``, called with no arguments, or with
``address=`` where the run names its cluster (``--ray-address``); the built-in Ray backend is
listed in :mod:`aflite.plugins`.
"""

from __future__ import annotations

from typing import Any

from aflite._internal.registry import Entry, Registry

__all__ = ["BACKENDS", "register_backend", "make_backend"]

BACKENDS: Registry[Entry] = Registry("backend")
register_backend = BACKENDS.register
"""Register a factory ``factory(address=None) -> backend`` under a name
(``@register_backend("ray")``)."""


def make_backend(name: str, address: str | None = None) -> Any:
    """A new backend for ``name`` (on the cluster at ``address``, if given); a ValueError for
    a name nobody registered."""
    if name not in BACKENDS:
        known = ", ".join(repr(b) for b in BACKENDS)
        raise ValueError(f"unknown backend {name!r}: use None, {known} or a RayBackend")
    factory = BACKENDS[name].target
    return factory() if address is None else factory(address=address)
