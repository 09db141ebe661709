"""Turn a ``--features`` spec into a feature matrix for the rows of a data set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.features.cache import cached
from aflite.features.encoders import combine_fields, encode_texts
from aflite.features.ngrams import ngram_features
from aflite.features.precomputed import load_precomputed

__all__ = ["FeatureSpec", "parse_feature_spec", "build_features", "FEATURE_KINDS"]

FEATURE_KINDS = ("ngrams", "sentence-transformers", "precomputed", "warmup-cnn")


@dataclass(frozen=True)
class FeatureSpec:
    """``kind`` plus its argument: a model name/path, a file, or n-gram options."""

    kind: str
    arg: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind

    @property
    def needs_text(self) -> bool:
        return self.kind in ("ngrams", "sentence-transformers")


# Dense n-gram features beyond this width would need a d x d preconditioner of over 512 MiB
# per field and an N x d matrix in memory; wider vocabularies go through svd=N on the sparse
# matrix instead.
MAX_DENSE_NGRAMS = 8192


def parse_feature_spec(spec: str) -> FeatureSpec:
    """``ngrams``, ``ngrams:svd=256``, ``sentence-transformers:NAME_OR_PATH``,
    ``precomputed:FILE[#KEY]``."""
    kind, _, arg = spec.partition(":")
    if kind == "st":
        kind = "sentence-transformers"
    if kind not in FEATURE_KINDS:
        raise DataError(
            f"unknown features '{spec}': use ngrams, sentence-transformers:MODEL, "
            "precomputed:FILE or warmup-cnn (images)"
        )
    if kind in ("sentence-transformers", "precomputed") and not arg:
        raise DataError(f"features '{spec}' needs an argument, e.g. {kind}:NAME")
    if kind == "ngrams" and arg:
        for opt in arg.split(","):
            name, _, value = opt.partition("=")
            if name not in ("svd", "max_features", "min_df", "hash") or not value.isdigit():
                raise DataError(
                    f"unknown n-gram option '{opt}' (svd=N, max_features=N, min_df=N, hash=N)"
                )
        opts = dict(o.split("=") for o in arg.split(","))
        width = max(int(opts.get("hash", 0)), int(opts.get("max_features", 0)))
        if width > MAX_DENSE_NGRAMS and "svd" not in opts:
            raise DataError(
                f"features '{spec}': {width} dense n-gram columns per field is over the limit of "
                f"{MAX_DENSE_NGRAMS} (the solver holds d x d matrices); add svd=N to reduce the "
                "sparse n-grams first, e.g. ngrams:hash=1048576,svd=512"
            )
    return FeatureSpec(kind, arg)


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
    if spec.kind == "precomputed":
        return load_precomputed(spec.arg, n_rows=n_rows, ids=ids), False
    assert texts is not None
    fields = list(texts)
    if spec.kind == "ngrams":
        opts = {k: int(v) for k, v in (o.split("=") for o in spec.arg.split(",") if o)}

        def compute():
            return ngram_features(
                [texts[f] for f in fields],
                max_features=opts.get("max_features", 1024),
                min_df=opts.get("min_df", 2),
                svd=opts.get("svd"),
                hashed=opts.get("hash"),
                seed=seed,
            )

        return compute(), False  # fast enough that caching buys nothing

    encode = encode or encode_texts

    def embed():
        total = n_rows * len(fields)
        done = 0
        parts = []
        for f in fields:

            def step(k, base=done):
                if progress is not None:
                    progress(base + k, total)

            parts.append(encode(texts[f], spec.arg, device=device, progress=step))
            done += n_rows
        return combine_fields(parts)

    return cached([fingerprint, str(spec), ",".join(fields)], embed, cache_dir)
