"""N-gram co-occurrence PMI, the statistic of the identity-word stereotype audit (Pagnoni 2020).

PMI(w_i, w_j) = log2( N · c(w_i, w_j) / (c(w_i) · c(w_j)) ), where

- each text is one sentence; it is lower-cased and tokenised (``aflite.audits.text``: a
  documented regex tokenizer by default, spaCy's on request), and stop words are removed
  except identity words (Rudinger et al. 2017);
- the n-grams are the remaining tokens (unigrams) and adjacent pairs of them (bigrams, so
  "sits in the dirt" gives "sits dirt");
- c(w) is an n-gram's number of occurrences, N the number of (unigram) tokens, and
  c(w_i, w_j) the number of sentences that contain both;
- n-grams seen fewer than ``min_count`` times are dropped;
- with ``dedupe_sentences`` (the default) a sentence repeated verbatim in a field is counted
  once: an SNLI premise appears once per hypothesis written for it (about three times) and
  would otherwise triple its weight against the hypotheses and pass a min count of 10 from
  four captions.

Counting runs once over all cores; :func:`aflite.audits.save_counts` writes the counts, the
sentences and an n-gram -> sentence index, so a query or an example lookup is a row read.

>>> counts = count_cooccurrences(["A woman holds a purse."] * 3, min_count=1,
...                              dedupe_sentences=False, n_jobs=1)
>>> [a.ngram for a in counts.top_associations("woman")]
['holds', 'purse']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from aflite.audits.text import get_tokenizer, load_identity_words, normalise_term, stop_words

__all__ = ["Association", "CooccurrenceCounts", "count_cooccurrences", "count_fields"]

NGRAM_KINDS = ("unigrams", "bigrams", "all")


class Association(NamedTuple):
    """One association of a query term: the n-gram, its PMI with the term, the number of
    sentences holding both (``joint``) and the n-gram's own count."""

    ngram: str
    pmi: float
    joint: int
    count: int


@dataclass
class CooccurrenceCounts:
    """N-gram counts and sentence co-occurrences of one view of the data (a field or all).

    ``vocab`` is sorted, so vocabulary order is alphabetical order and breaks PMI ties.
    ``postings`` (n-gram x sentence, ids into ``sentences``) finds example sentences.
    """

    vocab: list[str]
    counts: np.ndarray
    cooc: sparse.csr_matrix
    n_tokens: int
    n_sentences: int
    min_count: int
    postings: sparse.csr_matrix | None = None
    sentences: Sequence[str] | None = None
    name: str = "text"
    settings: dict[str, Any] = field(default_factory=dict)
    parts: np.ndarray | None = None

    def __post_init__(self) -> None:
        self._index = {w: i for i, w in enumerate(self.vocab)}
        if self.parts is None:
            self.parts = _token_parts(self.vocab, self._index)

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and normalise_term(term) in self._index

    def index(self, term: str) -> int:
        """Vocabulary index of ``term``; KeyError with a readable message when absent."""
        t = normalise_term(term)
        i = self._index.get(t)
        if i is None:
            if len(t.split()) > 2:
                raise KeyError(
                    f"'{t}' has {len(t.split())} words; only unigrams and bigrams are counted"
                )
            raise KeyError(
                f"'{t}' is not in the vocabulary of {self.name} (n-grams seen at least "
                f"{self.min_count} times, stop words removed)"
            )
        return i

    def count(self, term: str) -> int:
        return int(self.counts[self.index(term)])

    def top_associations(
        self, term: str, k: int = 20, *, ngrams: str = "unigrams", min_count: int | None = None
    ) -> list[Association]:
        """The ``k`` n-grams with the highest PMI with ``term`` (a unigram or a bigram).

        ``ngrams`` is ``"unigrams"``, ``"bigrams"`` or ``"all"``. An n-gram that shares a token
        with the term (the term itself, a bigram containing it, a word of a two-word term) is
        never reported: its PMI only restates the term's own count. Ties are ranked by joint
        count, then alphabetically. ``min_count`` filters further than the saved counts.
        """
        if ngrams not in NGRAM_KINDS:
            raise ValueError(f"ngrams must be one of {', '.join(NGRAM_KINDS)}, got '{ngrams}'")
        m = self._check_min_count(min_count)
        i = self.index(term)
        if self.counts[i] < m:
            raise KeyError(
                f"'{self.vocab[i]}' occurs {self.counts[i]} times in {self.name}, "
                f"under min count {m}"
            )
        lo, hi = self.cooc.indptr[i], self.cooc.indptr[i + 1]
        j, c = self.cooc.indices[lo:hi], self.cooc.data[lo:hi]
        own = self.counts[j]
        parts = self.parts[j]
        mine = [p for p in self.parts[i] if p >= 0]
        keep = (own >= m) & ~np.isin(parts[:, 0], mine) & ~np.isin(parts[:, 1], mine)
        if ngrams == "unigrams":
            keep &= parts[:, 1] < 0
        elif ngrams == "bigrams":
            keep &= parts[:, 1] >= 0
        j, c, own = j[keep], c[keep], own[keep]
        pmi = np.log2(self.n_tokens * c / (float(self.counts[i]) * own))
        # rounding makes equal count ratios tie exactly despite float error
        order = np.lexsort((j, -c, -np.round(pmi, 9)))[:k]
        return [Association(self.vocab[j[o]], float(pmi[o]), int(c[o]), int(own[o])) for o in order]

    def example_sentences(self, term: str, other: str, k: int = 3) -> tuple[int, list[str]]:
        """(number of sentences holding both n-grams, the first ``k`` of them)."""
        if self.postings is None or self.sentences is None:
            raise ValueError("these counts hold no sentences; load them with text=True")
        a, b = self.index(term), self.index(other)
        p = self.postings
        both = np.intersect1d(
            p.indices[p.indptr[a] : p.indptr[a + 1]], p.indices[p.indptr[b] : p.indptr[b + 1]]
        )
        return len(both), [self.sentences[int(s)] for s in both[:k]]

    def _check_min_count(self, min_count: int | None) -> int:
        if min_count is None:
            return self.min_count
        if min_count < self.min_count:
            raise ValueError(
                f"min count {min_count} is below the {self.min_count} these counts were made "
                "with; count again with the lower min count"
            )
        return min_count


