"""What a run's report and summary text warn about: a class balance that moved, and kept rows
that models predict worse than chance (a new artifact, not a cleaner set); and the text a
filter run prints when it ends (:func:`outcome_text`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.reports.audit_pairs import audit_base, audit_tag
from aflite.reports.data import ReportData

__all__ = [
    "DRIFT_WARNING",
    "BELOW_CHANCE_MARGIN",
    "audit_warnings",
    "label_drift",
    "outcome_lines",
    "outcome_text",
    "run_warnings",
    "stop_hint",
    "warning_facts",
]

DRIFT_WARNING = 0.05  # a label's share moving more than this (0-1) is warned about
BELOW_CHANCE_MARGIN = 0.02  # as min_bias's default: noise of a bias estimate on small sets


def label_drift(before: dict[str, int], after: dict[str, int]) -> tuple[str, float]:
    """The label whose share moved most between two count tables, and by how much (0-1)."""
    nb, na = sum(before.values()) or 1, sum(after.values()) or 1
    moves = {k: abs(after.get(k, 0) / na - before.get(k, 0) / nb) for k in set(before) | set(after)}
    if not moves:
        return "", 0.0
    label = max(sorted(moves), key=lambda k: moves[k])
    return label, moves[label]


def _number(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _is_kept(audit: dict[str, Any]) -> bool:
    return audit_tag(audit)[1] == "kept"


def _figures(audits: list[dict[str, Any]]) -> list[tuple[str, tuple[Any, ...], float, float]]:
    """Each accuracy-like figure (``accuracy``, ``estimate``) with a ``majority class`` column:
    the audit's name, a key matching it across sets (the name without the set's tag, the
    metric, the row's text cells), the figure and its majority class."""
    out = []
    for audit in audits:
        table = audit.get("table") or {}
        header = list(table.get("header") or [])
        if "majority class" not in header:
            continue
        name = str(audit.get("name", "audit"))
        base, m = audit_base(name), header.index("majority class")
        for metric in ("accuracy", "estimate"):
            if metric not in header:
                continue
            j = header.index(metric)
            for i, row in enumerate(table.get("rows") or []):
                value, chance = _number(row[j]), _number(row[m])
                if value is not None and chance is not None:
                    cells = tuple(c for c in row if isinstance(c, str)) or (i,)
                    out.append((name, (base, metric, cells), value, chance))
    return out


def audit_warnings(
    audits: list[dict[str, Any]],
    *,
    rows: str = "the kept rows",
    margin: float = BELOW_CHANCE_MARGIN,
    reference: list[dict[str, Any]] | None = None,
) -> list[str]:
    """Accuracy-like numbers (``accuracy``, ``estimate``) of audits run on one set (``rows``:
    the kept rows of a run, the set ``aflite audit --compare`` reads) below their
    ``majority class`` column by more than ``margin``: models trained there pick the wrong
    label more often than the majority rate. ``reference``: the same audits on the set it is
    compared with (INPUT); a figure whose reference is at least as far below its own majority
    class is left out, as the set compared did not fall there."""
    ref = {key: chance - value for _, key, value, chance in _figures(reference or [])}
    out = []
    for name, key, value, chance in _figures(audits):
        gap = chance - value
        # INPUT as far below: the set compared did not fall there, so nothing new to say
        if not value < chance - margin or ref.get(key, -math.inf) >= gap:
            continue
        out.append(
            f"{name}: {key[1]} {value:.3f} is {gap:.3f} below the majority class ({chance:.3f}) "
            f"on {rows}"
        )
    return out


MIN_TRAIN_PER_CLASS = 10  # fewer training rows per class than this: the scores are noise


def _small_training_part(summary: dict[str, Any], nouns: str = "rows") -> str | None:
    """One line when each classifier's training part is so small that its scores say little."""
    params = summary.get("parameters") or {}
    counts = summary.get("counts") or {}
    t = params.get("train_size")
    n = sum((counts.get("labels_before") or {}).values())
    n_classes = len(counts.get("labels_before") or {})
    if not isinstance(t, int) or not n or t >= MIN_TRAIN_PER_CLASS * max(1, n_classes):
        return None
    m = params.get("n_partitions", "the")
    # multiple-choice items have answers, not classes: the same floor per answer position
    per = "per class" if nouns == "rows" else "per answer position"
    what = "the label" if nouns == "rows" else "the answer"
    # the training part is what is small, whatever the size of the data
    return (
        f"small training part: each of {m} classifiers trains on {t} of {n} {nouns} "
        f"(--train-size) and is scored on the other {n - t}; with fewer than "
        f"{MIN_TRAIN_PER_CLASS} training {nouns} {per} the scores say little about {what} "
        "and these figures are mostly noise"
    )


