"""Remove rows by any per-example score: ``aflite filter --by SCORER[:COLUMN]``.

Every row is scored once (out of sample, as by :func:`~aflite.scoring.score_examples`) and the
filter's loop removes the easiest rows by that column (``aflite.filter(...,
ranker=aflite.ByScores(...))``), so the filter job writes its usual outputs. The representation bias before
and after is AFLITE's (mean predictability, at the same t), so runs by any score compare with
the adversarial filter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.scoring.registry import EXAMPLE_SCORERS

__all__ = ["filter_by_score", "parse_by"]


def parse_by(spec: str) -> tuple[str, str, bool]:
    """``SCORER[:COLUMN]`` -> (scorer, column, lower_is_easier); the column defaults to the
    scorer's first. A one-line DataError names what is wrong (unknown scorer or column, a
    scorer that needs a partial input, the non-numeric region)."""
    name, _, column = spec.partition(":")
    scorer = EXAMPLE_SCORERS.lookup(name, flag="--by")
    if scorer.needs_partial:
        raise DataError(f"--by: scorer '{name}' needs a partial input, which filter does not take")
    column = column or scorer.columns[0]
    numeric = [c for c in scorer.columns if c != "region" and not c.endswith("_partial")]
    if column not in numeric:
        raise DataError(
            f"--by: '{name}' has no score column '{column}' (columns: {', '.join(numeric)})"
        )
    return name, column, column in scorer.lower_is_easier


def filter_by_score(
    features: Any,
    labels: Any,
    *,
    by: str,
    target_size: int | float,
    n_partitions: int | str = 64,
    train_size: int | float = 0.1,
    balance: str | None = None,
    slice_size: int | float | None = None,
    min_bias: float | None = None,
    groups: Any = None,
    seed: int = 0,
    device: Any = "auto",
    **options: Any,
) -> Any:
    """Keep the ``target_size`` rows that are hardest by ``by`` (``SCORER[:COLUMN]``, e.g.
    ``pvi`` or ``datamap:confidence``): one scoring pass, no re-scoring between removals.

    With ``min_bias`` the rows go in slices of ``slice_size`` (easiest first) and the
    representation bias of what remains is measured before each slice: the run stops once it
    is within ``min_bias`` of the chance level, as AFLITE's chance stop does, so a score that
    keeps ranking rows after the artifact is gone does not push the set below chance.

    Returns a :class:`~aflite.FilterResult` with one phase per slice (one in all without
    ``slice_size``): ``removed`` easiest first with their score in ``removed_score``,
    ``kept_scores`` the kept rows' predictability on the kept set, the bias before and after as
    AFLITE measures it (``n_partitions``, t = ``train_size``). ``options`` go to the scorer
    (e.g. ``epochs=5``).
    """
    from aflite.algorithm import ByScores, adversarial_filter, encode_labels
    from aflite.algorithm.filtering import resolve_filter_sizes
    from aflite.scoring.run import score_examples

    name, column, lower = parse_by(by)
    shown = name if column == name else f"{name}:{column}"
    if n_partitions == "auto":  # the bias between slices is logistic regression's
        from aflite.algorithm import AUTO_PARTITIONS

        n_partitions = AUTO_PARTITIONS[False]
    codes, _ = encode_labels(labels, np.asarray(features).shape[0])
    # before any scoring: a bad size must not cost a scoring pass
    _, t, _ = resolve_filter_sizes(
        len(codes), target_size=target_size, train_size=train_size,
        slice_size=1 if slice_size is None else slice_size,
    )  # fmt: skip
    phase = EXAMPLE_SCORERS.lookup(name).filter_phase
    opts = dict(options) | ({"n_partitions": n_partitions, "train_size": t} if phase else {})
    scored = score_examples(
        features, codes, scorers=[name], groups=groups, seed=seed, device=device, **opts
    )
    value = np.asarray(scored.columns[column], dtype=np.float64)
    ranker = ByScores(
        value, lower_is_easier=lower,
        # the predictability scorer ran the loop's first measurement: no need to run it twice
        initial_predictability=value if phase else None,
        info={"by": shown, "seconds": scored.info["seconds"]},
        params={"by": shown, "device": scored.info["device"],
                "scorer_options": scored.info["options"]},
    )  # fmt: skip
    return adversarial_filter(
        features, labels, ranker=ranker, target_size=target_size, slice_size=slice_size,
        balance=balance, min_bias=min_bias, n_partitions=n_partitions, train_size=t,
        groups=groups, seed=seed, device=device, progress=False,
    )  # fmt: skip
