"""``aflite audit --compare`` against a filter run: read the kept rows and the representation
the run filtered with from its ``summary.json``, so the audit's bias is the run's quantity."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aflite.errors import DataError

__all__ = ["CompareSource", "compare_source", "run_train_size"]

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


@dataclass(frozen=True)
class CompareSource:
    """What ``--compare`` names: the file to read, the representation both sets are measured
    with (a feature spec over ``fields``, the text fields it reads) and a one-line note."""

    path: str
    features: str
    fields: tuple[str, ...]
    note: str | None = None


def _run_fields(summary: dict[str, Any], options: dict[str, Any]) -> tuple[str, ...]:
    """The text fields the run's representation read (its resolved fields, picks included)."""
    read = summary.get("fields")
    fields = read.get("text") if isinstance(read, dict) else None
    if not isinstance(fields, list):
        fields = options.get("text", options.get("text_fields"))  # the latter: older runs
    return tuple(str(f) for f in fields) if isinstance(fields, list) else ()


def compare_source(compare: str, features: str | None, text_fields: Sequence[str]) -> CompareSource:
    """The file ``--compare`` names and the representation to measure both sets with.

    ``compare`` may be any data file, a filter run's folder (its kept rows are read) or a row
    file of such a run. With no ``features`` given (or the run's own), a run's representation
    is used where it can be rebuilt: its feature spec over its text fields, whatever
    ``text_fields`` the word audits read; otherwise the note says which representation the
    figures measure.
    """
    given = tuple(text_fields)
    p = Path(compare)
    found = _run_summary(p)
    if found is None:
        return CompareSource(compare, features or DEFAULT_FEATURES, given)
    run_dir, summary = found
    if p == run_dir:
        kept = (summary.get("outputs") or {}).get("kept")
        if not isinstance(kept, str) or Path(kept).name != kept or not (run_dir / kept).exists():
            raise DataError(f"{run_dir}: the run's summary.json names no kept rows to compare")
        p = run_dir / kept
    options = summary.get("options") if isinstance(summary.get("options"), dict) else {}
    run_features, rebuilt = _describe(options)
    run_fields = _run_fields(summary, options)
    rebuilt = rebuilt and bool(run_fields)

    # the fields are named only where the run's differ from those the word audits read
    differ = bool(run_fields) and run_fields != given
    run_on = f" on {', '.join(run_fields)}" if differ else ""
    if features in (None, run_features) and rebuilt:
        return CompareSource(
            str(p),
            run_features,
            run_fields,
            f"measuring with the run's representation: --features {run_features}{run_on} "
            f"(from {run_dir / 'summary.json'})",
        )
    measured = features or DEFAULT_FEATURES
    given_on = f" on {', '.join(given)}" if differ else ""
    if features is None:
        return CompareSource(
            str(p),
            measured,
            given,
            f"note: the run in {run_dir} filtered with {run_features}{run_on}, which cannot be "
            f"built again here; the bias figures measure --features {measured}{given_on} instead",
        )
    return CompareSource(
        str(p),
        measured,
        given,
        f"note: the run in {run_dir} filtered with {run_features}{run_on}; the bias figures "
        f"measure --features {measured}{given_on} instead, so they differ from the run's",
    )


def run_train_size(compare: str) -> int | None:
    """t (training rows per partition) of the filter run ``compare`` belongs to, if any."""
    found = _run_summary(Path(compare))
    if found is None:
        return None
    t = (found[1].get("parameters") or {}).get("train_size")
    return t if isinstance(t, int) and not isinstance(t, bool) else None