def _token_parts(vocab: Sequence[str], index: Mapping[str, int]) -> np.ndarray:
    """(V, 2) vocabulary indices of each n-gram's tokens, -1 for a unigram's second.

    A bigram's tokens are always in the vocabulary: each occurrence of it is one of theirs.
    """
    out = np.full((len(vocab), 2), -1, np.int64)
    for i, g in enumerate(vocab):
        a, _, b = g.partition(" ")
        out[i, 0] = index[a] if b else i
        if b:
            out[i, 1] = index[b]
    return out


def _count_chunk(args: tuple[Sequence[str], frozenset[str], str]):
    """Tokenise one chunk: local vocabulary, n-gram counts, sentence x n-gram presence CSR."""
    texts, stop, tokenizer = args
    tokenize = get_tokenizer(tokenizer)
    local: dict[str, int] = {}
    counts: list[int] = []
    indptr = [0]
    indices: list[int] = []
    n_tokens = 0
    for text in texts:
        toks = [t for t in tokenize(text.lower()) if t not in stop]
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


def count_fields(
    texts: Mapping[str, Sequence[str]],
    *,
    min_count: int = 10,
    identity_words: Iterable[str] | None = None,
    dedupe_sentences: bool = True,
    tokenizer: str = "regex",
    n_jobs: int | None = None,
    chunk_size: int = 50_000,
) -> dict[str, CooccurrenceCounts]:
    """Counts for each text field and, with several fields, for all of them together (named
    "premise+hypothesis"), from one tokenisation pass on ``n_jobs`` processes (default: all
    cores). The views share one list of sentences. See the module docstring for the
    preprocessing; ``identity_words`` (default: the shipped list) are exempt from stop words.
    """
    if identity_words is None:
        identity_words = load_identity_words()
    get_tokenizer(tokenizer)  # fail before starting workers
    stop = stop_words(identity_words)
    fields = list(texts)
    sentences: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    n_input = 0
    for f in fields:
        rows = [str(t) for t in texts[f]]
        n_input += len(rows)
        if dedupe_sentences:
            rows = list(dict.fromkeys(rows))
        spans[f] = (len(sentences), len(sentences) + len(rows))
        sentences.extend(rows)
    # chunks never straddle fields, so per-field counts are sums over whole chunks
    chunks, chunk_field = [], []
    for f in fields:
        lo, hi = spans[f]
        for s in range(lo, hi, chunk_size):
            chunks.append((sentences[s : min(s + chunk_size, hi)], stop, tokenizer))
            chunk_field.append(f)
    n_jobs = n_jobs or os.cpu_count() or 1
    if n_jobs > 1 and len(chunks) > 1:
        with ProcessPoolExecutor(max_workers=min(n_jobs, len(chunks))) as pool:
            parts = list(pool.map(_count_chunk, chunks))
    else:
        parts = [_count_chunk(c) for c in chunks]

    vocab_index: dict[str, int] = {}
    maps = [
        np.fromiter(
            (vocab_index.setdefault(w, len(vocab_index)) for w in local), np.int64, len(local)
        )
        for local, *_ in parts
    ]
    n_vocab = len(vocab_index)
    field_counts = {f: np.zeros(n_vocab, np.int64) for f in fields}
    field_tokens = dict.fromkeys(fields, 0)
    for m, part, f in zip(maps, parts, chunk_field):
        field_counts[f][m] += part[1]  # a chunk's map is one-to-one, so no repeated index
        field_tokens[f] += part[4]
    indptr = [np.zeros(1, np.int64)]
    for _, _, ip, _, _ in parts:
        indptr.append(ip[1:] + indptr[-1][-1])
    presence = sparse.csr_matrix(
        (
            np.ones(sum(len(p[3]) for p in parts), np.float32),
            np.concatenate([m[p[3]] for m, p in zip(maps, parts)] or [np.zeros(0, np.int64)]),
            np.concatenate(indptr),
        ),
        shape=(len(sentences), n_vocab),
    )
    all_vocab = np.array(list(vocab_index), dtype=object)
    settings = {
        "tokenizer": tokenizer,
        "dedupe_sentences": dedupe_sentences,
        "n_input_sentences": n_input,
    }
    views = {f: [f] for f in fields}
    if len(fields) > 1:
        views["+".join(fields)] = fields
    out = {}
    for name, fs in views.items():
        lo, hi = spans[fs[0]][0], spans[fs[-1]][1]
        out[name] = _view(
            presence[lo:hi],
            lo,
            sum(field_counts[f] for f in fs),
            all_vocab,
            n_tokens=sum(field_tokens[f] for f in fs),
            min_count=min_count,
            sentences=sentences,
            name=name,
            settings=settings | {"fields": fs},
        )
    return out


