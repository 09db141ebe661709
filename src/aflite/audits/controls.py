"""Random-subset controls: whenever a smaller set (the kept rows) is compared with a larger
one, a random subset of the smaller set's size is measured the same way beside it, because
nearest-neighbour distances and out-of-sample estimates move with the number of rows alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.algorithm import FilterResult

__all__ = ["random_control", "bias_with_control"]


def random_control(n: int, size: int, *, seed: int = 0) -> np.ndarray:
    """Sorted positions of a random subset of ``size`` of ``n`` rows: the control a smaller
    (filtered) set is compared with, since distances and estimates move with size alone."""
    # a generator of its own, so the control does not shift the report's other draws
    rng = np.random.default_rng([seed, 0x5EED])
    return np.sort(rng.choice(n, size, replace=False))


def bias_with_control(
    x: np.ndarray,
    labels: np.ndarray,
    result: FilterResult,
    control: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The representation bias of a random subset of the kept size, scored like the kept rows:
    the same t (a count), the same number of partitions."""
    from aflite.algorithm import predictability_scores

    t = int(result.params["train_size"])
    out: dict[str, Any] = {
        "train_size": t,
        "size": int(len(control)),
        "before": result.initial_bias,
        "kept": result.final_bias,
        "random": None,
    }
    if t >= len(control):
        out["note"] = f"t = {t} leaves none of the {len(control)} rows held out"
        return out
    ps = predictability_scores(
        np.ascontiguousarray(x[control], dtype=np.float32),
        labels[control],
        n_partitions=int(result.params["n_partitions"]),
        train_size=t,
        groups=None if groups is None else groups[control],
        seed=seed,
        device=str(result.params.get("device", "auto")),
        copy=False,  # a fresh subset: standardised where it is, not copied again
    )
    out["random"] = ps.representation_bias
    return out
