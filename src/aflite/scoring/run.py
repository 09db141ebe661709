"""Run registered per-example scorers on one feature matrix: :func:`score_examples`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aflite._internal.text import did_you_mean
from aflite.scoring.registry import EXAMPLE_SCORERS, ScoringContext

__all__ = [
    "DEFAULT_SCORERS",
    "ExampleScores",
    "item_scorers",
    "resolve_scorers",
    "score_examples",
    "scorer_names",
    "spearman",
]

DEFAULT_SCORERS = ("predictability", "datamap", "pvi", "aum", "el2n", "forgetting")
_CALL_OPTIONS = {"n_folds", "repeats"}
_GIVEN = {"dynamics", "probs", "partial_probs"}  # data, not options: kept out of the summary


def scorer_names() -> list[str]:
    """The registered scorers, in registration order."""
    return list(EXAMPLE_SCORERS)


def item_scorers() -> list[str]:
    """The registered scorers that score multiple-choice items (and need no partial input)."""
    return [n for n, s in EXAMPLE_SCORERS.items() if s.items and not s.needs_partial]


@dataclass
class ExampleScores:
    """What :func:`score_examples` returns.

    ``columns``: one (N,) array per score, in the order of the scorers; ``classes``: the
    label of each class code; ``folds``: (R, N) the cross-fit fold of every row; ``info``:
    seconds per scorer, the options used, and what scorers report (e.g. the bias).
    """

    columns: dict[str, np.ndarray]
    classes: np.ndarray
    folds: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    def frame(self, ids: Sequence[Any] | None = None, labels: Sequence[Any] | None = None) -> Any:
        """A pandas DataFrame: ``id`` and ``label`` (when given), then one column per score."""
        import pandas as pd

        head: dict[str, Any] = {}
        if ids is not None:
            head["id"] = list(ids)
        if labels is not None:
            head["label"] = list(labels)
        return pd.DataFrame(head | self.columns)

    def correlation(self) -> Any:
        """Spearman rank correlation between the numeric score columns (a DataFrame)."""
        return spearman(self.frame())

    def __repr__(self) -> str:
        n = len(next(iter(self.columns.values()))) if self.columns else 0
        return f"ExampleScores(n={n}, columns={list(self.columns)})"


def spearman(frame: Any) -> Any:
    """Spearman rank correlation of a DataFrame's numeric columns (average ranks for ties,
    pairwise complete rows)."""
    numeric = frame.select_dtypes(include="number")
    return numeric.rank(method="average").corr(method="pearson", min_periods=3)


def resolve_scorers(
    names: Sequence[str] | str | None,
    *,
    has_partial: bool,
    items: bool = False,
    n_folds: int = 5,
    repeats: int = 1,
    options: dict[str, Any] | None = None,
    arguments: Sequence[str] = (),
) -> list[str]:
    """The scorers a call runs, checked with its options before any work: unknown names or
    options (the closest among them and the caller's ``arguments`` named: ``sed`` for
    ``seed``), a scorer needing a partial input without one, a scorer that cannot score
    multiple-choice ``items``, bad fold counts (ValueError or TypeError, one line). On items
    the default is every scorer that scores them."""
    options = options or {}
    for name, v, least in (("n_folds", n_folds, 2), ("repeats", repeats, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
            raise ValueError(f"{name} must be an int >= {least}, got {v!r}")
    if items:
        for_items = item_scorers()
        if has_partial:
            raise ValueError("multiple-choice items are scored without a partial input")
        if names is None:
            names = for_items
    if names is None:
        names = [*DEFAULT_SCORERS, *(["partial"] if has_partial else [])]
    elif isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(dict.fromkeys(names))
    if not names:
        raise ValueError("scorers: name at least one scorer")
    for n in names:
        EXAMPLE_SCORERS.lookup(n)
        if items and not EXAMPLE_SCORERS[n].items:
            raise ValueError(
                f"scorer '{n}' cannot score multiple-choice items (scorers for items: "
                f"{', '.join(for_items)})"
            )
        if EXAMPLE_SCORERS[n].needs_partial and not has_partial:
            raise ValueError(
                f"scorer '{n}' needs a partial input (partial_text= / --partial-text-fields, "
                "or a partial feature matrix)"
            )
    known = scorer_option_names()
    unknown = sorted(set(options) - set(known) - {"dynamics", "probs", "partial_probs"})
    if unknown:
        closest = did_you_mean(unknown[0], [*known, *arguments])
        raise TypeError(f"unknown scorer option(s): {', '.join(unknown)}{closest}")
    return names


def scorer_option_names() -> list[str]:
    """The options the registered scorers take, and those every call takes, sorted."""
    return sorted(set().union(*(s.options for s in EXAMPLE_SCORERS.values())) | _CALL_OPTIONS)


def score_examples(
    features: Any,
    labels: Any,
    *,
    scorers: Sequence[str] | str | None = None,
    partial: Any = None,
    groups: Any = None,
    n_folds: int = 5,
    repeats: int = 1,
    seed: int = 0,
    device: Any = "auto",
    dynamics: Any = None,
    probs: Any = None,
    partial_probs: Any = None,
    **options: Any,
) -> ExampleScores:
    """Per-example difficulty and bias scores of every row, all out of sample.

    Parameters
    ----------
    features, labels:
        (N, d) matrix Phi and (N,) labels (strings or ints); or, for multiple-choice items,
        (N, K, d) features (NaN rows for missing choices) and each item's right choice
        position, scored by the scorers for items (:func:`item_scorers`).
    scorers:
        Names from :data:`aflite.scoring.EXAMPLE_SCORERS` (default: all that need no
        partial input, plus ``partial`` when ``partial`` is given).
    partial:
        Optional (N, d') matrix of a partial input (e.g. hypothesis-only n-grams) for
        ``partial`` and ``pvi_partial``.
    groups:
        Optional (N,) group ids: a group never straddles a fold or a partition.
    n_folds, repeats:
        K folds of each cross-fit, and R cross-fits with fresh folds (scores are averaged
        over them; EL2N averages over seeds this way).
    dynamics:
        Training dynamics to read instead of recording them (e.g.
        :func:`~aflite.scoring.load_cartography_dynamics`, aligned with the rows).
    probs, partial_probs:
        (N, C) out-of-fold class probabilities from the user's own model (classes in the
        sorted order of the labels): ``probs`` is p_x of ``pvi``; ``partial_probs`` a
        partial-input model's, used by ``partial`` and ``pvi_partial`` instead of fitting
        one (so ``partial`` then needs no partial matrix).
    options:
        Scorer options (each scorer's ``options`` in the registry), e.g. ``epochs=10``,
        ``batch_size=128``, ``lr=1e-3``, ``l2=1e-4``, ``el2n_epoch=1``, ``C=1.0``,
        ``n_partitions=64``, ``train_size=0.1``, ``ambiguous_share=1/3``,
        ``easy_confidence=0.5``.

    Examples
    --------
    >>> import numpy as np
    >>> from aflite.scoring import score_examples
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(300, 4)); y = (x[:, 0] > 0).astype(int)
    >>> s = score_examples(x, y, scorers=["pvi", "aum"], device="cpu")
    >>> float(np.median(s.columns["pvi"])) > 0.5
    True
    """
    from aflite._internal.device import resolve_device
    from aflite.algorithm import check_features, encode_groups, encode_labels
    from aflite.scoring.crossfit import crossfit_folds

    items = np.ndim(features) == 3
    names = resolve_scorers(
        scorers,
        has_partial=partial is not None or partial_probs is not None,
        items=items,
        n_folds=n_folds,
        repeats=repeats,
        options=options,
    )
    if items:
        from aflite.algorithm.numerics.item_store import check_choices

        if dynamics is not None or probs is not None:
            raise ValueError("multiple-choice items are scored without dynamics or probs")
        x, y, classes = check_choices(features, labels)
    else:
        x = check_features(features)
        y, classes = encode_labels(labels, x.shape[0])
    g = encode_groups(groups, x.shape[0])
    p = None if partial is None else check_features(partial)
    if p is not None and p.shape[0] != x.shape[0]:
        raise ValueError(f"partial has {p.shape[0]} rows, features {x.shape[0]}")
    opts: dict[str, Any] = {}
    for n in names:
        opts |= EXAMPLE_SCORERS[n].options
    opts |= {k: v for k, v in options.items() if k not in _CALL_OPTIONS}
    if dynamics is not None:
        if dynamics.logits.shape[0] != x.shape[0]:
            raise ValueError(
                f"dynamics hold {dynamics.logits.shape[0]} rows, features {x.shape[0]}"
            )
        opts["dynamics"] = dynamics
    from aflite.scoring.probs import check_probabilities

    for key, given in (("probs", probs), ("partial_probs", partial_probs)):
        if given is not None:
            opts[key] = check_probabilities(given, x.shape[0], len(classes), key)
    for n in names:
        if EXAMPLE_SCORERS[n].check is not None:
            EXAMPLE_SCORERS[n].check(opts)
    rng = np.random.default_rng(seed)
    folds = crossfit_folds(y, n_folds, repeats=repeats, rng=rng, groups=g)
    ctx = ScoringContext(
        x=x,
        y=y,
        n_classes=len(classes),
        folds=folds,
        seed=int(rng.integers(0, 2**62)),
        device=resolve_device(device),
        partial=p,
        groups=g,
        options=opts,
    )
    columns: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    cpu_seconds: dict[str, float] = {}  # of this process: on a shared machine, beside wall time
    for n in names:
        t0, c0 = time.perf_counter(), time.process_time()
        out = EXAMPLE_SCORERS[n].target(ctx)
        seconds[n] = round(time.perf_counter() - t0, 3)
        cpu_seconds[n] = round(time.process_time() - c0, 3)
        for col in EXAMPLE_SCORERS[n].columns:
            if col in out:
                columns[col] = np.asarray(out[col])
    recorded = dynamics if dynamics is not None else ctx.cache.get("dynamics")
    info = {
        "scorers": names,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "n_folds": n_folds,
        "repeats": repeats,
        "seed": seed,
        "device": str(ctx.device),
        "options": {k: v for k, v in opts.items() if k not in _GIVEN},
        "dynamics": None if recorded is None else recorded.info,
    } | ctx.info
    return ExampleScores(columns, classes, folds, info)
