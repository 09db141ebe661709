"""The output step of a job: kept / removed / warm-up rows in the input's format,
``scores.parquet``, ``summary.json``, the report, and the one-line hints printed after a run."""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

import aflite
from aflite._internal.atomic import atomic_path, clean_stale_parts
from aflite._internal.labels import label_counts
from aflite.algorithm import FilterResult, PhaseRecord
from aflite.defaults import FILTER_DEFAULTS
from aflite.io.decisions import Decisions
from aflite.io.labelled import LabelledData
from aflite.jobs.config import FilterJob, job_key
from aflite.jobs.out_dir import STAGING, publish
from aflite.reports.content import report_extra

__all__ = ["JobOutcome", "write_outputs", "write_scores", "stop_hint", "job_fields"]


@dataclass
class JobOutcome:
    out_dir: Path
    result: FilterResult
    n_warmup: int
    outputs: dict[str, str]
    summary_text: str


def write_outputs(
    job: FilterJob,
    inputs: LabelledData,
    result: FilterResult,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    t_start: float,
    phi: np.ndarray,
    *,
    decisions: Decisions | None = None,
) -> JobOutcome:
    """Write every output of a finished run into ``job.out_dir`` and say where they are.

    The outputs appear as a set or not at all: they are written into ``OUT/.aflite-staging``
    and moved in when all are whole, ``summary.json`` last (:func:`~aflite.jobs.out_dir.publish`).
    A failure on the way (a full disk) leaves none of them and names the output it was writing.
    Rows a reviewer dropped (``decisions``) are among the removed rows, with phase -1 and no
    score; rows a reviewer protected are among the kept rows.
    """
    out = Path(job.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean_stale_parts(out, recursive=False)  # left by an earlier, killed run
    stage = out / STAGING
    shutil.rmtree(stage, ignore_errors=True)  # an earlier, killed run's unfinished set
    stage.mkdir()
    try:
        names, summary, extra = _write_set(
            job, inputs, result, warm_rows, rest, t_start, phi, stage, decisions
        )
        publish(stage, out)
    except BaseException as e:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(e, OSError):
            raise _named_in(e, stage, out) from None
        raise
    outputs = {k: str(out / v) for k, v in names.items()}
    shown = [v for k, v in names.items() if k != "report"] + (
        [names["report"]] if "report" in names else []
    )
    text = f"{result.summary()}\nwarm-up rows: {len(warm_rows)}\noutputs in {out}/: " + ", ".join(
        shown
    )
    note = inputs.fields.note()
    if note:
        text += "\n" + note
    hint = stop_hint(result, job.threshold)
    if hint:
        text += "\n" + hint
    from aflite.reports.warnings import run_warnings

    for warning in run_warnings(summary, extra):
        text += f"\nwarning: {warning}"
    return JobOutcome(out, result, len(warm_rows), outputs, text)


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


def _write_set(job, inputs, result, warm_rows, rest, t_start, phi, out, decisions=None):
    """Every output into ``out`` (the staging folder); (names by kind, summary, report extra).
    ``summary.json`` is the last name."""
    table, labels = inputs.table, inputs.labels
    kept = rest[result.kept]
    dropped = np.zeros(0, np.int64) if decisions is None else np.flatnonzero(decisions.dropped)
    by_filter = rest[result.removed]
    all_removed = np.concatenate([by_filter, dropped])
    removed_order = np.argsort(all_removed, kind="stable")
    removed = all_removed[removed_order]
    removed_score = np.r_[result.removed_score, np.full(len(dropped), np.nan)][removed_order]
    removed_phase = np.r_[result.removed_phase, np.full(len(dropped), -1)].astype(np.int64)

    # every input row in exactly one of kept / removed / warm-up
    everything = np.concatenate([kept, removed, warm_rows])
    if len(everything) != len(table) or not np.array_equal(
        np.sort(everything), np.arange(len(table))
    ):
        raise RuntimeError("internal error: kept/removed/warm-up do not partition the input")

    outputs: dict[str, str] = {}
    outputs["kept"] = str(table.write_subset(out / table.output_name("kept"), kept))
    outputs["removed"] = str(
        table.write_subset(
            out / table.output_name("removed"),
            removed,
            extra={"aflite_score": removed_score, "aflite_phase": removed_phase[removed_order]},
        )
    )
    if len(warm_rows):
        outputs["warmup"] = str(table.write_subset(out / table.output_name("warmup"), warm_rows))
    outputs["scores"] = str(
        write_scores(out / "scores.parquet", inputs, result, rest, kept, removed, decisions)
    )
    if inputs.texts:
        write_texts(out / "result" / "texts.parquet", inputs.texts)

    result.save(out / "result")
    extra = report_extra(result, phi, labels[rest], inputs, rest, seed=job.seed)
    if job.audits and inputs.texts:
        from aflite.audits import run_audits
        from aflite.audits.baselines import bias_train_rows

        extra["audits"] = []
        t = bias_train_rows([len(rest), len(kept)])  # before and kept at one t
        for tag, rows in (("before", rest), ("kept", kept)):
            texts = {f: [v[i] for i in rows] for f, v in inputs.texts.items()}
            for r in run_audits(
                texts, labels[rows], audits=job.audits, seed=job.seed, tag=tag, bias_train_size=t
            ):
                extra["audits"].append(r.to_dict() | {"tag": tag})
    with atomic_path(out / "result" / "report_extra.json") as tmp:
        tmp.write_text(json.dumps(extra, default=_json_default))
    counts = {
        "input": len(table),
        "kept": len(kept),
        "removed": len(removed),
        "warmup": len(warm_rows),
        "labels_before": label_counts(labels[rest]),
        "labels_kept": label_counts(labels[kept]),
    }
    if decisions is not None:
        counts["dropped_by_review"] = len(dropped)
    summary = {
        "input": str(job.input),
        "input_format": table.format,
        "input_fingerprint": table.fingerprint(),
        "options": job_key(job) | {"device": job.device},
        "fields": job_fields(job, inputs),
        "parameters": result.params,
        "seed": job.seed,
        "versions": _versions(),
        "counts": counts,
        "representation_bias": {
            "before": result.initial_bias,
            "after": result.final_bias,
            "chance_before": result.initial_chance,
            "chance_after": result.final_chance,
        },
        "stop_reason": result.stop_reason,
        "stop_message": result.stop_message,
        "history": [asdict(h) for h in result.history],
        "seconds": round(time.perf_counter() - t_start, 3),
        "outputs": {k: Path(v).name for k, v in outputs.items()},
    }
    if decisions is not None:
        summary["review"] = decisions.summary() | {
            "protected_kept": int(decisions.protected[kept].sum()),
        }
    with atomic_path(out / "summary.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=_json_default))
    if job.report:
        from aflite.reports.html import write_report

        outputs["report"] = str(write_report(out))
    outputs["summary"] = str(out / "summary.json")  # last: published last
    return {k: Path(v).name for k, v in outputs.items()}, summary, extra


def job_fields(job: FilterJob, inputs: LabelledData) -> dict[str, Any]:
    """The fields a run read, and which of them it picked itself (``"text"``, ``"id"``)."""
    read = inputs.fields
    fields: dict[str, Any] = {
        "label": read.label,
        "text": list(read.text),
        "id": read.id,
        "group": read.group,
    }
    if job.split is not None:
        fields["split"] = job.split
    fields["picked"] = list(inputs.picked)
    return fields


def write_scores(
    path: Path,
    inputs: LabelledData,
    result: FilterResult,
    rest: np.ndarray,
    kept: np.ndarray,
    removed: np.ndarray,
    decisions: Decisions | None = None,
) -> Path:
    """``scores.parquet``: one row per input row with its split, phase and scores, and the
    reviewer's decision (``keep``, ``drop`` or null) in ``review``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(inputs.table)
    # The score a removed row had when it was removed and the kept rows' final re-score come
    # from different sets, so they live in separate columns; ``score`` is whichever applies.
    score = np.full(n, np.nan)
    removal_score = np.full(n, np.nan)
    final_score = np.full(n, np.nan)
    phase = np.full(n, -1, dtype=np.int64)
    split = np.full(n, "warmup", dtype=object)
    score[rest] = result.scores()
    removal_score[rest[result.removed]] = result.removed_score
    final_score[rest[result.kept]] = result.kept_scores
    phase[rest[result.removed]] = result.removed_phase
    split[kept] = "kept"
    split[removed] = "removed"
    review = np.full(n, None, dtype=object)
    if decisions is not None:
        review[decisions.protected] = "keep"
        review[decisions.dropped] = "drop"
    scores_tbl = pa.table(
        {
            "id": pa.array([str(i) for i in inputs.ids]),
            "label": pa.array(inputs.labels.tolist()),
            "score": pa.array(score, mask=np.isnan(score)),
            "removal_score": pa.array(removal_score, mask=np.isnan(removal_score)),
            "final_score": pa.array(final_score, mask=np.isnan(final_score)),
            "phase_removed": pa.array(phase, mask=phase < 0),
            "split": pa.array(split.tolist()),
            "review": pa.array(review.tolist(), type=pa.string()),
        }
    )
    with atomic_path(path) as tmp:
        pq.write_table(scores_tbl, tmp)
    return path


def write_texts(path: Path, texts: dict[str, list[str]]) -> Path:
    """The text fields of every input row, aligned with ``scores.parquet``: what the report's
    table and ``aflite export`` show."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(pa.table({f: pa.array(v, type=pa.string()) for f, v in texts.items()}), tmp)
    return path


def stop_hint(result: FilterResult, threshold: float) -> str | None:
    """One line when a run stopped on the threshold far from its target while its kept rows
    are still clearly predictable, naming the flag to change."""
    target = result.params.get("target_size")
    if result.stop_reason != "threshold" or not target:
        return None
    margin = result.params.get("min_bias") or FILTER_DEFAULTS["min_bias"]
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


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, PhaseRecord):
        return asdict(o)
    return str(o)


def _versions() -> dict[str, str]:
    import sklearn
    import torch

    return {
        "aflite": aflite.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "scikit-learn": sklearn.__version__,
    }
