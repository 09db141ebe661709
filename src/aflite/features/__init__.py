"""Feature representations Phi(X): word n-grams, sentence encoders, pre-computed matrices,
the warm-up representation, and an on-disk embedding cache."""

from aflite.features.build import FeatureSpec, build_features, parse_feature_spec
from aflite.features.encoders import encode_texts, pair_features
from aflite.features.ngrams import ngram_features
from aflite.features.precomputed import load_precomputed
from aflite.features.registry import FEATURE_KINDS, FeatureKind, register_feature_kind
from aflite.features.warmup import split_warmup, warmup_representation

__all__ = [
    "FEATURE_KINDS",
    "FeatureKind",
    "register_feature_kind",
    "FeatureSpec",
    "build_features",
    "encode_texts",
    "load_precomputed",
    "ngram_features",
    "pair_features",
    "parse_feature_spec",
    "split_warmup",
    "warmup_representation",
]
