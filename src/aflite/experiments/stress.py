"""Stress sets from any NLI data, after the stress tests of Naik et al. (2018), "Stress Test
Evaluation for Natural Language Inference": each test rewrites every premise / hypothesis pair
by a rule that keeps its gold label.

Distraction (a tautology appended, so the label cannot change):

* ``word_overlap``: " and true is true" appended to the hypothesis;
* ``negation``: " and false is not true" appended to the hypothesis;
* ``length_mismatch``: " and true is true" appended five times to the premise.

Noise (one typo in the hypothesis, one word, chosen with the seeded generator):

* ``spelling_swap``: two adjacent, different characters of one word swapped;
* ``spelling_keyboard``: one letter of one word replaced by a neighbour on a QWERTY keyboard.

Naik et al.'s competence tests (antonymy, numerical reasoning) need a lexicon or templates and
relabel the pairs, so they are not made here; nor is inserting "not", which changes the label.
A test is one function in :data:`STRESS_TESTS`, registered with :func:`register_stress_test`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aflite._internal.registry import Entry, Registry

__all__ = ["STRESS_TESTS", "StressSet", "StressTest", "make_stress_set", "register_stress_test"]

Rewrite = Callable[[str, str, np.random.Generator], "tuple[str, str] | None"]


@dataclass(frozen=True)
class StressTest(Entry):
    """A registered ``target(premise, hypothesis, rng) -> (premise, hypothesis)``, or None
    when the pair offers nothing to rewrite (the row is then left out of that test);
    ``kind`` is Naik et al.'s family (distraction, noise)."""

    kind: str = ""


STRESS_TESTS: Registry[StressTest] = Registry("stress test", entry=StressTest)


def register_stress_test(name: str, kind: str, description: str) -> Callable[[Rewrite], Rewrite]:
    """Register a rewrite ``(premise, hypothesis, rng) -> (premise, hypothesis) | None``."""
    return STRESS_TESTS.register(name, kind=kind, description=description)


def _append(text: str, tail: str) -> str:
    # the tautology goes before the final full stop, as in Naik et al.'s sets
    body = text.rstrip()
    stop = body[-1] if body and body[-1] in ".!?" else ""
    return body[: len(body) - len(stop)] + tail + stop


@register_stress_test("word_overlap", "distraction", 'hypothesis + " and true is true"')
def _word_overlap(p: str, h: str, rng: np.random.Generator) -> tuple[str, str]:
    return p, _append(h, " and true is true")


@register_stress_test("negation", "distraction", 'hypothesis + " and false is not true"')
def _negation(p: str, h: str, rng: np.random.Generator) -> tuple[str, str]:
    return p, _append(h, " and false is not true")


@register_stress_test("length_mismatch", "distraction", 'premise + 5 x " and true is true"')
def _length_mismatch(p: str, h: str, rng: np.random.Generator) -> tuple[str, str]:
    return _append(p, " and true is true" * 5), h


def _words(text: str, ok: Callable[[str], bool]) -> list[tuple[int, int]]:
    """(start, end) of the alphabetic words of ``text`` that ``ok`` accepts."""
    import re

    return [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z]+", text) if ok(m.group())]


def _pick(items: Sequence, rng: np.random.Generator):
    return items[int(rng.integers(len(items)))]


@register_stress_test(
    "spelling_swap", "noise", "two adjacent letters of one hypothesis word swapped"
)
def _spelling_swap(p: str, h: str, rng: np.random.Generator) -> tuple[str, str] | None:
    # a word of 4+ letters with two different neighbours, so the swap shows
    words = _words(h, lambda w: len(w) >= 4 and any(a != b for a, b in zip(w, w[1:])))
    if not words:
        return None
    s, e = _pick(words, rng)
    w = h[s:e]
    j = int(_pick([i for i in range(len(w) - 1) if w[i] != w[i + 1]], rng))
    return p, h[:s] + w[:j] + w[j + 1] + w[j] + w[j + 2 :] + h[e:]


_QWERTY = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(c: str) -> str:
    for r, row in enumerate(_QWERTY):
        if c in row:
            i = row.index(c)
            out = row[max(i - 1, 0) : i] + row[i + 1 : i + 2]
            for other in (r - 1, r + 1):
                if 0 <= other < len(_QWERTY):
                    out += _QWERTY[other][max(i - 1, 0) : i + 1]
            return out
    return ""


@register_stress_test(
    "spelling_keyboard",
    "noise",
    "one letter of one hypothesis word replaced by a keyboard neighbour",
)
def _spelling_keyboard(p: str, h: str, rng: np.random.Generator) -> tuple[str, str] | None:
    words = _words(h, lambda w: len(w) >= 4)
    if not words:
        return None
    s, e = _pick(words, rng)
    j = s + int(rng.integers(e - s))
    c = h[j]
    near = _neighbours(c.lower())
    sub = _pick(near, rng)
    return p, h[:j] + (sub.upper() if c.isupper() else sub) + h[j + 1 :]


@dataclass
class StressSet:
    """The rewritten pairs: ``source[i]`` is the input row that pair i came from, ``category``
    its test, ``kind`` the test's family; ``skipped`` counts, per test, the rows it could not
    rewrite (no word long enough for a typo)."""

    source: np.ndarray
    category: list[str]
    kind: list[str]
    premise: list[str]
    hypothesis: list[str]
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.source)


def make_stress_set(
    premises: Sequence[str],
    hypotheses: Sequence[str],
    *,
    tests: Sequence[str] | None = None,
    seed: int = 0,
) -> StressSet:
    """Every pair rewritten by every test in ``tests`` (default: all registered), test by test
    in that order; one generator from ``seed`` draws every random choice, so a seed gives the
    same set.

    >>> s = make_stress_set(["A man sleeps."], ["A person rests."], tests=["word_overlap"])
    >>> s.hypothesis[0]
    'A person rests and true is true.'
    """
    if len(premises) != len(hypotheses):
        raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
    names = list(STRESS_TESTS) if tests is None else list(dict.fromkeys(tests))
    for n in names:
        STRESS_TESTS.lookup(n)
    if not names:
        raise ValueError("name at least one stress test")
    rng = np.random.default_rng(seed)
    out = StressSet(np.zeros(0, dtype=np.int64), [], [], [], [])
    source: list[int] = []
    for n in names:
        test = STRESS_TESTS[n]
        out.skipped[n] = 0
        for i, (p, h) in enumerate(zip(premises, hypotheses)):
            pair = test.target(p, h, rng)
            if pair is None:
                out.skipped[n] += 1
                continue
            source.append(i)
            out.category.append(n)
            out.kind.append(test.kind)
            out.premise.append(pair[0])
            out.hypothesis.append(pair[1])
    out.source = np.asarray(source, dtype=np.int64)
    return out