def _view(
    presence: sparse.csr_matrix,
    row_offset: int,
    counts: np.ndarray,
    all_vocab: np.ndarray,
    **kw: Any,
) -> CooccurrenceCounts:
    """Keep the n-grams seen ``min_count`` times, in alphabetical order; co-occurrences are
    the Gram matrix of the sentence x n-gram presence matrix."""
    kept = np.flatnonzero(counts >= kw["min_count"])
    kept = kept[np.argsort(all_vocab[kept], kind="stable")]
    # scipy's column selection is one C pass over the entries, in the order asked for
    x = presence[:, kept]
    # the transpose is both the n-gram -> sentence index and the Gram product's left factor
    postings = x.T.tocsr()
    cooc = (postings @ x).tocsr()
    cooc.data = cooc.data.astype(np.int64)
    n_all = len(kw["sentences"])
    if row_offset or presence.shape[0] != n_all:
        # sentence ids index the list shared by all views, not this view's rows
        postings = sparse.csr_matrix(
            (postings.data, postings.indices + row_offset, postings.indptr),
            shape=(len(kept), n_all),
        )
    return CooccurrenceCounts(
        vocab=all_vocab[kept].tolist(),
        counts=counts[kept],
        cooc=cooc,
        n_sentences=presence.shape[0],
        postings=postings,
        **kw,
    )


def count_cooccurrences(
    texts: Sequence[str],
    *,
    min_count: int = 10,
    identity_words: Iterable[str] | None = None,
    dedupe_sentences: bool = True,
    tokenizer: str = "regex",
    n_jobs: int | None = None,
    chunk_size: int = 50_000,
) -> CooccurrenceCounts:
    """Count unigrams, bigrams and their sentence co-occurrences over ``texts`` (one sentence
    each): :func:`count_fields` for a single field named "text"."""
    return count_fields(
        {"text": texts},
        min_count=min_count,
        identity_words=identity_words,
        dedupe_sentences=dedupe_sentences,
        tokenizer=tokenizer,
        n_jobs=n_jobs,
        chunk_size=chunk_size,
    )["text"]
