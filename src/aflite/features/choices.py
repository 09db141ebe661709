"""Representations of multiple-choice items: one vector per choice, an (N, K, d) array with
NaN rows for the choices a shorter item lacks (:func:`aflite.algorithm.numerics.item_store.pad_choices`).

``context`` says what each choice's vector sees: ``joint`` the context and the choice as one
text (the filled sentence where the context has a blank), ``apart`` the context and the choice
encoded apart and combined (sentence encoders: ``[u, v, |u-v|, u*v]``; n-grams: one vocabulary
each, side by side), ``none`` the choice alone (a choices-only baseline). N-grams are fit on
all choices' texts of all items, so every choice is represented in the same vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.io.choices import CHOICE_CONTEXT, Choices

__all__ = [
    "CHOICE_CONTEXT",
    "choice_encodings",
    "choice_features",
    "choice_ngrams",
    "choice_precomputed",
    "items_array",
    "shared_choice_features",
    "spread",
]


def spread(flat: np.ndarray, n_choices: np.ndarray) -> np.ndarray:
    """Rows of all items' choices, item by item (``sum(n_choices)`` rows), as an (N, K, d)
    array padded with NaN rows."""
    n, k = len(n_choices), int(n_choices.max())
    out = np.full((n, k, flat.shape[1]), np.nan)
    mask = np.arange(k)[None, :] < n_choices[:, None]
    out[mask] = flat
    return out


def _texts(items: Choices, context: str) -> list[list[str]]:
    """One list per text field, each with a row per choice (item by item)."""
    if context == "apart" and items.contexts is not None:
        if items.fields.blank is not None:
            raise DataError("--choice-context apart: a blank is filled by its choice; use joint")
        ctx = [c for c, opts in zip(items.contexts, items.options) for _ in opts]
        return [ctx, [o for opts in items.options for o in opts]]
    texts = items.texts(context=context != "none")
    return [[t for row in texts for t in row]]


def choice_features(
    spec: Any,
    items: Choices,
    *,
    context: str = "joint",
    seed: int = 0,
    device: str = "cpu",
    encode: Callable[..., np.ndarray] | None = None,
    progress: Callable[[int, int], None] | None = None,
    fingerprint: str = "",
    cache_dir: str | None = None,
) -> np.ndarray:
    """The (N, K, d) features of ``items`` for the feature spec ``spec`` (a
    :class:`~aflite.features.build.FeatureSpec` of a kind with a ``choices`` hook: the
    built-ins ``ngrams[:options]``, ``sentence-transformers:MODEL`` and ``precomputed:FILE``,
    an (N, K, d) array with NaN rows for missing choices)."""
    build = spec.entry.choices
    if build is None:
        from aflite.features.registry import FEATURE_KINDS

        names = ", ".join(k.usage for k in FEATURE_KINDS.values() if k.choices is not None)
        raise DataError(f"--features {spec}: multiple-choice items take {names} features")
    if context not in CHOICE_CONTEXT:
        raise DataError(f"--choice-context {context}: must be one of {', '.join(CHOICE_CONTEXT)}")
    return build(
        spec,
        items,
        context=context,
        seed=seed,
        device=device,
        encode=encode,
        progress=progress,
        fingerprint=fingerprint,
        cache_dir=cache_dir,
    )


def shared_choice_features(
    spec: Any,
    train: Choices,
    *,
    context: str = "joint",
    seed: int = 0,
    device: str = "cpu",
) -> Callable[[Choices], np.ndarray]:
    """One representation for several sets of items, fitted on ``train``'s: a kind fitted on
    its data (n-grams: the vocabulary of the training items' choices) is applied to every
    set; an encoder encodes each set as it is. A kind reading one set's rows from a file
    (``precomputed``) cannot represent the others: a DataError."""
    from aflite.features.registry import FEATURE_KINDS

    kind = spec.entry
    if kind.choices is None or kind.by_id:
        names = ", ".join(
            k.usage for k in FEATURE_KINDS.values() if k.choices is not None and not k.by_id
        )
        raise DataError(f"--features {spec}: items of several sets take {names} features")
    if context not in CHOICE_CONTEXT:
        raise DataError(f"--choice-context {context}: must be one of {', '.join(CHOICE_CONTEXT)}")
    if kind.fit is None:
        return lambda items: choice_features(spec, items, context=context, seed=seed, device=device)
    fields = _texts(train, context)
    vec = kind.fit(spec, {f"field{i}": f for i, f in enumerate(fields)}, seed)

    def represent(items: Choices) -> np.ndarray:
        flat = np.asarray(vec.transform(_texts(items, context)), dtype=np.float64)
        return spread(flat, items.n_choices)

    return represent


def choice_ngrams(spec: Any, items: Choices, *, context: str, seed: int, **_: Any) -> np.ndarray:
    """TF-IDF n-grams of every choice, in one vocabulary fitted on all items' choices (with
    ``apart``, a second one for the contexts, side by side)."""
    from aflite.features.ngrams import ngram_features

    opts = {k: int(v) for k, v in (o.split("=") for o in spec.arg.split(",") if o)}
    flat = ngram_features(
        _texts(items, context),
        max_features=opts.get("max_features", 1024),
        min_df=opts.get("min_df", 2),
        svd=opts.get("svd"),
        hashed=opts.get("hash"),
        seed=seed,
    )
    return spread(np.asarray(flat, dtype=np.float64), items.n_choices)


def choice_encodings(
    spec: Any,
    items: Choices,
    *,
    context: str,
    device: str,
    encode: Callable[..., np.ndarray] | None = None,
    progress: Callable[[int, int], None] | None = None,
    fingerprint: str = "",
    cache_dir: str | None = None,
    **_: Any,
) -> np.ndarray:
    """Sentence embeddings of every choice (with ``apart``: of the context and the choice,
    combined as ``[u, v, |u-v|, u*v]``), cached under the data's ``fingerprint`` and the
    model's content in ``cache_dir`` (None, or no fingerprint: not cached)."""
    from aflite.features.cache import cached
    from aflite.features.encoders import combine_fields, encode_texts, model_fingerprint

    fields = _texts(items, context)
    run = encode or encode_texts
    total = sum(len(f) for f in fields)

    def embed() -> np.ndarray:
        parts: list[np.ndarray] = []
        for f in fields:
            done = sum(len(p) for p in parts)

            def step(k: int, base: int = done) -> None:  # the encoder counts one field's texts
                if progress is not None:
                    progress(base + k, total)

            parts.append(np.asarray(run(f, spec.arg, device=device, progress=step)))
        return combine_fields(parts)

    if fingerprint and cache_dir is not None:
        f = items.fields
        key = [
            fingerprint,
            str(spec),
            model_fingerprint(spec.arg),
            "choices",
            context,
            ",".join(f.choices),
            ",".join(f.context),
            f.blank or "",
        ]
        flat, _ = cached(key, embed, cache_dir, n_rows=len(fields[0]))
    else:
        flat = embed()
    return spread(np.asarray(flat, dtype=np.float64), items.n_choices)


