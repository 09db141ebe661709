"""The examples in public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "aflite.algorithm.loop.filtering",
    "aflite.algorithm.loop.predictability",
    "aflite.algorithm.afopt",
    "aflite.audits.cooccurrence",
    "aflite.audits.identity",
    "aflite.api.dataset",
    "aflite.api.scores",
    "aflite.scoring.run",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
