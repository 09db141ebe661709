"""The writer of a filter job's outputs: kept / removed / warm-up rows in the input's format,
``scores.parquet``, ``result/``, ``card.md`` (the data set card; also the ``README.md`` of a
kept set written as a Hugging Face dataset folder), ``summary.json`` and ``report.html``,
written into a staging folder and published as a set. What goes into them is decided by
:mod:`aflite.jobs.finish`."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.algorithm import FilterResult, PhaseRecord
from aflite.api.card import CARD_NAME
from aflite.io.base import Table
from aflite.io.decisions import Decisions
from aflite.jobs.out_dir import STAGING
from aflite.jobs.run_folder import RunFolder
from aflite.reports.data import ReportData

__all__ = [
    "RowSplit",
    "output_names",
    "write_outputs",
    "write_score_set",
    "write_scores",
    "write_scores_parquet",
    "write_texts",
]


@dataclass(frozen=True)
class RowSplit:
    """Every input row in exactly one of kept / removed / warm-up, as input row numbers.

    ``removed`` is sorted and holds the rows a reviewer dropped (``dropped``), whose
    ``removed_score`` is NaN and ``removed_phase`` -1; ``rest`` are the rows the filter saw.
    """

    rest: np.ndarray
    kept: np.ndarray
    removed: np.ndarray
    removed_score: np.ndarray
    removed_phase: np.ndarray
    warmup: np.ndarray
    dropped: np.ndarray

    @classmethod
    def of_run(
        cls,
        result: FilterResult,
        *,
        rest: np.ndarray,
        warm_rows: np.ndarray,
        n_rows: int,
        decisions: Decisions | None = None,
    ) -> RowSplit:
        """The split of ``n_rows`` input rows a run made (``result`` indexes ``rest``)."""
        dropped = np.zeros(0, np.int64) if decisions is None else np.flatnonzero(decisions.dropped)
        whole = result.with_dropped(rest, dropped)  # in input positions; removed rows by position
        order = np.argsort(whole.removed, kind="stable")
        split = cls(
            rest=rest,
            kept=whole.kept,
            removed=whole.removed[order],
            removed_score=whole.removed_score[order],
            removed_phase=whole.removed_phase[order],
            warmup=warm_rows,
            dropped=dropped,
        )
        everything = np.concatenate([split.kept, split.removed, split.warmup])
        if len(everything) != n_rows or not np.array_equal(np.sort(everything), np.arange(n_rows)):
            raise RuntimeError("internal error: kept/removed/warm-up do not partition the input")
        return split


def output_names(table: Table, *, warmup: bool) -> dict[str, str]:
    """The names of the row files, ``scores.parquet`` and ``card.md`` by kind, as
    ``summary.json`` lists them (the kept rows of a JSONL input: ``kept.jsonl``)."""
    names = {"kept": table.output_name("kept"), "removed": table.output_name("removed")}
    if warmup:
        names["warmup"] = table.output_name("warmup")
    return names | {"scores": "scores.parquet", "card": CARD_NAME}


def write_outputs(out_dir: Path | RunFolder, **parts: Any) -> dict[str, str]:
    """Write every output into ``out_dir``; their names by kind (``summary`` last). ``parts``
    are what the outputs are made of, as :func:`_write_set` takes them.

    The outputs appear as a set or not at all: they are written into ``OUT/.aflite-staging``
    and moved in when all are whole, ``summary.json`` last (:func:`~aflite.jobs.out_dir.publish`).
    A failure on the way (a full disk) leaves none of them and names the output it was writing.
    """
    folder = out_dir if isinstance(out_dir, RunFolder) else RunFolder(out_dir)
    out = folder.path
    try:
        return folder.publish(lambda stage: _write_set(stage, **parts))
    except OSError as e:
        raise _named_in(e, out / STAGING, out) from None


def _named_in(e: OSError, stage: Path, out: Path) -> OSError:
    """The error naming the output's own path (what the user knows) for its path in the
    staging folder."""
    if e.filename is None or e.errno is None:
        return e
    try:
        rel = Path(os.fsdecode(e.filename)).relative_to(stage)
    except ValueError:
        return e
    if rel.name.startswith(".") and rel.name.endswith(".part"):  # .NAME.XXXX.part is NAME
        rel = rel.with_name(rel.name[1:].rsplit(".", 2)[0])
    return OSError(e.errno, e.strerror, str(out / rel))


def _write_set(
    out: Path,
    *,
    table: Table,
    split: RowSplit,
    result: FilterResult,
    ids: Sequence[Any],
    labels: np.ndarray,
    texts: dict[str, list[str]] | None,
    context: dict[str, list[str | None]] | None,
    decisions: Decisions | None,
    report: ReportData,
    summary: dict[str, Any],
    html: bool,
    card: Any = None,
) -> dict[str, str]:
    """Every output into ``out`` (the staging folder), ``summary.json`` last."""
    names = dict(summary["outputs"])
    table.write_subset(out / names["kept"], split.kept)
    if card is not None:
        card.save(out / names["card"])
        if getattr(table, "readme", False):
            card.save(out / names["kept"] / "README.md")  # the Hub shows it as the set's card
    table.write_subset(
        out / names["removed"],
        split.removed,
        extra={"aflite_score": split.removed_score, "aflite_phase": split.removed_phase},
    )
    if "warmup" in names:
        table.write_subset(out / names["warmup"], split.warmup)
    write_scores(
        out / names["scores"],
        ids=ids,
        labels=labels,
        result=result,
        split=split,
        decisions=decisions,
    )
    if texts or context:
        write_texts(out / "result" / "texts.parquet", texts or {}, context)
    result.save(out / "result")
    report.save(out)
    with atomic_path(out / "summary.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=_json_default))
    if html:
        from aflite.reports.html import write_report

        names["report"] = write_report(out).name
    names["summary"] = "summary.json"  # last: published last
    return names


def write_scores(
    path: Path,
    *,
    ids: Sequence[Any],
    labels: np.ndarray,
    result: FilterResult,
    split: RowSplit,
    decisions: Decisions | None = None,
) -> Path:
    """``scores.parquet``: one row per input row with its split, phase and scores, how settled
    its decision was (``decision_score``, ``score_se``, ``margin_to_cut``), and the reviewer's
    decision (``keep``, ``drop`` or null) in ``review``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, rest = len(ids), split.rest
    # The score a removed row had when it was removed and the kept rows' final re-score come
    # from different sets, so they live in separate columns; ``score`` is whichever applies.
    score = np.full(n, np.nan)
    removal_score = np.full(n, np.nan)
    final_score = np.full(n, np.nan)
    phase = np.full(n, -1, dtype=np.int64)
    where = np.full(n, "warmup", dtype=object)
    score[rest] = result.scores()
    decided, se, to_cut = (np.full(n, np.nan) for _ in range(3))
    decided[rest], se[rest], to_cut[rest] = result.decisions()
    removal_score[rest[result.removed]] = result.removed_score
    final_score[rest[result.kept]] = result.kept_scores
    phase[rest[result.removed]] = result.removed_phase
    where[split.kept] = "kept"
    where[split.removed] = "removed"
    review = np.full(n, None, dtype=object)
    if decisions is not None:
        review[decisions.protected] = "keep"
        review[decisions.dropped] = "drop"
    scores_tbl = pa.table(
        {
            "id": pa.array([str(i) for i in ids]),
            "label": pa.array(labels.tolist()),
            "score": pa.array(score, mask=np.isnan(score)),
            "removal_score": pa.array(removal_score, mask=np.isnan(removal_score)),
            "final_score": pa.array(final_score, mask=np.isnan(final_score)),
            "phase_removed": pa.array(phase, mask=phase < 0),
            # the score the row's decision rests on, its standard error, and its distance to
            # the cut of the phase that decided it (> 0 removed, < 0 kept)
            "decision_score": pa.array(decided, mask=np.isnan(decided)),
            "score_se": pa.array(se, mask=np.isnan(se)),
            "margin_to_cut": pa.array(to_cut, mask=np.isnan(to_cut)),
            "split": pa.array(where.tolist()),
            "review": pa.array(review.tolist(), type=pa.string()),
        }
    )
    with atomic_path(path) as tmp:
        pq.write_table(scores_tbl, tmp)
    return path


