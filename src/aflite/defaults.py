"""The filter's defaults for the command line, the job API, ``compare`` and the demo.

:func:`aflite.filter` keeps Algorithm 1 as published (no chance stop, tau 0.75); everything a
user runs on a data file starts from these values instead. They were chosen on real data (the
bundled SNLI slice, hypothesis-only n-grams, 3 classes; its binary entailment/contradiction
subset; scikit-learn's digits, 10 classes) so that a run does real work without going below
chance:

- ``threshold`` 0.6: the paper's 0.75 assumes strong (RoBERTa) features. A linear model trained
  on 10% of a few thousand rows scores most rows below 0.75, so the run stopped after one phase
  having removed 1-4%.
- ``slice_size`` 0.05 of the input per phase: small enough that the chance stop fires within
  one slice of where the set becomes unpredictable.
- ``min_bias`` 0.02: stop once the representation bias is within two points of the chance
  level. Without it, low thresholds keep removing until the kept rows are *anti*-correlated
  with the label (below chance), which is a new artifact, not a cleaner set.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FILTER_DEFAULTS", "overrides"]

FILTER_DEFAULTS: dict[str, Any] = {
    "target_size": 0.5,
    "n_partitions": 64,
    "train_size": 0.1,
    "slice_size": 0.05,
    "threshold": 0.6,
    "min_bias": 0.02,
    "balance": None,
    "strategy": "slicing",
    "partitions": "blocks",
}


def overrides(values: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` that differ from :data:`FILTER_DEFAULTS`."""
    return {k: v for k, v in values.items() if k in FILTER_DEFAULTS and FILTER_DEFAULTS[k] != v}
