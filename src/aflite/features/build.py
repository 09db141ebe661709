"""Turn a ``--features`` spec into a feature matrix for the rows of a data set, through the
registry of feature kinds (:mod:`aflite.features.registry`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from aflite.errors import DataError
from aflite.features.kinds import MAX_DENSE_NGRAMS
from aflite.features.registry import FEATURE_KINDS, FeatureKind

if TYPE_CHECKING:
    from aflite.io.labelled import LabelledData

__all__ = [
    "FeatureSpec",
    "parse_feature_spec",
    "check_feature_source",
    "check_item_features",
    "build_features",
    "check_representation",
    "represent_rows",
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


def represent_rows(
    spec: FeatureSpec,
    data: LabelledData,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    *,
    named: str = "features",
    context: str = "joint",
    finetune: bool = False,
    seed: int = 0,
    device: str = "cpu",
    cache_dir: str | None = None,
    progress: bool = False,
    encode: Callable[..., np.ndarray] | None = None,
) -> np.ndarray:
    """Phi of ``data``'s ``rest`` rows for the feature ``spec``, through the kind's own hooks
    (a model learned on the ``warm_rows``, the encoder fine-tuned on them with ``finetune``,
    its choices for multiple-choice items) or its builder, optionally through a warm-up
    model; checked as the filter checks it, a bad matrix a one-line DataError starting with
    ``named`` (the option and its value). Rows outside ``rest`` (the warm-up rows, those a
    reviewer dropped) are not in it."""
    from aflite._internal.progress import progress_bar

    kind = spec.entry
    fingerprint = data.table.fingerprint() if cache_dir else ""
    codes = np.unique(data.labels, return_inverse=True)[1]
    if data.choices is None and kind.learn is not None:  # learned on the warm-up rows (CNN)
        images = data.table.images  # type: ignore[attr-defined]
        phi = kind.learn(
            images, codes, warm_rows, rest, seed=seed, device=device, progress=progress
        )
    elif data.choices is None and finetune:  # checked: the kind has a fine-tune hook
        embed = kind.finetune(spec, data.texts, codes, warm_rows, seed=seed, device=device)
        phi = embed({f: [v[i] for i in rest] for f, v in (data.texts or {}).items()})
    elif data.choices is None:
        with progress_bar("embedding", enabled=progress) as bar:
            base, _ = build_features(
                spec,
                data.texts,
                n_rows=len(data),
                ids=data.ids,
                fingerprint=fingerprint,
                cache_dir=cache_dir,
                device=device,
                seed=seed,
                progress=bar,
                encode=encode,
            )
        base = np.asarray(base)
        if len(warm_rows):
            from aflite.features.warmup import warmup_representation

            phi = warmup_representation(base, codes, warm_rows, rest, seed=seed, device=device)
        else:
            # rows a reviewer dropped are not filtered: Phi holds the rest only
            phi = base if len(rest) == len(base) else base[rest]
    else:
        from aflite.features.choices import choice_features

        with progress_bar("embedding", enabled=progress) as bar:
            phi = choice_features(
                spec,
                data.choices,
                context=context,
                seed=seed,
                device=device,
                progress=bar,
                fingerprint=fingerprint,
                cache_dir=cache_dir,
            )
        phi = phi if len(rest) == len(phi) else phi[rest]
    check_representation(phi, named)
    return phi


def check_representation(phi: Any, named: str) -> None:
    """The algorithm's checks of Phi (a real, non-empty, finite matrix) as a one-line
    DataError starting with ``named`` (the option and its value)."""
    from aflite.algorithm import check_features
    from aflite.algorithm.numerics.item_store import check_choices

    try:
        if np.ndim(phi) == 3:  # multiple-choice items: (N, K, d), padded choices NaN rows
            check_choices(phi, np.zeros(len(phi), dtype=np.int64))
        else:
            check_features(phi)
    except ValueError as e:
        raise DataError(f"{named}: {e}") from None


def check_item_features(features: str) -> None:
    """Refuse a feature kind that cannot represent each choice of an item (``features``: a
    spec already checked on its own), a ConfigError naming ``features``."""
    from aflite._internal.options import ConfigError

    if parse_feature_spec(features).entry.choices is None:
        names = ", ".join(k.usage for k in FEATURE_KINDS.values() if k.choices is not None)
        raise ConfigError("features", f"multiple-choice items take {names} features")
