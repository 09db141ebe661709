"""``aflite audit --compare`` against a filter run: read the kept rows and the representation
the run filtered with from its ``summary.json``, so the audit's bias is the run's quantity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aflite.errors import DataError

__all__ = ["compare_source", "run_train_size"]

DEFAULT_FEATURES = "ngrams"


def _run_summary(p: Path) -> tuple[Path, dict[str, Any]] | None:
    """(run folder, its summary) when ``p`` is a filter run's folder or one of its row files."""
    run_dir = p if p.is_dir() and (p / "summary.json").is_file() else p.parent
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or summary.get("kind", "filter") != "filter":
        return None
    outputs = summary.get("outputs") if isinstance(summary.get("outputs"), dict) else {}
    if run_dir != p and p.name not in outputs.values():
        return None  # a file that merely sits beside a run
    return run_dir, summary


def _describe(options: dict[str, Any]) -> tuple[str, bool]:
    """The run's representation in words, and whether the audit can build it again."""
    features = str(options.get("features") or DEFAULT_FEATURES)
    kind = features.split(":", 1)[0]
    if options.get("warmup_fraction") is not None or options.get("warmup_finetune"):
        return f"{features} through a warm-up model", False
    from aflite.features.registry import FEATURE_KINDS

    # only a kind built from text alone can be built again from the kept rows
    entry = FEATURE_KINDS.get(kind)
    return features, entry is not None and entry.needs_text


def compare_source(compare: str, features: str | None) -> tuple[str, str, str | None]:
    """(file to read, feature spec to measure both sets with, a one-line note or None).

    ``compare`` may be any data file, a filter run's folder (its kept rows are read) or a row
    file of such a run. With no ``features`` given, a run's own representation is used where
    it can be rebuilt; otherwise the note says which representation the figures measure.
    """
    p = Path(compare)
    found = _run_summary(p)
    if found is None:
        return compare, features or DEFAULT_FEATURES, None
    run_dir, summary = found
    if p == run_dir:
        kept = (summary.get("outputs") or {}).get("kept")
        if not isinstance(kept, str) or Path(kept).name != kept or not (run_dir / kept).exists():
            raise DataError(f"{run_dir}: the run's summary.json names no kept rows to compare")
        p = run_dir / kept
    options = summary.get("options") if isinstance(summary.get("options"), dict) else {}
    run_features, rebuilt = _describe(options)
    if features is None:
        if rebuilt:
            return (
                str(p),
                run_features,
                (
                    f"measuring with the run's representation, --features {run_features} "
                    f"(from {run_dir / 'summary.json'})"
                ),
            )
        return (
            str(p),
            DEFAULT_FEATURES,
            (
                f"note: the run in {run_dir} filtered with {run_features}, which cannot be built "
                f"again here; the bias figures measure --features {DEFAULT_FEATURES} instead"
            ),
        )
    if features != run_features:
        return (
            str(p),
            features,
            (
                f"note: the run in {run_dir} filtered with {run_features}; the bias figures "
                f"measure --features {features} instead, so they differ from the run's"
            ),
        )
    return str(p), features, None


def run_train_size(compare: str) -> int | None:
    """t (training rows per partition) of the filter run ``compare`` belongs to, if any."""
    found = _run_summary(Path(compare))
    if found is None:
        return None
    t = (found[1].get("parameters") or {}).get("train_size")
    return t if isinstance(t, int) and not isinstance(t, bool) else None
