"""Text preprocessing shared by the co-occurrence counts and their queries.

Text is lower-cased, then split by one of two tokenizers:

- ``"regex"`` (default): runs of ASCII letters and digits, with internal hyphens and
  apostrophes kept (``[a-z0-9]+(?:[-'][a-z0-9]+)*``): "T-shirt" -> ``t-shirt``, "man's" ->
  ``man's``, "don't" -> ``don't``; everything else (punctuation, accents, emoji) separates
  tokens. Deterministic, no dependency, and fast enough for SNLI-scale counts.
- ``"spacy"``: the rule-based tokenizer of a blank spaCy English pipeline (no model download),
  keeping tokens that contain a letter or digit. It splits hyphens and clitics ("t-shirt" ->
  ``t``, ``shirt``; "woman's" -> ``woman``, ``'s``) and is about three times slower. Needs
  ``pip install spacy``.

Stop words are scikit-learn's English list (318 words) minus every token of an identity term,
so "he", "she", "her" and "him" stay countable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

__all__ = ["TOKENIZERS", "get_tokenizer", "load_identity_words", "normalise_term", "stop_words"]

TOKENIZERS = ("regex", "spacy")

_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_ALNUM = re.compile(r"[^\W_]")
_SPACY: dict[str, Callable[[str], list[str]]] = {}


def _spacy_tokenizer() -> Callable[[str], list[str]]:
    # built once per process: pool workers each build their own
    if "en" not in _SPACY:
        try:
            import spacy
        except ImportError:
            raise ValueError(
                "tokenizer 'spacy' needs spaCy (pip install spacy); the default 'regex' does not"
            ) from None
        tok = spacy.blank("en").tokenizer
        _SPACY["en"] = lambda text: [t.text for t in tok(text) if _ALNUM.search(t.text)]
    return _SPACY["en"]


def get_tokenizer(name: str = "regex") -> Callable[[str], list[str]]:
    """A function from lower-cased text to its tokens (see the module docstring)."""
    if name == "regex":
        return _TOKEN.findall
    if name == "spacy":
        return _spacy_tokenizer()
    raise ValueError(f"unknown tokenizer '{name}': choose from {', '.join(TOKENIZERS)}")


def stop_words(identity_terms: Iterable[str]) -> frozenset[str]:
    """scikit-learn's English stop words minus every token of the identity terms."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    keep = {tok for term in identity_terms for tok in term.split()}
    return frozenset(ENGLISH_STOP_WORDS) - keep


def normalise_term(term: str) -> str:
    """A query as it appears in the vocabulary: lower-case, single spaces."""
    return " ".join(term.lower().split())


def load_identity_words(path: str | os.PathLike | None = None) -> dict[str, str]:
    """{term: category} from a ``category<TAB>term`` file (default: the shipped list). A term
    is one word or two ("african boy"); a line without a tab is a term of category
    "identity"; ``#`` starts a comment line."""
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
        term = " ".join(word.lower().split())
        if term:
            out[term] = cat.strip()
    return out