def write_texts(
    path: Path, texts: dict[str, list[str]], context: dict[str, list[str | None]] | None = None
) -> Path:
    """The text fields of every input row, aligned with ``scores.parquet``, then the input's
    other text columns (``context``, named in the schema's ``aflite`` metadata): what the
    report's table and ``aflite export`` show."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    context = context or {}
    cols = {f: pa.array(v, type=pa.string()) for f, v in {**texts, **context}.items()}
    meta = {b"aflite": json.dumps({"context": list(context)}).encode()}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(pa.table(cols).replace_schema_metadata(meta), tmp)
    return path


def write_scores_parquet(path: Path, frame: Any) -> Path:
    """``scores.parquet``: ids and labels (answers of multiple-choice items) as text (as the
    filter writes them), then the scores."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = "answer" if "answer" in frame else "label"
    cols = {
        "id": pa.array([str(v) for v in frame["id"]]),
        target: pa.array([str(v) for v in frame[target]]),
    }
    for c in frame.columns:
        if c not in ("id", target):
            v = frame[c].to_numpy()
            cols[c] = pa.array(v.tolist() if v.dtype == object else v)
    with atomic_path(path) as tmp:
        pq.write_table(pa.table(cols), tmp)
    return path


def write_score_set(
    out: Path,
    frame: Any,
    texts: dict[str, list[str]],
    summary: dict[str, Any],
    *,
    report: bool,
) -> None:
    """Every output of a scoring run into ``out`` (the staging folder): ``scores.parquet``,
    the text fields beside it, ``summary.json`` and ``report.html``."""
    write_scores_parquet(out / "scores.parquet", frame)
    if texts:
        write_texts(out / "result" / "texts.parquet", texts)
    with atomic_path(out / "summary.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    if report:
        from aflite.reports.scores_html import write_scores_report

        write_scores_report(out)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, PhaseRecord):
        return asdict(o)
    return str(o)
