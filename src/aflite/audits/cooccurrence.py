"""N-gram co-occurrence PMI against identity words: stereotype detection (Pagnoni 2020, SNLI).

PMI(w_i, w_j) = log2( N · c(w_i, w_j) / (c(w_i) · c(w_j)) ), with N the number of tokens,
c(w) an n-gram's count and c(w_i, w_j) the number of sentences containing both. Text is
lower-cased and tokenised; stop words are removed except identity words (Rudinger et al. 2017);
unigrams and bigrams of what remains are counted; n-grams under ``min_count`` are dropped.

Counting runs once over all cores; the counts are saved (npz + JSON vocabulary, no pickle) so a
query for one word's top associations is a row lookup.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from aflite._internal.atomic import atomic_path
from aflite.audits.base import AuditResult

__all__ = ["CooccurrenceCounts", "count_cooccurrences", "load_identity_words", "identity_pmi"]

_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def load_identity_words(path: str | os.PathLike | None = None) -> dict[str, str]:
    """{word: category} from a ``category<TAB>word`` file (default: the shipped list)."""
    if path is None:
        text = (resources.files("aflite") / "data" / "identity_words.txt").read_text()
    else:
        text = Path(path).read_text()
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cat, _, word = line.partition("\t")
        if not word:
            cat, word = "identity", cat
        out[word.strip().lower()] = cat.strip()
    return out


def _stop_words(identity: Iterable[str]) -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) - frozenset(identity)


def _count_chunk(args: tuple[Sequence[str], frozenset[str]]):
    """Tokenise one chunk: its local vocabulary, counts and sentence x n-gram presence CSR."""
    texts, stop = args
    local: dict[str, int] = {}
    counts: list[int] = []
    indptr = [0]
    indices: list[int] = []
    n_tokens = 0
    for text in texts:
        toks = [t for t in _TOKEN.findall(text.lower()) if t not in stop]
        n_tokens += len(toks)
        grams = toks + [f"{a} {b}" for a, b in zip(toks, toks[1:])]
        seen = set()
        for g in grams:
            i = local.get(g)
            if i is None:
                i = local[g] = len(counts)
                counts.append(0)
            counts[i] += 1
            if i not in seen:
                seen.add(i)
                indices.append(i)
        indptr.append(len(indices))
    return (
        list(local),
        np.asarray(counts, np.int64),
        np.asarray(indptr, np.int64),
        np.asarray(indices, np.int64),
        n_tokens,
    )


@dataclass
class CooccurrenceCounts:
    """Saved n-gram counts: vocabulary, counts, sentence co-occurrence matrix, token total."""

    vocab: list[str]
    counts: np.ndarray
    cooc: sparse.csr_matrix
    n_tokens: int
    n_sentences: int
    min_count: int

    def __post_init__(self) -> None:
        self._index = {w: i for i, w in enumerate(self.vocab)}

    def top_associations(self, word: str, k: int = 20) -> list[tuple[str, float, int]]:
        """The ``k`` n-grams with the highest PMI with ``word``: (n-gram, PMI, co-occurrences)."""
        i = self._index.get(word.lower())
        if i is None:
            raise KeyError(f"'{word}' is not in the vocabulary (min count {self.min_count})")
        row = self.cooc.getrow(i)
        j, c = row.indices, row.data
        keep = j != i
        j, c = j[keep], c[keep]
        pmi = np.log2(self.n_tokens * c / (self.counts[i] * self.counts[j]))
        order = np.argsort(-pmi, kind="stable")[:k]
        return [(self.vocab[j[o]], float(pmi[o]), int(c[o])) for o in order]

    def save(self, path: str | os.PathLike) -> Path:
        """Write ``path`` (.npz): arrays plus the vocabulary as JSON text."""
        path = Path(path)
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(
                fh,
                counts=self.counts,
                data=self.cooc.data,
                indices=self.cooc.indices,
                indptr=self.cooc.indptr,
                meta=np.frombuffer(
                    json.dumps(
                        {
                            "vocab": self.vocab,
                            "n_tokens": self.n_tokens,
                            "n_sentences": self.n_sentences,
                            "min_count": self.min_count,
                        }
                    ).encode(),
                    dtype=np.uint8,
                ),
            )
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> CooccurrenceCounts:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            n = len(meta["vocab"])
            cooc = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=(n, n))
            return cls(
                meta["vocab"],
                z["counts"],
                cooc,
                meta["n_tokens"],
                meta["n_sentences"],
                meta["min_count"],
            )


def count_cooccurrences(
    texts: Sequence[str],
    *,
    min_count: int = 10,
    identity_words: Iterable[str] | None = None,
    n_jobs: int | None = None,
    chunk_size: int = 50_000,
) -> CooccurrenceCounts:
    """Count unigrams, bigrams and their sentence co-occurrences over ``texts`` (one sentence
    each), on ``n_jobs`` processes (default: all cores)."""
    identity = load_identity_words() if identity_words is None else {w: "" for w in identity_words}
    stop = _stop_words(identity)
    chunks = [(texts[s : s + chunk_size], stop) for s in range(0, len(texts), chunk_size)]
    n_jobs = n_jobs or os.cpu_count() or 1
    if n_jobs > 1 and len(chunks) > 1:
        with ProcessPoolExecutor(max_workers=min(n_jobs, len(chunks))) as pool:
            parts = list(pool.map(_count_chunk, chunks))
    else:
        parts = [_count_chunk(c) for c in chunks]

    # merge chunk-local vocabularies into one
    vocab_index: dict[str, int] = {}
    maps = []
    for local_vocab, *_ in parts:
        maps.append(
            np.fromiter(
                (vocab_index.setdefault(w, len(vocab_index)) for w in local_vocab),
                np.int64,
                len(local_vocab),
            )
        )
    counts = np.zeros(len(vocab_index), np.int64)
    for m, (_, c, *_rest) in zip(maps, parts):
        np.add.at(counts, m, c)
    keep = counts >= min_count
    remap = np.full(len(counts), -1, np.int64)
    remap[keep] = np.arange(int(keep.sum()))
    all_vocab = np.array(list(vocab_index), dtype=object)

    blocks = []
    for m, (_, _, indptr, indices, _) in zip(maps, parts):
        new = remap[m[indices]]
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        ok = new >= 0
        blocks.append(
            sparse.csr_matrix(
                (np.ones(int(ok.sum()), np.float32), (rows[ok], new[ok])),
                shape=(len(indptr) - 1, int(keep.sum())),
            )
        )
    x = sparse.vstack(blocks).tocsr()
    cooc = (x.T @ x).tocsr()
    cooc.data = cooc.data.astype(np.int64)
    return CooccurrenceCounts(
        vocab=all_vocab[keep].tolist(),
        counts=counts[keep],
        cooc=cooc,
        n_tokens=int(sum(p[4] for p in parts)),
        n_sentences=len(texts),
        min_count=min_count,
    )


def identity_pmi(
    texts: Sequence[str],
    *,
    min_count: int = 10,
    identity_words: dict[str, str] | None = None,
    top: int = 5,
    counts: CooccurrenceCounts | None = None,
    name: str = "identity-word PMI",
) -> AuditResult:
    """For each identity word in the vocabulary, its ``top`` n-grams by co-occurrence PMI."""
    identity = identity_words or load_identity_words()
    counts = counts or count_cooccurrences(texts, min_count=min_count, identity_words=identity)
    rows: list[list[Any]] = []
    present = [w for w in identity if w in counts._index]
    for w in present:
        for gram, pmi, c in counts.top_associations(w, top):
            rows.append([identity[w], w, gram, pmi, c])
    summary = (
        f"{len(present)} of {len(identity)} identity words occur >= {counts.min_count} times in "
        f"{counts.n_sentences} sentences; top {top} associations each (min count {counts.min_count})"
    )
    return AuditResult(
        name,
        summary,
        ["category", "identity word", "n-gram", "pmi", "co-occurrences"],
        rows,
        {"min_count": counts.min_count, "n_tokens": counts.n_tokens},
    )
