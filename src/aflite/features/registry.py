"""The registry of feature kinds: the ``KIND`` of ``--features KIND[:ARG]``.

A kind is a builder ``build(spec, texts, *, n_rows, ids, fingerprint, cache_dir, device, seed,
progress, encode) -> (matrix, from_cache)`` registered with :func:`register_feature_kind`.
The built-in kinds are in :mod:`aflite.features.kinds`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FeatureKind",
    "FEATURE_KINDS",
    "FEATURE_ALIASES",
    "features_help",
    "register_feature_kind",
]


@dataclass(frozen=True)
class FeatureKind:
    """A registered kind: its builder and what it needs from a job."""

    name: str
    build: Callable[..., Any]
    needs_text: bool = False
    needs_arg: bool = False
    needs_images: bool = False
    check_arg: Callable[[str, str], None] | None = None
    usage: str = ""
    syntax: str = ""


FEATURE_KINDS: dict[str, FeatureKind] = {}
FEATURE_ALIASES: dict[str, str] = {}


def register_feature_kind(
    name: str,
    *,
    needs_text: bool = False,
    needs_arg: bool = False,
    needs_images: bool = False,
    check_arg: Callable[[str, str], None] | None = None,
    usage: str | None = None,
    syntax: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a builder under ``name``. ``check_arg(spec, arg)`` raises a DataError for a bad
    argument before anything is computed; ``usage`` is how errors name the kind (e.g.
    ``precomputed:FILE``), ``syntax`` how ``--help`` shows it."""

    def deco(build: Callable[..., Any]) -> Callable[..., Any]:
        FEATURE_KINDS[name] = FeatureKind(
            name,
            build,
            needs_text=needs_text,
            needs_arg=needs_arg,
            needs_images=needs_images,
            check_arg=check_arg,
            usage=usage or name,
            syntax=syntax or usage or name,
        )
        for alias in aliases:
            FEATURE_ALIASES[alias] = name
        return build

    return deco


def features_help() -> str:
    """The ``--features`` help line: every registered kind's syntax."""
    return " | ".join(k.syntax for k in FEATURE_KINDS.values()) + "."
