"""A whole filtering job on a data file: read, represent, filter, write, verify.

This is the Python API behind ``aflite filter``; the algorithm itself lives in
:mod:`aflite.algorithm` and never touches files.
"""

from __future__ import annotations

import json
import platform
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import aflite
from aflite._internal.atomic import atomic_path
from aflite.algorithm import FilterResult, FilterState, PhaseRecord, adversarial_filter
from aflite.algorithm._validation import resolve_size
from aflite.algorithm.filtering import check_filter_options
from aflite.defaults import FILTER_DEFAULTS
from aflite.features.build import build_features, parse_feature_spec
from aflite.features.cache import default_cache_dir
from aflite.features.warmup import split_warmup, warmup_representation
from aflite.io.checkpoint import Checkpoint
from aflite.io.tables import DataError, Table, read_table

__all__ = ["FilterJob", "JobOutcome", "run_filter_job", "load_job_inputs"]


@dataclass
class FilterJob:
    """Options of one filtering job (the ``aflite filter`` command line, as a dataclass).

    The filter options start from :data:`aflite.defaults.FILTER_DEFAULTS`, which turn the
    chance stop on (``min_bias``); :func:`aflite.filter` itself runs Algorithm 1 as published.
    """

    input: str
    label_field: str = "label"
    text_fields: list[str] = field(default_factory=list)
    id_field: str | None = None
    group_field: str | None = None
    features: str = "ngrams"
    target_size: int | float = FILTER_DEFAULTS["target_size"]
    n_partitions: int = FILTER_DEFAULTS["n_partitions"]
    train_size: int | float = FILTER_DEFAULTS["train_size"]
    slice_size: int | float = FILTER_DEFAULTS["slice_size"]
    threshold: float = FILTER_DEFAULTS["threshold"]
    strategy: str = FILTER_DEFAULTS["strategy"]
    min_bias: float | None = FILTER_DEFAULTS["min_bias"]
    balance: str | None = FILTER_DEFAULTS["balance"]
    warmup_fraction: float | None = None
    warmup_finetune: bool = False
    seed: int = 0
    device: str = "auto"
    out_dir: str = "aflite-out"
    resume: bool = False
    cache_dir: str | None = field(default_factory=lambda: str(default_cache_dir()))
    input_format: str | None = None
    report: bool = True
    audits: list[str] = field(default_factory=list)
    backend: str | None = None
    ray_address: str | None = None


@dataclass
class JobOutcome:
    out_dir: Path
    result: FilterResult
    n_warmup: int
    outputs: dict[str, str]
    summary_text: str


@dataclass
class JobInputs:
    table: Table
    labels: np.ndarray
    ids: list[Any]
    texts: dict[str, list[str]] | None
    groups: np.ndarray | None


def load_job_inputs(job: FilterJob) -> JobInputs:
    """Read and check the data file; every problem is a one-line DataError."""
    spec = parse_feature_spec(job.features)
    from aflite.io.images import is_image_input, read_images

    if is_image_input(job.input):
        table = read_images(job.input)
    elif spec.kind == "warmup-cnn":
        raise DataError(
            f"{job.input}: warmup-cnn needs images: a folder of class sub-folders or an .npz "
            "with 'images' and 'labels'"
        )
    else:
        table = read_table(job.input, job.input_format)
    labels_raw = table.column(job.label_field)
    for i, v in enumerate(labels_raw):
        if not isinstance(v, (str, int)) or isinstance(v, bool) or v == "":
            raise DataError(
                f"{table.where(i)}: field '{job.label_field}' is not a class label ({v!r})"
            )
    labels = np.asarray([str(v) for v in labels_raw])
    if len(np.unique(labels)) < 2:
        raise DataError(f"{job.input}: field '{job.label_field}' has fewer than two classes")
    if job.id_field:
        ids = table.column(job.id_field)
        seen: dict[Any, int] = {}
        for i, v in enumerate(ids):
            if v in seen:
                raise DataError(
                    f"{table.where(i)}: field '{job.id_field}' duplicates id {v!r} "
                    f"(first at {table.where(seen[v]).split(':', 1)[1].strip()})"
                )
            seen[v] = i
    else:
        ids = list(range(len(table)))
    texts = None
    if spec.needs_text:
        if not job.text_fields:
            raise DataError("--text-fields is required for text features (e.g. premise,hypothesis)")
        texts = {f: table.text_column(f) for f in job.text_fields}
    groups = None
    if job.group_field:
        groups = np.asarray([str(v) for v in table.column(job.group_field)])
    return JobInputs(table, labels, ids, texts, groups)


