"""Named sets of the filter's options: ``--preset NAME`` on the command line, ``preset=`` in
Python. Options given explicitly override the preset's. The presets are instances of
:class:`aflite.FilterOptions` (:data:`aflite.algorithm.loop.options.PRESETS` says why each value);
``practical`` is what ``aflite filter`` and :func:`aflite.filter_dataset` start from,
``paper`` is Algorithm 1 as published."""

from __future__ import annotations

from typing import Any

from aflite.algorithm import PRESETS, FilterOptions
from aflite.errors import DataError

__all__ = ["PRESETS", "PRESET_OPTIONS", "preset"]

# the options a preset sets: the filter's own, not where the data or the outputs are
PRESET_OPTIONS = tuple(FilterOptions.names())


def preset(name: str | None, *, flag: str = "preset") -> dict[str, Any]:
    """The options of preset ``name`` ({} for None); an unknown name is a one-line DataError
    with a did-you-mean."""
    if name is None:
        return {}
    if name not in PRESETS:
        from aflite._internal.text import did_you_mean

        raise DataError(
            f"{flag}: unknown preset '{name}': choose one of {', '.join(PRESETS)}"
            f"{did_you_mean(name, list(PRESETS))}"
        )
    return PRESETS[name].as_options()
