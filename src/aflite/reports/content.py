"""What the report shows beyond the summary, computed when a job finishes
(:class:`~aflite.reports.data.ReportData`, saved as ``result/report_extra.json``): example rows
(or multiple-choice items), similarity heatmaps, why rows were removed, image grids, KNN
distances and the bias of a random control."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from aflite._internal.text import plot_text
from aflite.algorithm import FilterResult
from aflite.audits.before_after import AuditSet, measure_filter
from aflite.reports.data import (
    BiasControl,
    Heatmap,
    HeatmapClasses,
    ItemExample,
    ItemExamples,
    KnnTable,
    ReportData,
)
from aflite.reports.shorten import shorten
from aflite.reports.why import unit_rows, why_removed

__all__ = ["report_data", "row_examples", "item_examples", "image_grid", "knn_with_control"]


SPARSE_SHARE = 0.05  # features with fewer nonzeros than this get no cosine heatmaps


def report_data(
    result: FilterResult,
    phi: np.ndarray,
    labels: np.ndarray,
    rest: np.ndarray,
    *,
    ids: Sequence[Any] | None = None,
    texts: dict[str, list[str]] | None = None,
    groups: np.ndarray | None = None,
    images: np.ndarray | None = None,
    choices: Any = None,
    seed: int = 0,
    n_examples: int = 8,
    heatmap_rows: int = 40,
    heatmap_classes: int = 10,
    row_files: dict[str, str] | None = None,
    audits: Sequence[str] = (),
) -> ReportData:
    """What the report shows beyond the summary: examples, similarity heatmaps (for the first
    ``heatmap_classes`` classes), why rows were removed, KNN table, bias control.

    ``phi`` and ``labels`` are aligned with the filtered rows (``rest``); ``ids``, ``texts``
    (by field), ``groups``, ``images`` and multiple-choice items (``choices``, a
    :class:`~aflite.io.choices.Choices`) with every input row. For items the examples are
    whole items (:func:`item_examples`) and the removal is explained by the words that mark
    their right choices (:func:`~aflite.reports.why.why_removed`). ``row_files``: the
    names of the kept and removed row files, where a shortened text says its whole text is.
    ``audits``: the registered audits run on the filtered rows' texts and on the kept ones'
    (each result's dict with its tag, "before" or "kept").
    """
    rng = np.random.default_rng(seed)
    data = ReportData()
    fields = list(texts) if texts else []
    items = None if choices is None else choices.subset(rest)
    unit = "rows" if items is None else "items"

    kept_scores = np.nan_to_num(result.kept_scores, nan=0.0)
    if images is not None:
        order = np.argsort(kept_scores, kind="stable")
        data.images = {
            "removed": image_grid(
                images, rest, result.removed, labels[result.removed], "most predictable removed"
            ),
            "kept": image_grid(
                images,
                rest,
                result.kept[order],
                labels[result.kept][order],
                "least predictable kept",
            ),
        }
    if items is not None:
        # an item is kept or removed whole: shown whole, not per answer position
        rest_ids = None if ids is None else [ids[i] for i in rest]
        data.items = item_examples(
            result,
            items,
            rest_ids,
            n_removed=2 * n_examples,
            n_kept=n_examples // 2,
            row_files=row_files,
        )
    else:
        data.top_removed, data.top_kept = row_examples(
            result, labels, rest, ids=ids, texts=texts, n_examples=n_examples, row_files=row_files
        )
    x = np.asarray(phi, dtype=np.float32)
    per_choice = None
    if x.ndim == 3:
        # multiple-choice items (N, K, d): an item's place among the others is the mean of its
        # choices; the bias is the choice-wise model's, over the answer positions
        per_choice, x = x, np.nanmean(x, axis=1)
    # centred, so non-negative features (ReLU layers, TF-IDF) do not all look alike
    centre = x[:: max(1, len(x) // 20_000)].mean(axis=0)
    # items are one group: their answer positions are not classes an item's place depends on
    groups_of = labels if items is None else np.full(len(labels), "items", dtype=object)
    classes = np.unique(groups_of)
    shown = classes[:heatmap_classes]
    data.heatmap_classes = HeatmapClasses(int(len(classes)), int(len(shown)))
    sample = x[:: max(1, len(x) // 2_000)]
    if np.count_nonzero(sample) < SPARSE_SHARE * sample.size:
        # bags of n-grams: most pairs of rows share no word, so their cosines sit near 0
        # whatever the class, and a heatmap of them shows nothing
        shown = shown[:0]
        data.heatmap_classes.none = (
            f"the features are mostly zeros ({np.count_nonzero(sample) / sample.size:.1%} "
            f"nonzero, as bags of n-grams are): most pairs of {unit} share no feature, so their "
            "cosine similarities sit near 0 whatever the class; the nearest-neighbour table "
            "below measures what is there"
        )
    for c in shown:
        kept_c = result.kept[groups_of[result.kept] == c]
        rm_c = result.removed[groups_of[result.removed] == c]
        if len(kept_c) < 2 or len(rm_c) < 2:
            data.heatmap_classes.skipped[str(c)] = (
                f"{len(kept_c)} kept and {len(rm_c)} removed {unit}; a heatmap needs 2 of each"
            )
            continue
        a = rng.choice(kept_c, min(heatmap_rows // 2, len(kept_c)), replace=False)
        b = rng.choice(rm_c, min(heatmap_rows // 2, len(rm_c)), replace=False)
        v = unit_rows(x, np.concatenate([a, b]), centre)
        sim = np.round((v @ v.T).astype(np.float64), 3).tolist()
        data.heatmaps[str(c)] = Heatmap(sim, len(a))
    if len(result.removed):
        data.why_removed = why_removed(
            x,
            labels,
            result,
            centre,
            texts={f: [texts[f][i] for i in rest] for f in fields} if fields else None,
            ids=[ids[i] for i in rest] if ids is not None else list(range(len(rest))),
            items=items,
            seed=seed,
        )
    audited = None
    if audits and texts:
        audited = AuditSet({f: [texts[f][i] for i in rest] for f in fields}, labels, choices=items)
    measured = measure_filter(
        x if per_choice is None else per_choice,
        labels if per_choice is None else labels.astype(int),
        result,
        groups=None if groups is None else np.asarray(groups)[rest],
        audited=audited,
        audits=audits,
        seed=seed,
    )
    if measured.control is not None:
        data.knn = knn_with_control(
            x, groups_of, result.kept, measured.control, seed=seed, unit=unit
        )
        data.bias_control = BiasControl.from_json(measured.bias)
    if measured.audits is not None:
        data.audits = [r.to_dict() | {"tag": "before"} for r in measured.audits.before] + [
            r.to_dict() | {"tag": "kept"} for r in measured.audits.after
        ]
    return data


def row_examples(
    result: FilterResult,
    labels: np.ndarray,
    rest: np.ndarray,
    *,
    ids: Sequence[Any] | None = None,
    texts: dict[str, list[str]] | None = None,
    n_examples: int = 8,
    row_files: dict[str, str] | None = None,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Per class, its ``n_examples`` most predictable removed rows and least predictable kept
    rows, each with its score, id and text fields (``ids``, ``texts``: every input row); a long
    text shortened (:func:`~aflite.reports.shorten.shorten`), naming the row that holds it."""
    fields = list(texts) if texts else []

    def example(pos: int, score: float, which: str) -> dict[str, Any]:
        row: dict[str, Any] = {"score": float(score)}
        where = (row_files or {}).get(which) or f"the {which} rows"
        if ids is not None:
            row["id"] = shorten(str(ids[rest[pos]]))
            where += f", id {row['id']}"
        for f in fields:
            row[f] = shorten(texts[f][rest[pos]], where)  # type: ignore[index]
        return row

    top_removed, top_kept = {}, {}
    kept_scores = np.nan_to_num(result.kept_scores, nan=0.0)
    for c in np.unique(labels):
        rm = np.flatnonzero(labels[result.removed] == c)
        # most predictable first, by score (not by the phase that removed them)
        rm = rm[np.argsort(-result.removed_score[rm], kind="stable")][:n_examples]
        top_removed[str(c)] = [
            example(result.removed[i], result.removed_score[i], "removed") for i in rm
        ]
        kc = np.flatnonzero(labels[result.kept] == c)
        kc = kc[np.argsort(kept_scores[kc], kind="stable")][:n_examples]
        top_kept[str(c)] = [example(result.kept[i], result.kept_scores[i], "kept") for i in kc]
    return top_removed, top_kept


def item_examples(
    result: FilterResult,
    items: Any,
    ids: Sequence[Any] | None = None,
    *,
    n_removed: int = 16,
    n_kept: int = 4,
    row_files: dict[str, str] | None = None,
) -> ItemExamples:
    """The ``n_removed`` most predictable removed items (most predictable first) and the
    ``n_kept`` least predictable kept ones, each whole: context, every choice, the answer and
    its score; a long context or choice shortened, naming the item that holds it. ``items``
    and ``ids`` are aligned with the filtered rows."""

    def example(pos: int, score: float, which: str) -> ItemExample:
        ident = None if ids is None else shorten(str(ids[pos]))
        where = (row_files or {}).get(which) or f"the {which} items"
        where += "" if ident is None else f", id {ident}"
        return ItemExample(
            score=float(score),
            context=None if items.contexts is None else shorten(items.contexts[pos], where),
            choices=[shorten(c, where) for c in items.options[pos]],
            answer=int(items.answers[pos]),
            id=ident,
        )

    # by score, not by the phase that removed them; ties in the order the filter gave
    rm = np.argsort(-np.asarray(result.removed_score, dtype=np.float64), kind="stable")
    # kept items left unscored (NaN: score_kept off) are not "least predictable": none shown
    kept_scores = np.asarray(result.kept_scores, dtype=np.float64)
    kp = [i for i in np.argsort(kept_scores, kind="stable") if not np.isnan(kept_scores[i])]
    return ItemExamples(
        [example(result.removed[i], result.removed_score[i], "removed") for i in rm[:n_removed]],
        [example(result.kept[i], result.kept_scores[i], "kept") for i in kp[:n_kept]],
    )


def image_grid(
    images: np.ndarray,
    rest: np.ndarray,
    order: np.ndarray,
    labels: np.ndarray,
    title: str,
    per_class: int = 8,
) -> str:
    """A PNG (data URI) with up to ``per_class`` images of each class, in the given order."""
    import matplotlib.pyplot as plt

    from aflite.reports.plots import png_data_uri

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
        axes[r, 0].set_title(plot_text(c), fontsize=7, loc="left")
    fig.suptitle(title, fontsize=9)
    return png_data_uri(fig)


def knn_with_control(
    x: np.ndarray,
    labels: np.ndarray,
    kept: np.ndarray,
    control: np.ndarray,
    *,
    seed: int = 0,
    ks: tuple[int, ...] = (1, 5, 10, 50),
    unit: str = "rows",
) -> KnnTable:
    """Nearest-neighbour distances of all rows, of a random subset of the kept size and of the
    kept rows, one table row per class, relation and set (``unit``: what the sets hold, as the
    table names them)."""
    from aflite.audits.knn import knn_distances

    sets = {
        f"all ({len(labels)})": np.arange(len(labels)),
        f"random subset ({len(control)})": control,
        f"kept ({len(kept)})": kept,
    }
    tables = {
        name: {
            (r[0], r[1]): r[2:]
            for r in knn_distances(x, labels, rows=rows, ks=ks, seed=seed, max_rows=5000).rows
        }
        for name, rows in sets.items()
    }
    keys = list(tables[next(iter(sets))])
    rows = []
    for key in keys:
        for name in sets:
            vals = tables[name].get(key, [float("nan")] * len(ks))
            rows.append([key[0], key[1], name] + [round(float(v), 3) for v in vals])
    header = ["class", "neighbours", unit] + [f"top-{k}" for k in ks]
    return KnnTable(header, rows, int(len(control)))
