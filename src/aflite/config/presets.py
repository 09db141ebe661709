"""Named sets of the algorithm's options: ``--preset NAME`` on the command line, ``preset=``
in Python. Options given explicitly override the preset's.

- ``paper``: Algorithm 1 as published (Le Bras et al. 2020): tau 0.75, k = 500 rows a phase,
  no chance stop, independent uniform training parts, logistic regression with m = 64. These
  are the defaults of :func:`aflite.filter` too, except its training parts, which are block
  partitions (the same estimate with less noise; ``partitions="uniform"`` for the paper's). Its removed sets overlap little from seed
  to seed (Jaccard 0.63 between seeds 0 and 1 on the bundled SNLI slice, hypothesis n-grams),
  and, its fits stopping at a tolerance, its kept set moves with the row order and the machine
  at predictions near zero margin: it is there to reproduce the paper, not to publish a set.
- ``practical``: the defaults of ``aflite filter`` and :func:`aflite.filter_dataset`. They were
  chosen on real data (the bundled SNLI slice, hypothesis-only n-grams, 3 classes; its binary
  entailment/contradiction subset; scikit-learn's digits, 10 classes) so that a run does real
  work without going below chance: ``threshold`` 0.6, because the paper's 0.75 assumes strong
  (RoBERTa) features and a linear model trained on 10% of a few thousand rows scores most rows
  below it (the run stopped after one phase having removed 1-4%); ``slice_size`` 0.05 of the
  input, small enough that the chance stop fires within one slice of where the set becomes
  unpredictable; ``min_bias`` 0.02, stop once the representation bias is within two points of
  chance, since without it low thresholds keep removing until the kept rows are
  *anti*-correlated with the label, which is a new artifact, not a cleaner set. ``model``
  auto (the exact least-squares family where t <= d, see :mod:`aflite.algorithm.models.auto`)
  and ``n_partitions`` auto (512 partitions with that family, whose partitions are cheap;
  64 with logistic regression): the same seed keeps the same rows on any machine, and two
  seeds keep most of the same rows (README, "One filtered set").
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from aflite.config.base import config_fields
from aflite.config.filter import FilterConfig
from aflite.errors import DataError

__all__ = ["PRESETS", "PRESET_OPTIONS", "preset"]

# the options a preset sets: the algorithm's knobs, not where the data or the outputs are
PRESET_OPTIONS = (
    "target_size", "n_partitions", "train_size", "slice_size", "threshold", "min_bias",
    "balance", "strategy", "partitions", "model",
)  # fmt: skip

_practical = {f.name: f.default for f in config_fields(FilterConfig) if f.name in PRESET_OPTIONS}

PRESETS: MappingProxyType[str, MappingProxyType[str, Any]] = MappingProxyType({
    "paper": MappingProxyType(_practical | {
        "slice_size": 500, "threshold": 0.75, "min_bias": None, "partitions": "uniform",
        "model": "linear", "n_partitions": 64,
    }),
    "practical": MappingProxyType(_practical),
})  # fmt: skip


def preset(name: str | None, *, flag: str = "preset") -> dict[str, Any]:
    """The options of preset ``name`` ({} for None); an unknown name is a one-line DataError
    with a did-you-mean."""
    if name is None:
        return {}
    if name not in PRESETS:
        from aflite.io.base import did_you_mean

        raise DataError(
            f"{flag}: unknown preset '{name}': choose one of {', '.join(PRESETS)}"
            f"{did_you_mean(name, list(PRESETS))}"
        )
    return dict(PRESETS[name])
