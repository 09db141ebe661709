"""The filter's defaults for the command line, the job API, ``compare`` and the demo: the
``practical`` preset (:mod:`aflite.config.presets` says why each value), read from
:class:`aflite.config.FilterConfig`. :func:`aflite.filter` itself keeps Algorithm 1 as
published (the ``paper`` preset)."""

from __future__ import annotations

from typing import Any

from aflite.config.presets import PRESETS

__all__ = ["FILTER_DEFAULTS", "overrides"]

FILTER_DEFAULTS: dict[str, Any] = dict(PRESETS["practical"])


def overrides(values: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` that differ from :data:`FILTER_DEFAULTS`."""
    return {k: v for k, v in values.items() if k in FILTER_DEFAULTS and FILTER_DEFAULTS[k] != v}
