"""Synthetic features shaped like sentence embeddings: correlated, with a decaying spectrum.

Isotropic Gaussian features flatter an iterative solver (they converge in a few steps); real
embeddings are strongly anisotropic, which is what makes per-fit solvers slow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def embedding_like(n: int, d: int = 1024, n_classes: int = 3, *, rank: int = 256, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    spectrum = 1.0 / np.arange(1, rank + 1) ** 0.7
    mix = (rng.normal(size=(rank, d)) * spectrum[:, None]).astype(np.float32)
    means = (rng.normal(size=(n_classes, rank)) * 0.15).astype(np.float32)
    x = np.empty((n, d), dtype=np.float32)
    step = 65_536
    for s in range(0, n, step):
        z = rng.standard_normal((min(step, n - s), rank), dtype=np.float32) + means[y[s : s + step]]
        x[s : s + step] = z @ mix + 0.05 * rng.standard_normal((len(z), d), dtype=np.float32)
    return x, y


def snli_rows():
    import json

    from aflite.data import bundled_snli

    return [json.loads(line) for line in bundled_snli().read_text().splitlines()]


def snli_labels(rows):
    return np.unique([r["label"] for r in rows], return_inverse=True)[1]


def snli_ngrams(max_features: int = 1024):
    """Premise + hypothesis TF-IDF uni+bigrams of the bundled SNLI slice (d = 2 x 1024)."""
    from aflite.features.ngrams import ngram_features

    rows = snli_rows()
    x = ngram_features(
        [[r["premise"] for r in rows], [r["hypothesis"] for r in rows]], max_features=max_features
    )
    return x, snli_labels(rows)


def snli_minilm():
    """[u, v, |u-v|, u*v] MiniLM pair features of the bundled SNLI slice (d = 1536), from the
    packaged all-MiniLM-L6-v2 weights; cached on disk by aflite's embedding cache."""
    from aflite.features.build import build_features, parse_feature_spec

    rows = snli_rows()
    texts = {f: [r[f] for r in rows] for f in ("premise", "hypothesis")}
    x, _ = build_features(
        parse_feature_spec("sentence-transformers:all-MiniLM-L6-v2"),
        texts,
        n_rows=len(rows),
        fingerprint="bundled-snli-slice",
        cache_dir=str(Path.home() / ".cache" / "aflite"),
    )
    return np.asarray(x), snli_labels(rows)


def snli_devtest_minilm(snli_dir: str | Path, cache: str | Path | None = None):
    """MiniLM pair features [u, v, |u-v|, u*v] (d = 1536) of SNLI 1.0 dev+test (19,666 pairs)
    from ``snli_dir`` (dev.jsonl, test.jsonl), with the packaged all-MiniLM-L6-v2 weights.

    Each distinct sentence is embedded once (a premise is repeated once per hypothesis), and
    the matrix is cached in ``cache`` (default ~/.cache/aflite/bench/), so only the first call
    pays for the encoder. Returns (features, labels, rows)."""
    import json

    from aflite.features.encoders import encode_texts, pair_features

    rows = []
    for split in ("dev", "test"):
        with open(Path(snli_dir) / f"{split}.jsonl", encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    cache = Path(cache or Path.home() / ".cache" / "aflite" / "bench" / "snli-devtest-minilm.npy")
    if cache.exists():
        x = np.load(cache)
    else:
        sentences = sorted({r[f] for r in rows for f in ("premise", "hypothesis")})
        index = {s: i for i, s in enumerate(sentences)}
        emb = encode_texts(sentences, "all-MiniLM-L6-v2")
        u = emb[[index[r["premise"]] for r in rows]]
        v = emb[[index[r["hypothesis"]] for r in rows]]
        x = pair_features(u, v)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, x)
    return x, snli_labels(rows), rows
