"""Turn a ``--features`` spec into a feature matrix for the rows of a data set, through the
registry of feature kinds (:mod:`aflite.features.registry`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.features.kinds import MAX_DENSE_NGRAMS
from aflite.features.registry import FEATURE_KINDS, FeatureKind

__all__ = [
    "FeatureSpec",
    "parse_feature_spec",
    "check_feature_source",
    "build_features",
    "FEATURE_KINDS",
    "MAX_DENSE_NGRAMS",
]


@dataclass(frozen=True)
class FeatureSpec:
    """``kind`` plus its argument: a model name/path, a file, or n-gram options."""

    kind: str
    arg: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind

    @property
    def entry(self) -> FeatureKind:
        """The registered kind, with its properties and hooks."""
        return FEATURE_KINDS.lookup(self.kind)

    @property
    def needs_text(self) -> bool:
        kind = FEATURE_KINDS.get(self.kind)
        return kind is not None and kind.needs_text


def parse_feature_spec(spec: str) -> FeatureSpec:
    """``ngrams``, ``ngrams:svd=256``, ``sentence-transformers:NAME_OR_PATH``,
    ``precomputed:FILE[#KEY]``, ``warmup-cnn``, or any registered kind."""
    name, _, arg = spec.partition(":")
    entry = FEATURE_KINDS.lookup(name, shown=spec)
    kind = entry.name
    if entry.needs_arg and not arg:
        raise DataError(f"features '{spec}' needs an argument, e.g. {kind}:NAME")
    if entry.check_arg is not None and arg:
        entry.check_arg(spec, arg)
    return FeatureSpec(kind, arg)


def check_feature_source(spec: str) -> FeatureSpec:
    """``spec`` parsed, and what its argument names checked on this machine (a model that
    can load here): a one-line DataError in well under a second, before the data is read and
    before torch is imported, rather than after both."""
    parsed = parse_feature_spec(spec)
    check = parsed.entry.check_source
    if check is not None and parsed.arg:
        check(parsed.arg)
    return parsed


def build_features(
    spec: FeatureSpec,
    texts: dict[str, Sequence[str]] | None,
    *,
    n_rows: int,
    ids: Sequence[Any] | None = None,
    fingerprint: str = "",
    cache_dir: str | None = None,
    device: str = "cpu",
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    encode: Callable[..., np.ndarray] | None = None,
) -> tuple[np.ndarray, bool]:
    """Feature matrix for all rows, and whether it came from the cache.

    With several text fields, n-grams get one vocabulary per field, and sentence encoders
    embed each field and combine two fields as ``[u, v, |u-v|, u*v]`` (more are concatenated).
    ``encode(texts, model, device=..., progress=...)`` replaces the in-process encoder (e.g.
    Ray Data); the cache and the combining rule stay the same.
    """
    entry = FEATURE_KINDS.lookup(spec.kind)
    if entry.needs_text and texts is None:
        raise DataError(f"features '{spec}' need text fields")
    return entry.target(
        spec,
        texts,
        n_rows=n_rows,
        ids=ids,
        fingerprint=fingerprint,
        cache_dir=cache_dir,
        device=device,
        seed=seed,
        progress=progress,
        encode=encode,
    )
