"""A whole scoring job on a data file: read, featurize, score every row out of sample, write
``scores.parquet``, ``summary.json`` and ``report.html``. The API behind ``aflite score``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.options import ConfigError
from aflite.config import ScoreConfig
from aflite.errors import DataError
from aflite.jobs.outputs import write_score_set
from aflite.jobs.run_folder import RunFolder

__all__ = ["ScoreJob", "ScoreOutcome", "run_score_job", "region_examples"]

N_EXAMPLES = 8
KEYS = ("id", "label", "answer", "region")  # a scores frame's columns that are not scores


def _target(frame: Any) -> str:
    """The column of what a row is scored against: ``answer`` for multiple-choice items."""
    return "answer" if "answer" in frame else "label"


# the job API's name for a scoring run's options: one frozen config, checked when made
ScoreJob = ScoreConfig


@dataclass
class ScoreOutcome:
    out_dir: Path
    outputs: dict[str, str]
    summary_text: str
    scores: Any


def _finite(v: Any) -> Any:
    """A float for JSON: NaN and inf (a constant column's correlation) become null."""
    v = float(v)
    return v if math.isfinite(v) else None


def _json_safe(v: Any) -> Any:
    """The summary with NaN and inf as null, so it stays valid JSON."""
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, (float, np.floating)):
        return _finite(v)
    return v


def region_examples(frame: Any, texts: dict[str, list[str]], n: int = N_EXAMPLES) -> dict[str, Any]:
    """Rows to show per data-map region (easy: most confident, ambiguous: most variable,
    hard: least confident), or the rows at both ends of the first score without a data map."""
    score_cols = [c for c in frame.columns if c not in KEYS]
    target = _target(frame)
    data_map = [c for c in ("confidence", "variability", "correctness") if c in frame]
    shown = data_map or score_cols[:3]

    def rows(idx: Any) -> list[dict[str, Any]]:
        out = []
        for i in idx:
            row = {"id": str(frame["id"].iloc[i]), target: str(frame[target].iloc[i])}
            row |= {f: texts[f][i] for f in texts}
            row |= {c: _finite(frame[c].iloc[i]) for c in shown}
            out.append(row)
        return out

    if "region" in frame:
        picks = {
            "easy": ("confidence", False),
            "ambiguous": ("variability", False),
            "hard": ("confidence", True),
        }
        result = {}
        for region, (col, ascending) in picks.items():
            sub = frame.index[frame["region"] == region]
            order = frame.loc[sub, col].sort_values(ascending=ascending, kind="stable").index
            result[region] = rows([frame.index.get_loc(i) for i in order[:n]])
        return result
    first = score_cols[0]
    order = np.argsort(frame[first].to_numpy(), kind="stable")
    return {f"lowest {first}": rows(order[:n]), f"highest {first}": rows(order[::-1][:n])}


def _summary(job: ScoreJob, ds: Any, seconds: float) -> dict[str, Any]:
    from aflite.jobs.finish import versions

    frame, corr, info = ds.scores, ds.correlation, ds.result.info
    numeric = [c for c in frame.columns if c not in KEYS]
    labels = frame[_target(frame)].astype(str)
    means = {
        str(k): {c: _finite(v) for c, v in g[numeric].mean().items()}
        for k, g in frame.groupby(labels, sort=True)
    }
    summary: dict[str, Any] = {
        "kind": "scores",
        "input": str(job.input),
        "fields": ds.fields,
        "rows": len(frame),
        "labels": {str(k): int(v) for k, v in labels.value_counts().sort_index().items()},
        "scorers": info["scorers"],
        "columns": [c for c in frame.columns if c not in ("id", "label", "answer")],
        "n_folds": info["n_folds"],
        "repeats": info["repeats"],
        "seed": job.seed,
        "device": info["device"],
        "features": job.features,
        "options": info["options"],
        "dynamics": info.get("dynamics"),
        "models": {
            k: info[k] for k in ("model_full", "model_partial", "predictability") if k in info
        },
        "seconds": {"scorers": info["seconds"], "total": round(seconds, 3)},
        "correlation": {
            "method": "spearman",
            "columns": list(corr.columns),
            "matrix": [[_finite(v) for v in row] for row in corr.to_numpy()],
        },
        "means_by_label": means,
        "examples": region_examples(frame, ds.texts),
        "versions": versions(),
    }
    if "items" in ds.fields:
        summary["items"] = ds.fields["items"]
    if "region" in frame:
        summary["regions"] = {
            r: int((frame["region"] == r).sum()) for r in ("easy", "ambiguous", "hard")
        }
    return summary


# what only the job reads: where the data and the outputs are, and the scorers' own options
_JOB_ONLY = ("input", "out_dir", "overwrite", "report", "options")


def _arguments(job: ScoreJob) -> dict[str, Any]:
    """:func:`aflite.score_dataset`'s keywords for the job's options, which it takes by the
    same names."""
    from aflite.features.cache import default_cache_dir

    run = {name: getattr(job, name) for name in job.names() if name not in _JOB_ONLY}
    run |= job.read_arguments() | {
        "partial_text": list(job.partial_text) or None,
        "scorers": None if job.scorers is None else list(job.scorers),
        "cache_dir": job.cache_dir or str(default_cache_dir()),
    }
    return run


def run_score_job(job: ScoreJob) -> ScoreOutcome:
    """Run a scoring job end to end. An ``out_dir`` holding an earlier run is refused unless
    ``job.overwrite`` (its outputs are replaced when the new ones are published, as a set)."""
    from aflite.api.scores import score_dataset

    t0 = time.perf_counter()
    # every file the job reads is protected from --overwrite (none is watched for changes:
    # the scores are written straight from what was read)
    others = [p for p in (job.input, job.dynamics, job.probs, job.partial_probs) if p]
    arguments = _arguments(job)
    with RunFolder.open(
        job.out_dir, overwrite=job.overwrite, resume=False, others=others
    ) as folder:
        try:
            ds = score_dataset(job.input, **arguments, **job.options)
        except ConfigError as e:
            from aflite.config.score import scorer_options

            if e.field not in scorer_options():
                raise
            # a scorer's option the data cannot take (--train-size), named as its flag
            raise DataError(e.render(cli=True)) from None
        names = {"scores": "scores.parquet", "summary": "summary.json"}
        if job.report:
            names["report"] = "report.html"
        summary = _json_safe(_summary(job, ds, time.perf_counter() - t0) | {"outputs": names})
        items = _items_line(ds, summary) if "items" in summary else None
        folder.publish(
            lambda stage: write_score_set(stage, ds.scores, ds.texts, summary, report=job.report)
        )
    out = folder.path
    outputs = {k: str(out / v) for k, v in names.items()}
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in summary["seconds"]["scorers"].items())
    what = "items" if "items" in summary else "rows"
    text = f"scored {len(ds.scores)} {what}: {', '.join(summary['columns'])} ({secs})"
    if items is not None:
        text += "\n" + items
    if "regions" in summary:
        text += "\nregions: " + ", ".join(f"{k} {v}" for k, v in summary["regions"].items())
    text += f"\noutputs in {out}/: " + ", ".join(Path(v).name for v in outputs.values())
    return ScoreOutcome(out, outputs, text, ds)


def _items_line(ds: Any, summary: dict[str, Any]) -> str:
    """How the answers were read, the chance level and each score's mean beside it."""
    items = summary["items"]
    means = ", ".join(f"mean {c} {ds.scores[c].mean():.3f}" for c in summary["columns"])
    return f"{items['note']}; chance level {items['chance']:.3f}; {means}"
