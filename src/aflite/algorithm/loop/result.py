"""``FilterResult``: what a filtering run kept, removed and measured. Saved as JSON + npz."""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite._internal.text import plural

__all__ = ["PhaseRecord", "FilterResult", "STOP_REASONS", "kept_fingerprint"]

STOP_REASONS = {
    "target_size": "target size reached",
    "threshold": "fewer than slice_size instances at or above the threshold",
    "chance": "representation bias at the chance level plus min_bias",
    "single_shot": "single-shot baseline: one phase, most predictable removed down to the target",
    "by_score": "target size reached, the easiest rows by a given per-example score removed",
}


@dataclass
class PhaseRecord:
    """One phase of the filter.

    ``representation_bias`` is the mean predictability of the scored rows of the set before
    removal: the estimate of R(Phi, S, M) at that point. ``chance`` is the majority-class rate
    of that set: a linear model that learned nothing but the label prior scores this much.
    ``solver`` says how the phase's fits ended (solver, iterations, worst relative gradient
    norm, classifiers stopped by the iteration cap).
    """

    phase: int
    size_before: int
    n_removed: int
    n_eligible: int
    representation_bias: float
    class_counts: dict[str, int]
    seconds: float
    score_histogram: list[int] = field(default_factory=list)
    chance: float = float("nan")
    solver: dict[str, Any] = field(default_factory=dict)
    # the score dividing the rows the phase removed from those it kept (None: it removed none),
    # and how many rows another seed is expected to put on the other side of it
    cut: float | None = None
    contested: float | None = None