def run_warnings(
    summary: dict[str, Any],
    report: ReportData | None = None,
    *,
    margin: float = BELOW_CHANCE_MARGIN,
    nouns: str = "rows",
) -> list[str]:
    """Plain-text warnings for a run, from its ``summary.json`` and its report data; ``nouns``:
    what the run filtered ("items" for multiple-choice items)."""
    out = []
    counts = summary.get("counts", {})
    before, kept = counts.get("labels_before", {}), counts.get("labels_kept", {})
    label, moved = label_drift(before, kept)
    balanced = (summary.get("parameters") or {}).get("balance") == "classes"
    if moved > DRIFT_WARNING and not balanced:
        share_b = before.get(label, 0) / (sum(before.values()) or 1)
        share_a = kept.get(label, 0) / (sum(kept.values()) or 1)
        out.append(
            f"the share of label {label} moved by {100 * moved:.1f} points ({100 * share_b:.1f}% "
            f"-> {100 * share_a:.1f}%); --balance classes keeps the label distribution"
        )
    tiny = _small_training_part(summary, nouns)
    if tiny:
        out.append(tiny)
    rb = summary.get("representation_bias") or {}
    after, chance = _number(rb.get("after")), _number(rb.get("chance_after"))
    guess = _number((summary.get("items") or {}).get("guess"))
    chance_text = "" if chance is None else f"{chance:.3f}"
    wrong = "the wrong label more often than the majority rate"
    if chance is not None and guess is not None and guess < chance:
        # items: the choice-wise model guesses among an item's choices (mean 1/K) when it
        # finds nothing; below the answer-position share but not below that is no artifact.
        # Named, since the summary line's chance is the answer-position share.
        chance = guess
        chance_text = f"{guess:.3f}, a guess among each item's choices"
        wrong = "the wrong choice more often than a guess"
    if (
        after is not None
        and chance is not None
        and after < chance - margin
        and not counts.get("removed", 1)
    ):
        # nothing was removed, so stopping earlier changes nothing: the input itself is so
        out.append(
            f"the representation bias {after:.3f} is {chance - after:.3f} below chance "
            f"({chance_text}) with nothing removed: these features do not predict the label on "
            f"these {nouns}, so there was nothing to filter"
        )
    elif after is not None and chance is not None and after < chance - margin:
        out.append(
            f"the kept {nouns}' representation bias {after:.3f} is {chance - after:.3f} below chance "
            f"({chance_text}): models trained on them pick {wrong}, a new artifact rather than a "
            "cleaner set; stop earlier with --min-bias, a smaller --slice-size or a larger "
            "--target-size"
        )
    audits = (report.audits or []) if report else []
    # the same rule as ``aflite audit --compare``: news only where the input was not as far below
    before = [a for a in audits if audit_tag(a)[1] == "before"]
    out += audit_warnings(
        [a for a in audits if _is_kept(a)],
        rows=f"the kept {nouns}",
        margin=margin,
        reference=before,
    )
    return out


def stop_hint(result: Any, threshold: float) -> str | None:
    """One line when a run stopped on the threshold far from its target while its kept rows
    are still clearly predictable, naming the flag to change."""
    target = result.params.get("target_size")
    if result.stop_reason != "threshold" or not target:
        return None
    # min_bias off: the margin of min_bias's default
    margin = result.params.get("min_bias") or BELOW_CHANCE_MARGIN
    if not np.isnan(result.final_bias) and result.final_bias <= result.final_chance + margin:
        return None
    left = len(result.kept) - int(target)
    if left <= 0.1 * result.n_input:
        return None
    return (
        f"note: stopped on the threshold with {len(result.kept)} rows, {left} above the target "
        f"{target} and bias {result.final_bias:.3f} vs chance {result.final_chance:.3f}: "
        f"lower --threshold (now {threshold:g}) to remove more"
    )


