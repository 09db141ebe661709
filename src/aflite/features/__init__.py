"""Feature representations Phi(X): word n-grams, sentence encoders, pre-computed matrices,
the warm-up representation, and an on-disk embedding cache."""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports

_EXPORTS = {
    "FEATURE_KINDS": "aflite.features.registry",
    "FeatureKind": "aflite.features.registry",
    "register_feature_kind": "aflite.features.registry",
    "FeatureSpec": "aflite.features.build",
    "build_features": "aflite.features.build",
    "encode_texts": "aflite.features.encoders",
    "load_precomputed": "aflite.features.precomputed",
    "ngram_features": "aflite.features.ngrams",
    "pair_features": "aflite.features.encoders",
    "parse_feature_spec": "aflite.features.build",
    "split_warmup": "aflite.features.warmup",
    "warmup_representation": "aflite.features.warmup",
}
__all__ = list(_EXPORTS)
# imported on first use: the command line reads the registry without loading torch
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
