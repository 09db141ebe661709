"""Synthetic features shaped like sentence embeddings: correlated, with a decaying spectrum.

Isotropic Gaussian features flatter an iterative solver (they converge in a few steps); real
embeddings are strongly anisotropic, which is what makes per-fit solvers slow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def embedding_like(
    n: int, d: int = 1024, n_classes: int = 3, *, rank: int = 256, seed: int = 0, out=None
):
    """(x, y): n rows of d features, written into ``out`` (an (n, d) float32 array, e.g. a
    memory map) when given."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    spectrum = 1.0 / np.arange(1, rank + 1) ** 0.7
    mix = (rng.normal(size=(rank, d)) * spectrum[:, None]).astype(np.float32)
    means = (rng.normal(size=(n_classes, rank)) * 0.15).astype(np.float32)
    x = np.empty((n, d), dtype=np.float32) if out is None else out
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


def planted_data(n: int = 1200, d: int = 12, n_classes: int = 3, share: float = 0.3, seed: int = 0):
    """Noise features plus one indicator column per class that reveals the label for a known
    ``share`` of rows (the give-away token kind of artifact). Returns (x, y, planted)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.normal(size=(n, d)).astype(np.float32)
    planted = rng.random(n) < share
    x[:, :n_classes] = 0.0
    x[planted, y[planted]] = 1.0
    return x, y, planted


def read_jsonl(path: str | Path) -> list[dict]:
    import json

    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def tfidf_svd(texts: list[str], dims: int = 256, seed: int = 0) -> np.ndarray:
    """Dense text features: TF-IDF of word uni+bigrams (seen twice or more) reduced by
    TruncatedSVD to ``dims`` (fewer where the vocabulary or the rows are fewer)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tfidf = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(texts)
    dims = min(dims, tfidf.shape[1] - 1, len(texts) - 1)
    return TruncatedSVD(dims, random_state=seed).fit_transform(tfidf).astype(np.float32)


def hellaswag_joint_minilm(items: list[dict], cache: str | Path | None = None) -> np.ndarray:
    """(N, K, 384) all-MiniLM-L6-v2 embeddings of each HellaSwag item's choices, each read
    with its context as one text ("ctx_with_activity_label ending", as aflite's joint choice
    context does); cached on disk under a hash of the texts, so only the first call pays for
    the encoder."""
    import hashlib

    from aflite.features.encoders import encode_texts

    k = max(len(r["endings"]) for r in items)
    texts = [f"{r['ctx_with_activity_label']} {e}" for r in items for e in r["endings"]]
    assert len(texts) == k * len(items), "every item must offer the same number of endings"
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    folder = Path(cache or Path.home() / ".cache" / "aflite" / "bench")
    path = folder / f"hellaswag-joint-minilm-{key}.npy"
    if path.exists():
        return np.load(path)
    x = encode_texts(texts, "all-MiniLM-L6-v2").reshape(len(items), k, -1)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def hellaswag_activities(items: list[dict], top: int = 20) -> tuple[list[str], np.ndarray]:
    """HellaSwag contexts as labelled rows: the text after the first ':' of
    ``ctx_with_activity_label``, labelled by the activity before it, for the ``top`` most
    frequent activities; a context seen twice is kept once (it would sit on both sides of a
    fold). Returns (contexts, activity codes)."""
    from collections import Counter

    pairs = [r["ctx_with_activity_label"].split(":", 1) for r in items]
    pairs = [(a.strip(), c.strip()) for a, c in (p for p in pairs if len(p) == 2)]
    keep = {a for a, _ in Counter(a for a, _ in pairs).most_common(top)}
    seen: dict[str, str] = {}
    for activity, context in pairs:
        if activity in keep:
            seen.setdefault(context, activity)
    return list(seen), np.unique(list(seen.values()), return_inverse=True)[1]
