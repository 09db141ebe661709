"""The end of a filter job: split the rows, compute what the report shows, run the audits
before and after, assemble ``summary.json``, hand it all to the writer
(:func:`aflite.jobs.outputs.write_outputs`) and say in a few lines what happened."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.labels import label_counts
from aflite._internal.version import versions
from aflite.algorithm import FilterResult
from aflite.algorithm.loop.result import kept_fingerprint
from aflite.api.pipeline import FilterPlan, FilterRun
from aflite.api.provenance import make_card
from aflite.config import FilterConfig
from aflite.config.files import RunKey
from aflite.io.decisions import Decisions
from aflite.io.labelled import LabelledData
from aflite.jobs.outputs import RowSplit, output_names, write_outputs
from aflite.jobs.run_folder import RunFolder
from aflite.reports.content import report_data
from aflite.reports.warnings import outcome_text, stop_hint

__all__ = ["JobOutcome", "finish_job", "finish_run", "stop_hint", "versions"]


@dataclass
class JobOutcome:
    """Where a finished job's outputs are, its result, and the lines printed after it:
    ``summary_text`` (the result and the outputs, for stdout) and ``notices`` (``note:`` and
    ``warning:`` lines, for stderr, so a redirected stdout holds the result alone)."""

    out_dir: Path
    result: FilterResult
    n_warmup: int
    outputs: dict[str, str]
    summary_text: str
    notices: list[str] = field(default_factory=list)


def finish_job(
    job: FilterConfig,
    *,
    plan: FilterPlan,
    result: FilterResult,
    phi: np.ndarray,
    t_start: float,
    folder: RunFolder | None = None,
) -> JobOutcome:
    """Compute and write every output of a finished run into ``job.out_dir``: what
    :func:`finish_run` does for the run ``job`` describes."""
    run, key = FilterRun.of_config(job), RunKey.of(job, plan.data)
    return finish_run(key, run, plan=plan, result=result, phi=phi, t_start=t_start, folder=folder)


def finish_run(
    key: RunKey,
    run: FilterRun,
    *,
    plan: FilterPlan,
    result: FilterResult,
    phi: np.ndarray,
    t_start: float,
    folder: RunFolder | None = None,
) -> JobOutcome:
    """Compute and write every output of a finished run (``key``: its job and what its
    summary records; ``run``: as the pipeline ran it) into the job's ``out_dir``.

    ``plan`` is what the run filtered (``result``'s positions index its ``rest`` rows), ``phi``
    the representation of those rows. Rows a reviewer dropped (``plan.decisions``) are among
    the removed rows, with phase -1 and no score. ``folder``: the run's output folder, as the
    job checked it (default: ``job.out_dir``).
    """
    job = key.job
    inputs, rest, warm_rows, decisions = plan.data, plan.rest, plan.warm_rows, plan.decisions
    split = RowSplit.of_run(
        result, rest=rest, warm_rows=warm_rows, n_rows=len(inputs.table), decisions=decisions
    )
    names = output_names(inputs.table, warmup=len(warm_rows) > 0)
    summary = run_summary(
        job,
        options=key.summary,
        inputs=inputs,
        result=result,
        split=split,
        names=names,
        decisions=decisions,
        seconds=0.0,  # the run's time, taken once the report's data is computed too
    )
    # the text counts the rows a reviewer dropped apart from those the filter removed
    shown = result.with_dropped(rest, split.dropped) if len(split.dropped) else result
    report = report_data(
        result,
        phi,
        inputs.labels[rest],
        rest,
        ids=inputs.ids,
        texts=inputs.texts or None,
        groups=inputs.groups,
        images=getattr(inputs.table, "images", None),
        choices=inputs.choices,
        seed=job.seed,
        row_files=names,
        audits=job.audits,
    )
    summary["seconds"] = round(time.perf_counter() - t_start, 3)
    card = make_card(run, plan, result)
    out = Path(job.out_dir)
    # an item's answer as the input gives it (a letter, "1"/"2", the choice's text), as
    # filter_dataset and `aflite score` show it, not its 0-based position
    labels = (
        inputs.labels
        if inputs.choices is None
        else np.asarray([str(v) for v in inputs.label_values], dtype=object)
    )
    written = write_outputs(
        folder or out,
        table=inputs.table,
        split=split,
        result=result,
        ids=inputs.ids,
        labels=labels,
        texts=inputs.texts,
        context=inputs.context(),
        decisions=decisions,
        report=report,
        summary=summary,
        html=job.report,
        card=card,
    )
    given = (("--drop-ids", job.drop_ids is not None), ("--drop-labels", bool(job.drop_labels)))
    by = [f for f, on in given if on]
    text, notices = outcome_text(
        shown,
        summary,
        report,
        out=out,
        names=written,
        n_warmup=len(warm_rows),
        dropped_by=" and ".join(by) or "--drop-ids",
        fields_note=inputs.fields.note(),
        items=inputs.choices,
    )
    outputs = {k: str(out / v) for k, v in written.items()}
    return JobOutcome(out, result, len(warm_rows), outputs, text, notices)


def run_summary(
    job: FilterConfig,
    *,
    options: dict[str, Any],
    inputs: LabelledData,
    result: FilterResult,
    split: RowSplit,
    names: dict[str, str],
    decisions: Decisions | None,
    seconds: float,
) -> dict[str, Any]:
    """The document of ``summary.json`` (``options``: the run key's, as it records them)."""
    table, labels, read = inputs.table, inputs.labels, inputs.fields
    # the fields the run read, and which of them it picked itself ("text", "id")
    fields: dict[str, Any] = {
        "label": read.label,
        "text": list(read.text),
        "id": read.id,
        "group": read.group,
    }
    if job.split is not None:
        fields["split"] = job.split
    fields["picked"] = list(inputs.picked)
    counts: dict[str, Any] = {
        "input": len(table),
        "kept": len(split.kept),
        "removed": len(split.removed),
        "warmup": len(split.warmup),
        "labels_before": label_counts(labels[split.rest]),
        "labels_kept": label_counts(labels[split.kept]),
    }
    if decisions is not None:
        # "removed" holds both: the rows the filter removed and those --drop-ids named
        counts["removed_by_filter"] = len(result.removed)
        counts["dropped_by_review"] = len(split.dropped)
    summary: dict[str, Any] = {
        "input": str(job.input),
        "input_format": table.format,
        "input_fingerprint": table.fingerprint(),
        "options": options | {"device": job.device},
        "fields": fields,
        "parameters": {k: v for k, v in result.params.items() if k != "seed_check"},
        "seed": job.seed,
        "versions": versions(),
        "counts": counts,
        "representation_bias": {
            "before": result.initial_bias,
            "after": result.final_bias,
            "chance_before": result.initial_chance,
            "chance_after": result.final_chance,
        },
        "stop_reason": result.stop_reason,
        "stop_message": result.stop_message,
        "kept_fingerprint": kept_fingerprint(inputs.ids[i] for i in split.kept),
        # what a second seed removed of the same rows, measured (``check_seed``); absent without
        "seed_check": result.params.get("seed_check"),
        "history": [asdict(h) for h in result.history],
        "seconds": round(seconds, 3),
        "outputs": dict(names),
    }
    if inputs.choices is not None:
        # multiple-choice items: how the answers were read and the chance level of picking
        summary["items"] = inputs.choices.as_dict()
    if decisions is not None:
        summary["review"] = decisions.summary() | {
            "protected_kept": int(decisions.protected[split.kept].sum()),
        }
    return summary
