"""Representations of multiple-choice items: one vector per choice, an (N, K, d) array with
NaN rows for the choices a shorter item lacks (:func:`aflite.algorithm.choices.pad_choices`).

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
from aflite.io.choices import Choices

__all__ = ["CHOICE_CONTEXT", "CHOICE_KINDS", "choice_features", "spread"]

CHOICE_CONTEXT = ("joint", "apart", "none")
CHOICE_KINDS = ("ngrams", "sentence-transformers", "precomputed")


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
    ids: Any = None,
    encode: Callable[..., np.ndarray] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """The (N, K, d) features of ``items`` for the feature spec ``spec`` (a
    :class:`~aflite.features.build.FeatureSpec`): ``ngrams[:options]``,
    ``sentence-transformers:MODEL`` or ``precomputed:FILE`` (an (N, K, d) array, NaN rows for
    missing choices)."""
    if spec.kind not in CHOICE_KINDS:
        raise DataError(
            f"--features {spec}: multiple-choice items take {', '.join(CHOICE_KINDS)} features"
        )
    if context not in CHOICE_CONTEXT:
        raise DataError(f"--choice-context {context}: must be one of {', '.join(CHOICE_CONTEXT)}")
    n_choices = items.n_choices
    if spec.kind == "precomputed":
        return _precomputed(spec, items)
    fields = _texts(items, context)
    if spec.kind == "ngrams":
        from aflite.features.ngrams import ngram_features

        opts = {k: int(v) for k, v in (o.split("=") for o in spec.arg.split(",") if o)}
        flat = ngram_features(
            fields,
            max_features=opts.get("max_features", 1024),
            min_df=opts.get("min_df", 2),
            svd=opts.get("svd"),
            hashed=opts.get("hash"),
            seed=seed,
        )
        return spread(np.asarray(flat, dtype=np.float64), n_choices)
    from aflite.features.encoders import combine_fields, encode_texts

    run = encode or encode_texts
    total = sum(len(f) for f in fields)
    parts: list[np.ndarray] = []
    for f in fields:
        done = sum(len(p) for p in parts)

        def step(k: int, base: int = done) -> None:  # the encoder counts one field's texts
            if progress is not None:
                progress(base + k, total)

        parts.append(np.asarray(run(f, spec.arg, device=device, progress=step)))
    return spread(combine_fields(parts).astype(np.float64), n_choices)


def _precomputed(spec: Any, items: Choices) -> np.ndarray:
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
    n, k = len(items), items.width
    if x.ndim != 3 or x.shape[0] != n or x.shape[1] < k:
        raise DataError(
            f"--features {spec}: expected an ({n}, {k}, d) array (items, choices, features), "
            f"got shape {x.shape}"
        )
    x = np.asarray(x, dtype=np.float64)
    real = np.arange(x.shape[1])[None, :] < items.n_choices[:, None]
    bad = np.isnan(x).any(axis=2) & real
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"--features {spec}: item {i + 1} choice {j + 1} holds NaN")
    x[~real] = np.nan  # choices an item lacks are padding, whatever the file holds there
    return x