def run_filter_job(
    job: FilterJob,
    *,
    progress: bool = True,
    log: Callable[[str], None] = print,
    stop_after_phases: int | None = None,
) -> JobOutcome:
    """Run a job end to end and return where its outputs are.

    ``stop_after_phases`` interrupts the run after that many phases (as a kill would), leaving
    only the checkpoint; it exists to test ``resume``.
    """
    t_start = time.perf_counter()
    inputs = load_job_inputs(job)
    table, labels = inputs.table, inputs.labels
    n_all = len(table)
    spec = parse_feature_spec(job.features)
    out = Path(job.out_dir)
    ckpt_dir = out / ".checkpoint"

    # Validate sizes before anything is computed or written.
    if spec.kind == "warmup-cnn" and job.warmup_fraction is None:
        job.warmup_fraction = 0.2  # the paper's ImageNet setting
    if job.warmup_fraction is not None:
        warm_rows, rest = split_warmup(
            n_all, job.warmup_fraction, seed=job.seed, groups=inputs.groups
        )
        if len(np.unique(labels[warm_rows])) < 2:
            raise DataError(f"{job.input}: the warm-up fraction holds fewer than two classes")
    else:
        warm_rows, rest = np.zeros(0, dtype=np.int64), np.arange(n_all)
    target = resolve_size(job.target_size, len(rest), "target size")
    if target >= len(rest):
        raise DataError(
            f"{job.input}: target size {target} is not smaller than the {len(rest)} rows to filter"
        )
    if len(np.unique(labels[rest])) < 2:
        raise DataError(f"{job.input}: fewer than two classes among the rows to filter")
    check_filter_options(
        len(rest), target_size=target, train_size=job.train_size, slice_size=job.slice_size,
        threshold=job.threshold, strategy=job.strategy, min_bias=job.min_bias,
        balance=job.balance,
    )

    resume_state: FilterState | None = None
    phi = None
    ckpt = Checkpoint(ckpt_dir, {"fingerprint": table.fingerprint(), "job": _job_key(job)})
    loaded = ckpt.load() if job.resume else None  # another run's or a damaged one: DataError
    if loaded is not None:
        phi, resume_state = loaded
        done = 0 if resume_state is None else len(resume_state.history)
        log(f"resuming from phase {done}")
    elif job.resume:
        log("no checkpoint to resume from; starting from the beginning")

    if phi is None:
        phi = _representation(job, spec, inputs, warm_rows, rest, progress=progress)
        # Checkpoint the representation so a resumed run filters exactly the same matrix; a
        # fresh run clears any earlier checkpoint first.
        ckpt.start(phi)

    phases_done = [0]

    def checkpoint(state: FilterState) -> None:
        ckpt.save(state)
        phases_done[0] += 1
        if stop_after_phases is not None and phases_done[0] >= stop_after_phases:
            raise _Interrupted

    backend = None
    if job.backend == "ray":
        from aflite.distributed import RayBackend

        backend = RayBackend(address=job.ray_address)
    elif job.backend not in (None, "local"):
        raise DataError(f"unknown backend '{job.backend}': use local or ray")
    try:
        result = adversarial_filter(
            phi,
            labels[rest],
            target_size=target,
            n_partitions=job.n_partitions,
            train_size=job.train_size,
            slice_size=job.slice_size,
            threshold=job.threshold,
            strategy=job.strategy,
            min_bias=job.min_bias,
            balance=job.balance,
            groups=None if inputs.groups is None else inputs.groups[rest],
            seed=job.seed,
            device=job.device,
            progress=progress,
            checkpoint=checkpoint,
            resume=resume_state,
            backend=backend,
        )
    except _Interrupted:
        raise KeyboardInterrupt("interrupted after a checkpoint") from None
    finally:
        if backend is not None:
            backend.close()

    outcome = _write_outputs(job, inputs, result, warm_rows, rest, t_start, phi)
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    return outcome