def choice_precomputed(spec: Any, items: Choices, **_: Any) -> np.ndarray:
    """An (N, K, d) array from a .npy / .npz file (``FILE#KEY``: an .npz member); the rows of
    choices an item lacks are set to NaN, a NaN in a real choice is an error."""
    path, _, key = spec.arg.partition("#")
    try:
        x = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DataError(f"--features {spec}: cannot read {path} ({e})") from None
    if key:
        if not hasattr(x, "files") or key not in x.files:
            raise DataError(f"--features {spec}: no array '{key}' in {path}")
        x = x[key]
    elif hasattr(x, "files"):
        x = x[x.files[0]]
    return items_array(x, items, f"--features {spec}", dtype=np.float64)


def items_array(x: Any, items: Choices, name: str, dtype: Any = None) -> np.ndarray:
    """Given (N, K', d) features of ``items`` (K' at least the widest item's choices) as the
    filter takes them: a copy (``dtype``; default: the array's own if floating, else float64)
    whose rows of choices an item lacks are NaN (padding, whatever the array holds there); a
    wrong shape or a NaN in a real choice is a DataError naming ``name``."""
    n, k = len(items), items.width
    try:
        given = np.asarray(x)
    except ValueError:  # arrays of several shapes, one an item
        raise DataError(
            f"{name}: items' arrays differ in shape; pad them to one (N, K, d) array "
            "(aflite.algorithm.numerics.item_store.pad_choices)"
        ) from None
    if given.ndim != 3 or given.shape[0] != n or given.shape[1] < k:
        raise DataError(
            f"{name}: expected an ({n}, {k}, d) array (items, choices, features), "
            f"got shape {given.shape}"
        )
    if not np.issubdtype(given.dtype, np.number) or np.issubdtype(given.dtype, np.complexfloating):
        raise DataError(f"{name}: features must be real numbers, got dtype {given.dtype}")
    if dtype is None:
        dtype = given.dtype if np.issubdtype(given.dtype, np.floating) else np.float64
    x = np.array(given, dtype=dtype)  # a copy: the padding must not reach the caller's array
    real = np.arange(x.shape[1])[None, :] < items.n_choices[:, None]
    bad = ~np.isfinite(x).all(axis=2) & real
    if bad.any():
        i, j = np.argwhere(bad)[0]
        what = "NaN" if np.isnan(x[i, j]).any() else "inf"
        raise DataError(f"{name}: item {i + 1} choice {j + 1} holds {what}")
    x[~real] = np.nan
    return x