@dataclass
class FilterResult:
    """Outcome of :func:`aflite.filter`.

    Attributes
    ----------
    kept:
        Sorted input row indices that survived.
    removed:
        Input row indices in the order they were removed.
    removed_phase, removed_score:
        Phase (0-based) in which each removed row left, and its predictability then.
    kept_scores:
        Predictability of each kept row in a final scoring phase on the kept set (NaN where a
        row was never held out), aligned with ``kept``.
    removed_se, kept_se:
        The standard error of each removed row's removal score, and of each kept row's score
        in the last phase (:func:`aflite.algorithm.loop.settle.standard_errors`).
    kept_phase_score:
        Each kept row's score in the last phase: the one its decision to stay rests on.
    final_bias:
        Representation-bias estimate of the kept set (mean of ``kept_scores``).
    history:
        One :class:`PhaseRecord` per filtering phase.
    stop_reason:
        A key of ``STOP_REASONS``; ``stop_message`` says it in words with the numbers.
    """

    kept: np.ndarray
    removed: np.ndarray
    removed_phase: np.ndarray
    removed_score: np.ndarray
    kept_scores: np.ndarray
    final_bias: float
    history: list[PhaseRecord]
    stop_reason: str
    stop_message: str
    classes: list[Any]
    n_input: int
    params: dict[str, Any]
    removed_se: np.ndarray | None = None
    kept_se: np.ndarray | None = None
    kept_phase_score: np.ndarray | None = None

    @property
    def initial_bias(self) -> float:
        """Representation-bias estimate of the input (first phase)."""
        return self.history[0].representation_bias if self.history else self.final_bias

    @property
    def initial_chance(self) -> float:
        """Chance level of the input (first phase)."""
        return self.history[0].chance if self.history else float("nan")

    @property
    def final_chance(self) -> float:
        """Chance level of the kept rows, as each phase measures it (the majority-class rate;
        for multiple-choice items the best position-only guess)."""
        if "kept_chance" in self.params:
            return float(self.params["kept_chance"])
        # results saved before the rule was recorded: the kept rows' majority-class rate
        counts = np.asarray(self.params.get("kept_class_counts", []), dtype=float)
        return float(counts.max() / counts.sum()) if counts.sum() > 0 else float("nan")

    def scores(self) -> np.ndarray:
        """(n_input,) one score per input row: removal score if removed, final score if kept."""
        out = np.full(self.n_input, np.nan)
        out[self.removed] = self.removed_score
        out[self.kept] = self.kept_scores
        return out

    def decisions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n_input,) per row: the score its decision rests on (removal score, or the kept
        row's score in the last phase), its standard error, and its margin to the cut of the
        phase that decided it (> 0: above the cut, removed; < 0: below it, kept). NaN where
        unknown (rows dropped before filtering, results saved before these were recorded)."""
        score, se, margin = (np.full(self.n_input, np.nan) for _ in range(3))
        if self.removed_se is None or self.kept_se is None or self.kept_phase_score is None:
            return score, se, margin
        cuts = np.array([np.nan if h.cut is None else h.cut for h in self.history] + [np.nan])
        last = next((h.cut for h in reversed(self.history) if h.cut is not None), None)
        phase = np.asarray(self.removed_phase, dtype=np.int64)
        removed = self.removed[phase >= 0]
        score[removed] = self.removed_score[phase >= 0]
        se[removed] = self.removed_se[phase >= 0]
        margin[removed] = score[removed] - cuts[phase[phase >= 0]]
        score[self.kept] = self.kept_phase_score
        se[self.kept] = self.kept_se
        margin[self.kept] = self.kept_phase_score - (np.nan if last is None else last)
        return score, se, margin

    @property
    def expected_overlap(self) -> float:
        """Deprecated: the Jaccard index of this run's removed set and a second seed's, as
        measured by ``check_seed`` (``params["seed_check"]["jaccard"]``), NaN without one.
        It was once modelled from the scores' standard errors, which missed by up to 0.09."""
        warnings.warn(
            "FilterResult.expected_overlap is deprecated: run with check_seed= and read "
            "params['seed_check']['jaccard']",
            DeprecationWarning,
            stacklevel=2,
        )
        check = self.params.get("seed_check")
        return float(check["jaccard"]) if check else float("nan")

    def fingerprint(self, ids: Any = None) -> str:
        """The kept set's fingerprint: the first 12 hex digits of the SHA-256 of the kept rows'
        ids (as text, sorted, one a line; default: the row positions). The same command on
        the same data gives the same fingerprint on any machine."""
        return kept_fingerprint(self.kept if ids is None else [ids[i] for i in self.kept])

    def summary(self, *, dropped_by: str = "drop_ids") -> str:
        """A few lines for a terminal. Rows removed before filtering (phase -1, see
        :meth:`with_dropped`) are counted apart, as removed ``by`` the option ``dropped_by``
        that named them."""
        t = self.params.get("train_size")
        after = (
            f"{self.final_bias:.3f}"
            if not np.isnan(self.final_bias)
            else f"not measured (the kept rows were not re-scored at t = {t})"
        )
        n_dropped = int(np.count_nonzero(np.asarray(self.removed_phase) < 0))
        by_phase = f"{len(self.removed) - n_dropped} in {plural(len(self.history), 'phase')}"
        # rows in neither split: set aside for a warm-up model before filtering
        apart = self.n_input - len(self.kept) - len(self.removed)
        return (
            f"kept {len(self.kept)} of {plural(self.n_input, self.params.get('unit', 'row'))}, "
            f"removed {by_phase}"
            + (f" and {n_dropped} by {dropped_by}" if n_dropped else "")
            + (f", {apart} set aside for the warm-up" if apart > 0 else "")
            + f"\nrepresentation bias {self.initial_bias:.3f} -> {after} "
            f"(chance {self.initial_chance:.3f} -> {self.final_chance:.3f})\n"
            f"stopped: {self.stop_message}"
        )

    def with_dropped(
        self, rest: np.ndarray, dropped: np.ndarray, n_input: int | None = None
    ) -> FilterResult:
        """This result (over rows ``rest``) in the positions of a larger input of ``n_input``
        rows (default: ``rest`` and ``dropped``) whose rows ``dropped`` were removed before
        filtering: those come first among the removed rows, with phase -1 and no score. Rows
        in neither (a warm-up model's) are in neither split."""
        import dataclasses

        return dataclasses.replace(
            self,
            kept=rest[self.kept],
            removed=np.r_[dropped, rest[self.removed]].astype(np.int64),
            removed_phase=np.r_[np.full(len(dropped), -1), self.removed_phase].astype(np.int64),
            removed_score=np.r_[np.full(len(dropped), np.nan), self.removed_score],
            removed_se=None
            if self.removed_se is None
            else np.r_[np.full(len(dropped), np.nan), self.removed_se],
            n_input=self.n_input + len(dropped) if n_input is None else n_input,
        )

    def __repr__(self) -> str:
        # sizes and figures only: the arrays run to the size of the input; and which options
        # ran, since aflite.filter's defaults are not the command line's
        options = self.params.get("options")
        return (
            f"FilterResult(n_input={self.n_input}, kept={len(self.kept)}, "
            f"removed={len(self.removed)}, phases={len(self.history)}, "
            f"stop_reason={self.stop_reason!r}, initial_bias={self.initial_bias:.3f}, "
            f"final_bias={self.final_bias:.3f}"
            + ("" if options is None else f", options={options!r}")
            + ")"
        )

    # --- persistence (JSON for metadata, npz for arrays; no pickle) ---
    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``result.json`` and ``result.npz`` into ``directory`` (created if needed)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        meta = {
            "final_bias": _nan_to_none(self.final_bias),
            "history": [
                {
                    **asdict(h),
                    "representation_bias": _nan_to_none(h.representation_bias),
                    "chance": _nan_to_none(h.chance),
                }
                for h in self.history
            ],
            "stop_reason": self.stop_reason,
            "stop_message": self.stop_message,
            "classes": [_jsonable(c) for c in self.classes],
            "n_input": self.n_input,
            "params": self.params,
        }
        with atomic_path(d / "result.npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez(
                    fh,
                    kept=self.kept,
                    removed=self.removed,
                    removed_phase=self.removed_phase,
                    removed_score=self.removed_score,
                    kept_scores=self.kept_scores,
                    **{
                        k: v
                        for k, v in (
                            ("removed_se", self.removed_se),
                            ("kept_se", self.kept_se),
                            ("kept_phase_score", self.kept_phase_score),
                        )
                        if v is not None
                    },
                )
        with atomic_path(d / "result.json") as tmp:
            tmp.write_text(json.dumps(meta, indent=2))
        return d

    @classmethod
    def load(cls, directory: str | os.PathLike) -> FilterResult:
        """Read a result written by :meth:`save`."""
        d = Path(directory)
        meta = json.loads((d / "result.json").read_text())
        with np.load(d / "result.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        history = [
            PhaseRecord(
                **{
                    **h,
                    "representation_bias": _none_to_nan(h["representation_bias"]),
                    "chance": _none_to_nan(h.get("chance")),
                }
            )
            for h in meta["history"]
        ]
        return cls(
            kept=arrays["kept"],
            removed=arrays["removed"],
            removed_phase=arrays["removed_phase"],
            removed_score=arrays["removed_score"],
            kept_scores=arrays["kept_scores"],
            final_bias=_none_to_nan(meta["final_bias"]),
            history=history,
            stop_reason=meta["stop_reason"],
            stop_message=meta["stop_message"],
            classes=meta["classes"],
            n_input=meta["n_input"],
            params=meta["params"],
            removed_se=arrays.get("removed_se"),
            kept_se=arrays.get("kept_se"),
            kept_phase_score=arrays.get("kept_phase_score"),
        )


def kept_fingerprint(ids: Any) -> str:
    """First 12 hex digits of the SHA-256 of ``ids`` as text, sorted, one a line."""
    import hashlib

    text = "\n".join(sorted(str(i) for i in ids))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _jsonable(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _nan_to_none(v: float) -> float | None:
    return None if v is None or np.isnan(v) else float(v)


def _none_to_nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)