class _Interrupted(Exception):
    pass


def _job_key(job: FilterJob) -> dict[str, Any]:
    d = asdict(job)
    for k in ("resume", "out_dir", "cache_dir", "device", "report", "backend", "ray_address"):
        d.pop(k)
    return json.loads(json.dumps(d, default=str))


def _representation(
    job: FilterJob,
    spec: Any,
    inputs: JobInputs,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    *,
    progress: bool,
) -> np.ndarray:
    """Phi for the rows to filter (warm-up rows excluded)."""
    from aflite._internal.device import resolve_device
    from aflite._internal.progress import progress_bar

    device = str(resolve_device(job.device))
    if spec.kind == "warmup-cnn":
        from aflite.features.cnn import warmup_cnn_representation

        codes = np.unique(inputs.labels, return_inverse=True)[1]
        with progress_bar("warm-up CNN", enabled=progress) as bar:
            return warmup_cnn_representation(
                inputs.table.images,
                codes,
                warm_rows,
                rest,
                seed=job.seed,
                device=device,
                progress=bar,
            )
    if job.warmup_finetune:
        if spec.kind != "sentence-transformers" or job.warmup_fraction is None:
            raise DataError(
                "--warmup-finetune needs --features sentence-transformers:MODEL and --warmup-fraction"
            )
        from aflite.features.finetune import finetuned_representation

        codes = np.unique(inputs.labels, return_inverse=True)[1]
        return finetuned_representation(
            spec.arg, inputs.texts, codes, warm_rows, rest, seed=job.seed, device=device
        )
    encode = None
    if job.backend == "ray" and spec.kind == "sentence-transformers":
        from aflite.distributed import embed_with_ray

        def encode(texts, model, *, device, progress):
            return embed_with_ray(texts, model, address=job.ray_address)

    with progress_bar("embedding", enabled=progress) as bar:
        base, _ = build_features(
            spec,
            inputs.texts,
            n_rows=len(inputs.table),
            ids=inputs.ids,
            fingerprint=inputs.table.fingerprint(),
            cache_dir=job.cache_dir,
            device=device,
            seed=job.seed,
            progress=bar,
            encode=encode,
        )
    if job.warmup_fraction is None:
        return np.asarray(base)
    codes = np.unique(inputs.labels, return_inverse=True)[1]
    return warmup_representation(
        np.asarray(base), codes, warm_rows, rest, seed=job.seed, device=device
    )


