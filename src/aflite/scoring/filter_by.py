"""Remove rows by any per-example score in a single pass: ``aflite filter --by SCORER[:COLUMN]``.

Every row is scored once (out of sample, as by :func:`~aflite.scoring.score_examples`) and the
easiest rows by that column are removed down to the target size; a :class:`FilterResult`
with one phase comes back, so the filter job writes its usual outputs. The representation
bias before and after is AFLITE's (mean predictability, at the same t), so runs by any score
compare with the adversarial filter.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from aflite.errors import DataError
from aflite.scoring.registry import EXAMPLE_SCORERS

__all__ = ["filter_by_score", "parse_by"]

_HIST_BINS = 20  # as the filter's phases


def parse_by(spec: str) -> tuple[str, str, bool]:
    """``SCORER[:COLUMN]`` -> (scorer, column, lower_is_easier); the column defaults to the
    scorer's first. A one-line DataError names what is wrong (unknown scorer or column, a
    scorer that needs a partial input, the non-numeric region)."""
    from aflite.scoring import builtin as _builtin  # noqa: F401  (registers the built-ins)

    name, _, column = spec.partition(":")
    scorer = EXAMPLE_SCORERS.get(name)
    if scorer is None:
        raise DataError(f"--by: unknown scorer '{name}' (use any of {', '.join(EXAMPLE_SCORERS)})")
    if scorer.needs_partial:
        raise DataError(f"--by: scorer '{name}' needs a partial input, which filter does not take")
    column = column or scorer.columns[0]
    numeric = [c for c in scorer.columns if c != "region" and not c.endswith("_partial")]
    if column not in numeric:
        raise DataError(
            f"--by: '{name}' has no score column '{column}' (columns: {', '.join(numeric)})"
        )
    return name, column, column in scorer.lower_is_easier


def _pick(
    ease: np.ndarray, codes: np.ndarray, n_remove: int, balance: str | None, rng: Any
) -> np.ndarray:
    """The ``n_remove`` easiest rows, easiest first; ties in random order, never row order."""
    n = len(ease)
    order = np.lexsort((rng.permutation(n), -np.nan_to_num(ease, nan=-np.inf)))
    if balance is None:
        return order[:n_remove]
    # every class loses its share of n_remove (largest remainder), so the label mix stays
    sizes = np.bincount(codes)
    exact = n_remove * sizes / n
    quota = np.floor(exact).astype(int)
    rest = n_remove - quota.sum()
    quota[np.argsort(-(exact - quota), kind="stable")[:rest]] += 1
    taken = np.zeros(len(sizes), dtype=int)
    out = []
    for i in order:
        if taken[codes[i]] < quota[codes[i]]:
            taken[codes[i]] += 1
            out.append(i)
    return np.asarray(out, dtype=np.int64)


def filter_by_score(
    features: Any,
    labels: Any,
    *,
    by: str,
    target_size: int | float,
    n_partitions: int = 64,
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
    representation bias of what remains is measured after each slice: the run stops once it
    is within ``min_bias`` of the chance level, as AFLITE's chance stop does, so a score that
    keeps ranking rows after the artifact is gone does not push the set below chance.

    Returns a :class:`~aflite.FilterResult` with one phase per slice (one in all without
    ``slice_size``): ``removed`` easiest first with
    their score in ``removed_score``, ``kept_scores`` the kept rows' predictability on the
    kept set, the bias before and after as AFLITE measures it (``n_partitions``, t =
    ``train_size``). ``options`` go to the scorer (e.g. ``epochs=5``).
    """
    from aflite.algorithm import FilterResult, PhaseRecord, predictability_scores
    from aflite.algorithm._validation import encode_labels, resolve_size, resolve_slice_size
    from aflite.scoring.run import score_examples

    name, column, lower = parse_by(by)
    shown = name if column == name else f"{name}:{column}"
    start = time.perf_counter()
    codes, classes = encode_labels(labels, np.asarray(features).shape[0])
    n_input = len(codes)
    n = resolve_size(target_size, n_input, "target_size")
    t = resolve_size(train_size, n_input, "train_size")
    if not 0 < n < n_input:
        raise ValueError(f"target_size must be between 1 and {n_input - 1} rows, got {n}")
    if balance not in (None, "classes"):
        raise ValueError(f"balance must be None or 'classes', got {balance!r}")
    # before any scoring: a bad slice size must not cost a scoring pass
    k = n_input - n if slice_size is None else resolve_slice_size(slice_size, n_input)
    phase = dict(n_partitions=n_partitions, train_size=t, groups=groups, seed=seed, device=device)
    opts = dict(options) | (
        {"n_partitions": n_partitions, "train_size": t} if name == "predictability" else {}
    )
    scored = score_examples(
        features, codes, scorers=[name], groups=groups, seed=seed, device=device, **opts
    )
    value = np.asarray(scored.columns[column], dtype=np.float64)
    if name == "predictability":
        pred = value  # the same phase: no need to run it twice
    else:
        pred = predictability_scores(features, codes, **phase).scores
    order = _pick(
        -value if lower else value, codes, n_input - n, balance, np.random.default_rng(seed)
    )
    kc = np.bincount(codes, minlength=len(classes))
    valid = pred[~np.isnan(pred)]
    bias = float(valid.mean()) if len(valid) else float("nan")
    chance = float(kc.max() / kc.sum())
    n_finite = int(np.isfinite(value).sum())
    direction = "lowest" if lower else "highest"
    history: list[Any] = []
    n_picked, stop = 0, "by_score"
    kept_scores = pred
    kept = np.arange(n_input)
    phase_of: list[int] = []
    while n_picked < len(order):
        step = min(k, len(order) - n_picked)
        if min_bias is not None and bias <= chance + min_bias:
            stop, step = "chance", 0
        history.append(
            PhaseRecord(
                phase=len(history),
                size_before=n_input - n_picked,
                n_removed=step,
                n_eligible=n_finite - n_picked,
                representation_bias=bias,
                class_counts={str(c): int(v) for c, v in zip(classes, kc)},
                seconds=time.perf_counter() - start,
                score_histogram=np.histogram(valid, bins=_HIST_BINS, range=(0.0, 1.0))[0].tolist(),
                chance=chance,
                solver={"by": shown, "seconds": scored.info["seconds"]},
            )
        )
        if step == 0:
            break
        phase_of.extend([len(history) - 1] * step)
        n_picked += step
        kept = np.setdiff1d(np.arange(n_input), order[:n_picked])
        kept_scores = np.full(len(kept), np.nan)
        if len(kept) > t:
            phase["groups"] = None if groups is None else np.asarray(groups)[kept]
            kept_scores = predictability_scores(
                np.asarray(features)[kept], codes[kept], **phase
            ).scores
        valid = kept_scores[~np.isnan(kept_scores)]
        bias = float(valid.mean()) if len(valid) else float("nan")
        kc = np.bincount(codes[kept], minlength=len(classes))
        chance = float(kc.max() / kc.sum())
    picked = order[:n_picked]
    params = {
        "target_size": n,
        "n_partitions": n_partitions,
        "train_size": t,
        "slice_size": k,
        "threshold": None,
        "strategy": "by_score",
        "by": shown,
        "min_bias": min_bias,
        "balance": balance,
        "model": "linear",
        "seed": seed,
        "device": scored.info["device"],
        "grouped": groups is not None,
        "backend": "local",
        "scorer_options": scored.info["options"],
        "kept_class_counts": kc.tolist(),
    }
    return FilterResult(
        kept=kept,
        removed=picked.astype(np.int64),
        removed_phase=np.asarray(phase_of, dtype=np.int64),
        removed_score=value[picked],
        kept_scores=kept_scores,
        final_bias=bias,
        history=history,
        stop_reason=stop,
        stop_message=(
            f"representation bias at the chance level plus min_bias ({bias:.3f} <= "
            f"{chance:.3f} + {min_bias}) after removing the {len(picked)} rows with the "
            f"{direction} {column}; {len(kept)} rows kept"
            if stop == "chance"
            else f"by {shown}: the {len(picked)} rows with the {direction} {column} removed; "
            f"{len(kept)} rows kept"
        ),
        classes=[c.item() if isinstance(c, np.generic) else c for c in classes],
        n_input=n_input,
        params=params,
    )