def one_set_note(family: str | None) -> str | None:
    """One line when the family that ran cannot promise one filtered set: its fits stop at a
    tolerance, so where a prediction sits near zero margin another row order or machine can
    flip it (the same seed and thread count still keep the same rows here)."""
    if family is None:
        return None
    from aflite.algorithm.models import MODELS

    name = MODELS.canonical(family)
    if name is None or MODELS.lookup(name).exact:
        return None
    return (
        f"note: {MODELS.lookup(name).title()}'s kept set can move with the row order of "
        "the input or another machine, where a prediction sits near zero margin (its fits stop "
        "at a tolerance); the exact family, --model ridge (the default), keeps one set"
    )


def warning_facts(result: Any, labels: Sequence[Any], *, items: Any = None) -> dict[str, Any]:
    """What :func:`run_warnings` reads of a ``summary.json``, for a filter ``result`` over
    ``labels`` (the rows it filtered) when no summary is written (``experiment compare``);
    ``items``: the multiple-choice items (:class:`~aflite.io.choices.Choices`) it filtered."""
    from aflite._internal.labels import label_counts

    y = np.asarray(labels)
    facts: dict[str, Any] = {
        "parameters": result.params,
        "counts": {
            "removed": len(result.removed),
            "labels_before": label_counts(y),
            "labels_kept": label_counts(y[result.kept]),
        },
        "representation_bias": {"after": result.final_bias, "chance_after": result.final_chance},
    }
    if items is not None:
        facts["items"] = items.as_dict()
    return facts


def seed_check_line(check: dict[str, Any], nouns: str = "rows") -> str:
    """One line on what a second seed (``check_seed``) removed of the same rows."""
    return (
        f"seed check: seed {check['seed']} removed {check['removed']:,} {nouns}, "
        f"{check['removed_by_both']:,} of them also removed by this run (removed-set Jaccard "
        f"{check['jaccard']:.3f})"
    )


def outcome_lines(
    result: Any,
    summary: dict[str, Any],
    report: ReportData | None = None,
    *,
    fields_note: str = "",
    items: Any = None,
) -> list[str]:
    """The notes and warnings printed after a filter run (``aflite filter``, and ``aflite
    experiment compare`` for its filter of D): which fields were picked (``fields_note``),
    how the answers of ``items`` were read, a hint when it stopped far from its target, then
    each of :func:`run_warnings` as ``warning: ...``."""
    lines = [fields_note] if fields_note else []
    if items is not None:
        lines.append(f"{items.note()}; chance level {items.chance():.3f}")
    threshold = result.params.get("threshold")  # None: ranked by a given score (--by)
    hint = None if threshold is None else stop_hint(result, float(threshold))
    if hint:
        lines.append(hint)
    promise = one_set_note(result.params.get("model_family"))
    if promise:
        lines.append(promise)
    nouns = "rows" if items is None else "items"
    return lines + [f"warning: {w}" for w in run_warnings(summary, report, nouns=nouns)]


def outcome_text(
    result: Any,
    summary: dict[str, Any],
    report: ReportData,
    *,
    out: Path,
    names: dict[str, str],
    n_warmup: int,
    dropped_by: str = "--drop-ids",
    fields_note: str = "",
    items: Any = None,
) -> tuple[str, list[str]]:
    """What is printed after a filter run: the result (rows a reviewer dropped counted apart,
    as ``dropped_by`` dropped them) and where the outputs are, then the notes and warnings
    (one line each, :func:`outcome_lines`)."""
    shown = [v for k, v in names.items() if k != "report"] + (
        [names["report"]] if "report" in names else []
    )
    audits = [
        f"audit ({a.get('tag', '')}): {a['summary']}"
        for a in report.audits or []
        if a.get("summary")
    ]
    check = result.params.get("seed_check")
    text = (
        f"{result.summary(dropped_by=dropped_by)}\n"
        f"kept set fingerprint {summary['kept_fingerprint']}\n"
        # a result, beside the fingerprint it qualifies: on standard output with it
        + (f"{seed_check_line(check, 'rows' if items is None else 'items')}\n" if check else "")
        + "".join(f"{line}\n" for line in audits)
        # only a run that split off warm-up rows says so (never items: they take no warm-up)
        + (f"warm-up rows: {n_warmup}\n" if n_warmup else "")
        + f"outputs in {out}/: "
        + ", ".join(shown)
    )
    return text, outcome_lines(result, summary, report, fields_note=fields_note, items=items)