def _write_outputs(
    job: FilterJob,
    inputs: JobInputs,
    result: FilterResult,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    t_start: float,
    phi: np.ndarray,
) -> JobOutcome:
    table, labels = inputs.table, inputs.labels
    out = Path(job.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kept = rest[result.kept]
    removed_order = np.argsort(rest[result.removed], kind="stable")
    removed = rest[result.removed][removed_order]

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
            extra={
                "aflite_score": result.removed_score[removed_order],
                "aflite_phase": result.removed_phase[removed_order],
            },
        )
    )
    if len(warm_rows):
        outputs["warmup"] = str(table.write_subset(out / table.output_name("warmup"), warm_rows))

    # The score a removed row had when it was removed and the kept rows' final re-score come
    # from different sets, so they live in separate columns; ``score`` is whichever applies.
    score = np.full(len(table), np.nan)
    removal_score = np.full(len(table), np.nan)
    final_score = np.full(len(table), np.nan)
    phase = np.full(len(table), -1, dtype=np.int64)
    split = np.full(len(table), "warmup", dtype=object)
    score[rest] = result.scores()
    removal_score[rest[result.removed]] = result.removed_score
    final_score[rest[result.kept]] = result.kept_scores
    phase[rest[result.removed]] = result.removed_phase
    split[kept] = "kept"
    split[removed] = "removed"
    import pyarrow as pa
    import pyarrow.parquet as pq

    scores_tbl = pa.table(
        {
            "id": pa.array([str(i) for i in inputs.ids]),
            "label": pa.array(labels.tolist()),
            "score": pa.array(score, mask=np.isnan(score)),
            "removal_score": pa.array(removal_score, mask=np.isnan(removal_score)),
            "final_score": pa.array(final_score, mask=np.isnan(final_score)),
            "phase_removed": pa.array(phase, mask=phase < 0),
            "split": pa.array(split.tolist()),
        }
    )
    with atomic_path(out / "scores.parquet") as tmp:
        pq.write_table(scores_tbl, tmp)
    outputs["scores"] = str(out / "scores.parquet")

    result.save(out / "result")
    extra = report_extra(result, phi, labels[rest], inputs, rest, seed=job.seed)
    if job.audits and inputs.texts:
        from aflite.audits import run_audits

        extra["audits"] = []
        for tag, rows in (("before", rest), ("kept", kept)):
            texts = {f: [v[i] for i in rows] for f, v in inputs.texts.items()}
            for r in run_audits(texts, labels[rows], audits=job.audits, seed=job.seed, tag=tag):
                extra["audits"].append(r.to_dict())
    with atomic_path(out / "result" / "report_extra.json") as tmp:
        tmp.write_text(json.dumps(extra, default=_json_default))
    counts = {
        "input": len(table),
        "kept": len(kept),
        "removed": len(removed),
        "warmup": len(warm_rows),
        "labels_before": _counts(labels[rest]),
        "labels_kept": _counts(labels[kept]),
    }
    summary = {
        "input": str(job.input),
        "input_format": table.format,
        "input_fingerprint": table.fingerprint(),
        "options": _job_key(job) | {"device": job.device},
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
    with atomic_path(out / "summary.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=_json_default))
    outputs["summary"] = str(out / "summary.json")

    if job.report:
        from aflite.reports.html import write_report

        outputs["report"] = str(write_report(out))

    text = f"{result.summary()}\nwarm-up rows: {len(warm_rows)}\noutputs in {out}/: " + ", ".join(
        Path(v).name for v in outputs.values()
    )
    hint = stop_hint(result, job.threshold)
    if hint:
        text += "\n" + hint
    from aflite.reports.html import DRIFT_WARNING, label_drift

    drift = label_drift(counts["labels_before"], counts["labels_kept"])
    if drift[1] > DRIFT_WARNING and job.balance != "classes":
        text += (
            f"\nwarning: the share of label {drift[0]} moved by {100 * drift[1]:.1f} points; "
            "--balance classes keeps the label distribution"
        )
    return JobOutcome(out, result, len(warm_rows), outputs, text)


def stop_hint(result: FilterResult, threshold: float) -> str | None:
    """One line when a run stopped on the threshold far from its target while its kept rows
    are still clearly predictable, naming the flag to change."""
    target = result.params.get("target_size")
    if result.stop_reason != "threshold" or not target:
        return None
    margin = result.params.get("min_bias") or 0.02
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


def report_extra(
    result: FilterResult,
    phi: np.ndarray,
    labels: np.ndarray,
    inputs: JobInputs | None,
    rest: np.ndarray,
    *,
    seed: int = 0,
    n_examples: int = 8,
    heatmap_rows: int = 40,
) -> dict[str, Any]:
    """What the report shows beyond the summary: examples, similarity heatmaps, KNN table.

    ``phi`` and ``labels`` are aligned with the filtered rows (``rest``).
    """
    from aflite.audits.knn import knn_distances

    rng = np.random.default_rng(seed)
    extra: dict[str, Any] = {"top_removed": {}, "top_kept": {}, "heatmaps": {}}
    fields = list(inputs.texts) if inputs is not None and inputs.texts else []

    def example(pos: int, score: float) -> dict[str, Any]:
        row: dict[str, Any] = {"score": float(score)}
        if inputs is not None:
            row["id"] = str(inputs.ids[rest[pos]])
        for f in fields:
            row[f] = inputs.texts[f][rest[pos]]
        return row

    kept_scores = np.nan_to_num(result.kept_scores, nan=0.0)
    for c in np.unique(labels):
        rm = np.flatnonzero(labels[result.removed] == c)[:n_examples]
        extra["top_removed"][str(c)] = [
            example(result.removed[i], result.removed_score[i]) for i in rm
        ]
        kc = np.flatnonzero(labels[result.kept] == c)
        kc = kc[np.argsort(kept_scores[kc], kind="stable")][:n_examples]
        extra["top_kept"][str(c)] = [example(result.kept[i], result.kept_scores[i]) for i in kc]
    x = np.asarray(phi, dtype=np.float32)
    # centred, so non-negative features (ReLU layers, TF-IDF) do not all look alike
    centre = x[:: max(1, len(x) // 20_000)].mean(axis=0)
    for c in np.unique(labels)[:3]:
        kept_c = result.kept[labels[result.kept] == c]
        rm_c = result.removed[labels[result.removed] == c]
        if len(kept_c) < 2 or len(rm_c) < 2:
            continue
        a = rng.choice(kept_c, min(heatmap_rows // 2, len(kept_c)), replace=False)
        b = rng.choice(rm_c, min(heatmap_rows // 2, len(rm_c)), replace=False)
        v = x[np.concatenate([a, b])] - centre
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        extra["heatmaps"][str(c)] = {"similarity": np.round(v @ v.T, 3).tolist(), "n_kept": len(a)}
    images = getattr(inputs.table, "images", None) if inputs is not None else None
    if images is not None:
        extra["images"] = {
            "removed": _image_grid(
                images, rest, result.removed, labels[result.removed], "most predictable removed"
            ),
            "kept": _image_grid(
                images,
                rest,
                result.kept[np.argsort(kept_scores, kind="stable")],
                labels[result.kept][np.argsort(kept_scores, kind="stable")],
                "least predictable kept",
            ),
        }
    if len(result.removed):
        before = knn_distances(x, labels, ks=(1, 5, 10, 50), seed=seed, max_rows=5000)
        after = knn_distances(
            x[result.kept], labels[result.kept], ks=(1, 5, 10, 50), seed=seed, max_rows=5000
        )
        after_rows = {(r[0], r[1]): r[2:] for r in after.rows}
        rows = []
        for r in before.rows:
            a = after_rows.get((r[0], r[1]), [float("nan")] * 4)
            rows.append([r[0], r[1]] + [f"{b:.3f} → {c:.3f}" for b, c in zip(r[2:], a)])
        extra["knn"] = {"header": before.header, "rows": rows}
    return extra


def _image_grid(images, rest, order, labels, title, per_class: int = 8) -> str:
    """A PNG (data URI) with up to ``per_class`` images of each class, in the given order."""
    import matplotlib.pyplot as plt

    from aflite.reports.html import _png

    classes = list(np.unique(labels))[:10]
    fig, axes = plt.subplots(
        len(classes), per_class, figsize=(per_class * 0.9, len(classes) * 0.95), squeeze=False
    )
    for r, c in enumerate(classes):
        picks = order[labels == c][:per_class]
        for k in range(per_class):
            ax = axes[r, k]
            ax.axis("off")
            if k < len(picks):
                img = images[rest[picks[k]]]
                ax.imshow(
                    img[..., 0] if img.shape[-1] == 1 else img,
                    cmap="gray" if img.shape[-1] == 1 else None,
                )
        axes[r, 0].set_title(str(c), fontsize=7, loc="left")
    fig.suptitle(title, fontsize=9)
    return _png(fig)


def _counts(values: np.ndarray) -> dict[str, int]:
    u, c = np.unique(values, return_counts=True)
    return {str(a): int(b) for a, b in zip(u, c)}


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
