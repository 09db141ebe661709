"""Identity-word stereotype audit: which words co-occur with "woman", "man", "hispanic man"...

The study's tables (Pagnoni 2020, on SNLI): for each identity word its top unigrams by
co-occurrence PMI at minimum counts 10 and 100, per field (the hypotheses, written by
annotators, carry more bias than the image-caption premises), and a separate bigram analysis
for two-word identity terms. The statistic and preprocessing are those of
:mod:`aflite.audits.cooccurrence`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from aflite.audits.base import AuditResult
from aflite.audits.cooccurrence import Association, CooccurrenceCounts, count_fields
from aflite.audits.options import parse_min_counts
from aflite.audits.text import load_identity_words

__all__ = [
    "RARE_WORDS_NOTE",
    "compound_terms",
    "identity_pmi",
    "load_identity_words",
    "parse_min_counts",
    "preprocessing_text",
]

RARE_WORDS_NOTE = (
    "PMI favours rare words: an n-gram seen only in sentences with the identity word gets the "
    "highest possible PMI, log2(N / c(identity word)), however rarely it occurs, so at min "
    "count 10 words seen a dozen times fill the top and at 100 only well-attested ones remain."
)

# modifiers of a person noun in a two-word identity term ("hispanic man", "old woman")
_MODIFIER_CATEGORIES = ("age", "race", "nationality", "religion", "disability", "orientation")


def preprocessing_text(settings: Mapping[str, Any]) -> str:
    """The preprocessing behind a set of counts, in one sentence."""
    dedupe = (
        "a sentence repeated verbatim within a field is counted once"
        if settings.get("dedupe_sentences", True)
        else "repeated sentences are counted every time they occur"
    )
    return (
        f"lower-cased; {settings.get('tokenizer', 'regex')} tokenizer; scikit-learn English stop "
        "words removed except identity words; unigrams and bigrams of the remaining tokens; "
        "N = tokens after stop-word removal; c(wi, wj) = sentences holding both; " + dedupe
    )


def compound_terms(counts: CooccurrenceCounts, identity: Mapping[str, str]) -> dict[str, str]:
    """Two-word identity terms in the vocabulary: {term: category}. They are the list's
    two-word entries, and bigrams of a modifier (age, race, nationality, religion, disability,
    orientation) followed by a gender word, e.g. "hispanic man", "old woman"."""
    out = {t: c for t, c in identity.items() if len(t.split()) == 2 and t in counts._index}
    mods = [w for w, c in identity.items() if c in _MODIFIER_CATEGORIES and " " not in w]
    nouns = [w for w, c in identity.items() if c == "gender" and " " not in w]
    for a in mods:
        for b in nouns:
            if f"{a} {b}" in counts._index:
                out.setdefault(f"{a} {b}", f"{identity[a]}+gender")
    return out


def _cell(assocs: Sequence[Association]) -> str:
    return ", ".join(f"{a.ngram} ({a.joint}/{a.count})" for a in assocs)


def _rows_for(
    counts: CooccurrenceCounts,
    terms: Mapping[str, str],
    min_counts: Sequence[int],
    top: int,
    ngrams: str,
) -> tuple[list[list[Any]], dict[str, dict[str, list[list[Any]]]], dict[int, int]]:
    """Table rows (most frequent term first, one row per min count it passes), the full
    associations by min count, and how many terms pass each min count."""
    present = sorted((t for t in terms if t in counts._index), key=lambda t: (-counts.count(t), t))
    rows: list[list[Any]] = []
    assoc: dict[str, dict[str, list[list[Any]]]] = {str(m): {} for m in min_counts}
    surviving = {m: 0 for m in min_counts}
    for t in present:
        c = counts.count(t)
        for m in min_counts:
            if c < m:
                continue
            surviving[m] += 1
            top_k = counts.top_associations(t, top, ngrams=ngrams, min_count=m)
            assoc[str(m)][t] = [list(a) for a in top_k]
            rows.append([t, terms[t], c, m, _cell(top_k)])
    return rows, assoc, surviving


def identity_pmi(
    texts: Sequence[str] | Mapping[str, Sequence[str]],
    *,
    min_counts: str | int | Iterable[int] = (10, 100),
    identity_words: Mapping[str, str] | None = None,
    top: int = 8,
    dedupe_sentences: bool = True,
    tokenizer: str = "regex",
    counts: Mapping[str, CooccurrenceCounts] | CooccurrenceCounts | None = None,
    n_jobs: int | None = None,
    name: str = "identity-word PMI",
) -> list[AuditResult]:
    """The study's tables over ``texts`` (one list of sentences, or {field: sentences}).

    Returns one result per view (each field, then all fields together): every identity word
    that passes a min count, with its ``top`` unigrams by PMI at each of ``min_counts``; and
    one result for two-word identity terms (:func:`compound_terms`) with their top bigrams.
    ``counts`` (from :func:`count_fields`, made at min count <= the lowest asked) skips
    counting.

    >>> texts = ["A woman holds a purse."] * 12 + ["A man reads a map."] * 12
    >>> unigrams, bigrams = identity_pmi(texts, min_counts=10, dedupe_sentences=False, n_jobs=1)
    >>> for word, category, count, min_count, top in unigrams.rows:
    ...     print(word, count, min_count, "->", top)
    man 12 10 -> map (12/12), reads (12/12)
    woman 12 10 -> holds (12/12), purse (12/12)
    """
    identity = dict(identity_words) if identity_words is not None else load_identity_words()
    mcs = parse_min_counts(min_counts)
    if counts is None:
        by_field = texts if isinstance(texts, Mapping) else {"text": texts}
        counts = count_fields(
            by_field,
            min_count=mcs[0],
            identity_words=identity,
            dedupe_sentences=dedupe_sentences,
            tokenizer=tokenizer,
            n_jobs=n_jobs,
        )
    elif isinstance(counts, CooccurrenceCounts):
        counts = {counts.name: counts}
    words = {t: c for t, c in identity.items() if " " not in t}
    out: list[AuditResult] = []
    bigram_rows: list[list[Any]] = []
    bigram_assoc: dict[str, Any] = {}
    bigram_surviving: dict[str, dict[int, int]] = {}
    for view, cc in counts.items():
        rows, assoc, surviving = _rows_for(cc, words, mcs, top, "unigrams")
        summary = (
            f"{view}: "
            + ", ".join(
                f"{surviving[m]} of {len(words)} identity words occur >= {m} times" for m in mcs
            )
            + f" ({cc.n_sentences:,} sentences, N = {cc.n_tokens:,} tokens)"
        )
        # the own counts of the listed words show the rare-word effect in this data
        listed = {m: [a[3] for lst in assoc[str(m)].values() for a in lst] for m in mcs}
        medians = [f"{np.median(v):g} at min count {m}" for m, v in listed.items() if v]
        note = RARE_WORDS_NOTE
        if medians:
            note += f" Median count of the listed words: {', '.join(medians)}."
        out.append(
            AuditResult(
                f"{name} ({view}): unigrams",
                summary,
                [
                    "identity word",
                    "category",
                    "count",
                    "min count",
                    f"top {top} unigrams by PMI (joint/own count)",
                ],
                rows,
                {
                    "field": view,
                    "min_counts": mcs,
                    "surviving": {str(m): n for m, n in surviving.items()},
                    "n_tokens": cc.n_tokens,
                    "n_sentences": cc.n_sentences,
                    "n_input_sentences": cc.settings.get("n_input_sentences"),
                    "preprocessing": preprocessing_text(cc.settings),
                    "note": note,
                    "associations": assoc,
                },
            )
        )
        terms = compound_terms(cc, identity)
        rows, assoc, surviving = _rows_for(cc, terms, mcs, top, "bigrams")
        bigram_rows += [[view, *r] for r in rows]
        bigram_assoc[view] = assoc
        bigram_surviving[view] = surviving
    last = list(counts)[-1]
    summary = f"{last}: " + ", ".join(
        f"{bigram_surviving[last][m]} two-word identity terms occur >= {m} times" for m in mcs
    )
    out.append(
        AuditResult(
            f"{name}: two-word identity terms, bigrams",
            summary + "; n-grams sharing a word with the term are never listed",
            [
                "field",
                "identity term",
                "category",
                "count",
                "min count",
                f"top {top} bigrams by PMI (joint/own count)",
            ],
            bigram_rows,
            {
                "min_counts": mcs,
                "note": RARE_WORDS_NOTE,
                "surviving": {
                    v: {str(m): n for m, n in s.items()} for v, s in bigram_surviving.items()
                },
                "associations": bigram_assoc,
            },
        )
    )
    return out
