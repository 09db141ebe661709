"""The built-in feature kinds: word n-grams, sentence-transformers embeddings, pre-computed
matrices and the image warm-up CNN. A new kind is one function registered the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.features.cache import cached
from aflite.features.choices import choice_encodings, choice_ngrams, choice_precomputed
from aflite.features.encoders import check_encoder_installed, combine_fields, encode_texts
from aflite.features.locate import check_model
from aflite.features.ngrams import ngram_features
from aflite.features.precomputed import load_precomputed
from aflite.features.registry import register_feature_kind

__all__ = ["MAX_DENSE_NGRAMS", "check_ngram_options"]

# Dense n-gram features beyond this width would need a d x d preconditioner of over 512 MiB
# per field and an N x d matrix in memory; wider vocabularies go through svd=N on the sparse
# matrix instead.
MAX_DENSE_NGRAMS = 8192


def check_ngram_options(spec: str, arg: str) -> None:
    """``svd=N,max_features=N,min_df=N,hash=N``; dense widths over MAX_DENSE_NGRAMS refused."""
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


def _ngram_options(spec: Any) -> dict[str, int]:
    return {k: int(v) for k, v in (o.split("=") for o in spec.arg.split(",") if o)}


def _describe_ngrams(spec: Any) -> dict[str, Any]:
    """The n-gram settings as run (the spec's, with the defaults it leaves out) and the
    scikit-learn whose tokenizer and TF-IDF made them."""
    import sklearn

    opts = _ngram_options(spec)
    return {
        "max_features": opts.get("max_features", 1024),
        "min_df": opts.get("min_df", 2),
        "svd": opts.get("svd"),
        "hash": opts.get("hash"),
        "scikit-learn": sklearn.__version__,
    }


def _fit_ngrams(spec: Any, texts: dict[str, Sequence[str]], seed: int) -> Any:
    """The vocabulary of ``texts`` (one per field), to transform other sets' texts with."""
    from aflite.features.ngrams import NgramVectorizer

    opts = _ngram_options(spec)
    vec = NgramVectorizer(
        max_features=opts.get("max_features", 1024),
        min_df=opts.get("min_df", 2),
        svd=opts.get("svd"),
        hashed=opts.get("hash"),
        seed=seed,
    )
    return vec.fit([texts[f] for f in texts])


@register_feature_kind(
    "ngrams",
    needs_text=True,
    check_arg=check_ngram_options,
    syntax="ngrams[:svd=N,hash=N]",
    description="word n-grams of each text field",
    fit=_fit_ngrams,
    choices=choice_ngrams,
    describe=_describe_ngrams,
)
def _ngrams(spec: Any, texts: dict[str, Sequence[str]], *, seed: int = 0, **_: Any):
    opts = _ngram_options(spec)
    x = ngram_features(
        [texts[f] for f in texts],
        max_features=opts.get("max_features", 1024),
        min_df=opts.get("min_df", 2),
        svd=opts.get("svd"),
        hashed=opts.get("hash"),
        seed=seed,
    )
    return x, False  # fast enough that caching buys nothing


def _finetune_encoder(
    spec: Any,
    texts: dict[str, Sequence[str]],
    codes: np.ndarray,
    warm_rows: np.ndarray,
    *,
    seed: int = 0,
    device: str = "cpu",
) -> Callable[[dict[str, Sequence[str]]], np.ndarray]:
    """The encoder fine-tuned with a softmax head on the warm-up rows, as ``embed(texts)``."""
    from aflite.features.finetune import embed_with, finetune_encoder

    st = finetune_encoder(spec.arg, texts, codes, warm_rows, seed=seed, device=device)
    return lambda t: embed_with(st, t, device)


def _describe_encoder(spec: Any) -> dict[str, Any]:
    """The model by name and by content (SHA-256 of its files: the same name may hold other
    weights elsewhere) and the sentence-transformers that ran it."""
    from importlib.metadata import PackageNotFoundError, version

    from aflite.features.encoders import model_fingerprint

    try:
        library = version("sentence-transformers")
    except PackageNotFoundError:
        library = None
    return {
        "model": spec.arg,
        "model_content": model_fingerprint(spec.arg),
        "sentence-transformers": library,
    }


@register_feature_kind(
    "sentence-transformers",
    needs_text=True,
    needs_arg=True,
    usage="sentence-transformers:MODEL",
    check_arg=check_encoder_installed,
    check_source=check_model,
    aliases=("st",),
    description="embeddings of a sentence-transformers model (cached)",
    finetune=_finetune_encoder,
    choices=choice_encodings,
    describe=_describe_encoder,
)
def _sentence_transformers(
    spec: Any,
    texts: dict[str, Sequence[str]],
    *,
    n_rows: int,
    fingerprint: str = "",
    cache_dir: str | None = None,
    device: str = "cpu",
    progress: Callable[[int, int], None] | None = None,
    encode: Callable[..., np.ndarray] | None = None,
    **_: Any,
):
    fields = list(texts)
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

    from aflite.features.encoders import model_fingerprint

    # the model's content, not its name: a model changed at the same path gets new embeddings
    key = [fingerprint, str(spec), model_fingerprint(spec.arg), ",".join(fields)]
    return cached(key, embed, cache_dir, n_rows=n_rows)


@register_feature_kind(
    "precomputed",
    needs_arg=True,
    usage="precomputed:FILE",
    syntax="precomputed:FILE[#KEY]",
    description="a pre-computed matrix (.npy, .npz, .safetensors, Parquet)",
    by_id=True,
    choices=choice_precomputed,
    describe=lambda spec: {"file_content": _file_digest(spec.arg)},
)
def _precomputed(spec: Any, texts: Any, *, n_rows: int, ids: Any = None, **_: Any):
    return load_precomputed(spec.arg, n_rows=n_rows, ids=ids), False


def _file_digest(arg: str) -> str | None:
    """SHA-256 (16 hex digits) of a feature file's bytes; None where it is not there."""
    from pathlib import Path

    from aflite.io.base import hash_path

    path = Path(arg.partition("#")[0])
    return hash_path(path) if path.is_file() else None


def _learn_cnn(
    images: np.ndarray,
    codes: np.ndarray,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> np.ndarray:
    """Phi of the rows ``rest``: the hidden layer of a small CNN trained on the warm-up rows."""
    from aflite._internal.progress import progress_bar
    from aflite.features.cnn import warmup_cnn_representation

    with progress_bar("warm-up CNN", enabled=progress) as bar:
        return warmup_cnn_representation(
            images, codes, warm_rows, rest, seed=seed, device=device, progress=bar
        )


@register_feature_kind(
    "warmup-cnn",
    needs_images=True,
    usage="warmup-cnn (images)",
    description="a small CNN trained on the warm-up images",
    learn=_learn_cnn,
    default_warmup_fraction=0.2,  # the paper's ImageNet setting
)
def _warmup_cnn(spec: Any, texts: Any, **_: Any):
    # Phi comes from a CNN trained on a job's warm-up images (aflite.jobs), not from the rows.
    raise DataError("warmup-cnn features are learned in a filter job from its warm-up images")
