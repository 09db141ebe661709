"""Remove rows by any per-example score: ``aflite filter --by SCORER[:COLUMN]``, or
``aflite.filter(..., ranker=aflite.ByScorer(...))``.

Every row is scored once (out of sample, as by :func:`~aflite.scoring.score_examples`) and the
filter's loop removes the easiest rows by that column (as with ``ranker=aflite.ByScores``), so
the filter job writes its usual outputs. The representation bias before
and after is AFLITE's (mean predictability, at the same t), so runs by any score compare with
the adversarial filter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.scoring.registry import EXAMPLE_SCORERS

__all__ = ["ByScorer", "parse_by"]


def parse_by(spec: str, where: str = "--by") -> tuple[str, str, bool]:
    """``SCORER[:COLUMN]`` -> (scorer, column, lower_is_easier); the column defaults to the
    scorer's first. A one-line DataError, beginning with ``where``, names what is wrong
    (unknown scorer or column, a scorer that needs a partial input, the non-numeric region)."""
    name, _, column = spec.partition(":")
    scorer = EXAMPLE_SCORERS.lookup(name, flag=where)
    if scorer.needs_partial:
        raise DataError(
            f"{where}: scorer '{name}' needs a partial input, which filter does not take"
        )
    column = column or scorer.columns[0]
    numeric = [c for c in scorer.columns if c != "region" and not c.endswith("_partial")]
    if column not in numeric:
        raise DataError(
            f"{where}: '{name}' has no score column '{column}' (columns: {', '.join(numeric)})"
        )
    return name, column, column in scorer.lower_is_easier


@dataclass(frozen=True)
class ByScorer:
    """The ranker of :func:`aflite.filter` (``ranker=``) that scores every row once with a
    registered scorer and removes the easiest by one of its columns, in the filter's loop:
    ``aflite.filter(x, y, ranker=aflite.ByScorer("pvi"), target_size=400)``, what ``aflite
    filter --by pvi`` runs.

    ``by`` is ``SCORER[:COLUMN]`` (e.g. ``pvi`` or ``datamap:confidence``; the column defaults
    to the scorer's first), checked when the ranker is made; ``options`` go to the scorer
    (e.g. ``{"epochs": 5}``). Without ``slice_size`` (``None``) the rows go in one slice; with
    ``min_bias`` they go in slices of ``slice_size`` (easiest first) and the representation
    bias of what remains is measured before each slice, so the run stops once it is within
    ``min_bias`` of the chance level, as AFLITE's chance stop does. The filter's ``model``,
    ``n_partitions``, ``train_size`` and ``partitions`` set that measurement; the
    predictability scorer's own phase is logistic regression at that ``n_partitions`` (64 for
    ``"auto"``) and ``train_size``. ``threshold`` and ``strategy`` do not apply.

    >>> import numpy as np, aflite
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(300, 4)); y = (x[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> res = aflite.filter(x, y, ranker=aflite.ByScorer("aum"), target_size=200,
    ...                     slice_size=None, n_partitions=8, device="cpu")
    >>> len(res.kept), res.stop_reason
    (200, 'by_score')
    """

    by: str
    options: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        parse_by(self.by, "by")  # a bad name or column: at once, before any work

    def by_scores(self, features: Any, labels: Any, opts: Any, **run: Any) -> Any:
        """The :class:`aflite.ByScores` of these rows: each scored once, out of sample."""
        from aflite.algorithm import MODELS, ByScores, FilterOptions, encode_labels
        from aflite.scoring.run import score_examples

        name, column, lower = parse_by(self.by)
        shown = name if column == name else f"{name}:{column}"
        codes, classes = encode_labels(labels, np.asarray(features).shape[0])
        # before any scoring: a bad size must not cost a scoring pass
        _, t, _ = opts.resolve(len(codes), len(classes))
        phase = EXAMPLE_SCORERS.lookup(name).filter_phase
        # the predictability scorer's phase is the filter's by default: "auto" is its m
        auto = MODELS.lookup(FilterOptions.model).partitions_for(len(codes))
        n_partitions = auto if opts.n_partitions == "auto" else opts.n_partitions
        given = dict(self.options or {})
        opts_ = given | ({"n_partitions": n_partitions, "train_size": t} if phase else {})
        scored = score_examples(features, codes, scorers=[name], **run, **opts_)
        value = np.asarray(scored.columns[column], dtype=np.float64)
        return ByScores(
            value,
            lower_is_easier=lower,
            # the predictability scorer ran the loop's first measurement: not run twice
            initial_predictability=(
                value
                if phase
                and (opts.model, opts.partitions) == (FilterOptions.model, FilterOptions.partitions)
                else None
            ),
            info={"by": shown, "seconds": scored.info["seconds"]},
            params={
                "by": shown,
                "device": scored.info["device"],
                "scorer_options": scored.info["options"],
            },
        )
