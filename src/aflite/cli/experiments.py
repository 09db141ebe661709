"""``aflite experiment synthetic | compare | ood``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aflite.cli.app import experiment_app
from aflite.cli.options import config_options, evaluator_names, parse_fields
from aflite.config import FilterConfig
from aflite.errors import DataError


def _labelled(
    path: str, label_field: str, fields: list[str], group_field: str | None, id_field: str | None
):
    from aflite.jobs import read_labelled_texts

    return read_labelled_texts(
        path, fields, label_field=label_field, group_field=group_field, id_field=id_field
    )


def _ood_sets(
    paths: list[str], label_field: str, fields: list[str], id_field: str | None,
    group_fields: list[str] | None,
):  # fmt: skip
    """The --ood sets by file stem, each with the categories of its --ood-group-field."""
    from aflite.experiments.ood import for_set, parse_per_set

    per_set = parse_per_set(group_fields, "--ood-group-field")
    names = [Path(p).stem for p in paths]
    unknown = next((k for k in per_set if k is not None and k not in names), None)
    if unknown is not None:
        raise DataError(f"--ood-group-field: no --ood set is named {unknown}")
    out = {}
    for path, name in zip(paths, names):
        out[name] = _labelled(path, label_field, fields, for_set(per_set, name), id_field)
    return out


def _ood_labels(values: list[str] | None, names: list[str]) -> dict | None:
    from aflite.experiments.ood import parse_per_set

    per_set = parse_per_set(values, "--ood-labels")
    unknown = next((k for k in per_set if k is not None and k not in names), None)
    if unknown is not None:
        raise DataError(f"--ood-labels: no --ood set is named {unknown}")
    return {k: parse_fields(v) for k, v in per_set.items()} or None


def _print_table(title: str, header: list[str], rows: list[list]) -> None:
    from aflite.reports.terminal import print_table

    print_table(title, header, rows)


def _write(path: str | None, text: str) -> None:
    if path:
        from aflite._internal.atomic import atomic_path

        with atomic_path(path) as tmp:
            tmp.write_text(text)
        typer.echo(f"wrote {path}")


@experiment_app.command("synthetic")
def synthetic_cmd(
    out_dir: str = typer.Option("aflite-synthetic", help="Folder for the figure and JSON."),
    n: int = typer.Option(2000, help="Instances per data set."),
    flip_share: float = typer.Option(
        0.05, help="Share of flipped labels in the most separated set."
    ),
    seed: int = typer.Option(0, help="Random seed."),
) -> None:
    """The paper's §3 study: four concentric-circle sets with planted artifacts, before/after."""
    from dataclasses import asdict

    from aflite.experiments.synthetic import levels_table, run_synthetic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    levels = run_synthetic(n=n, flip_share=flip_share, seed=seed, plot=out / "synthetic.png")
    header, rows = levels_table(levels)
    _print_table("Synthetic study (before → after AFLITE)", header, rows)
    _write(str(out / "synthetic.json"), json.dumps([asdict(lv) for lv in levels], indent=2))
    typer.echo(f"figure: {out / 'synthetic.png'}")


def _compare(
    *,
    train: str,
    dev: str,
    label_field: str,
    text_fields: str,
    feature_fields: str | None,
    partial_field: str | None,
    evaluators: str,
    ood: list[str] | None,
    ood_group_field: list[str] | None,
    ood_labels: list[str] | None,
    seed: int,
    seeds: int,
    label_map: str | None,
    markdown: str | None,
    json_out: str | None,
    filter_options: dict,
    only_ood: bool,
) -> None:
    from aflite.experiments import compare_experiment
    from aflite.experiments.labels import parse_label_map

    mapping = parse_label_map(label_map)
    fields = parse_fields(text_fields)
    opts = dict(filter_options)
    if opts.get("cache_dir") is None:
        from aflite.features.cache import default_cache_dir

        opts["cache_dir"] = str(default_cache_dir())
    group_field, id_field = opts.pop("group_field"), opts.pop("id_field")
    tr = _labelled(train, label_field, fields, group_field, id_field)
    dv = _labelled(dev, label_field, fields, group_field, id_field)
    ood_sets = _ood_sets(ood or [], label_field, fields, id_field, ood_group_field)
    res = compare_experiment(
        tr,
        dv,
        feature_fields=parse_fields(feature_fields) if feature_fields else None,
        partial_field=partial_field,
        evaluators=parse_fields(evaluators),
        ood=ood_sets,
        ood_labels=_ood_labels(ood_labels, list(ood_sets)),
        seed=seed,
        seeds=seeds,
        label_map=mapping,
        **opts,
    )
    typer.echo(res.filter_summary)
    header, rows = res.table()
    if only_ood:
        # evaluator, trained on, size, then the sets after dev and filtered dev
        keep = [0, 1, 2] + list(range(5, len(header)))
        header, rows = [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
    over = f", mean ± sd over {len(res.seeds)} seeds" if len(res.seeds) > 1 else ""
    _print_table(f"Accuracy by training set (delta vs D{over})", header, rows)
    _print_table(
        f"Representation bias at one t, with a random subset of the kept size{over}",
        *res.bias_table(),
    )
    sets_header, sets_rows = res.sets_table()
    if only_ood:
        sets_rows = [r for r in sets_rows if r[0] not in ("dev", "dev (filtered)")]
    _print_table(f"Evaluation sets{over}", sets_header, sets_rows)
    _write(markdown, res.markdown())
    _write(json_out, json.dumps(res.to_dict(), indent=2))


_EVALUATORS_HELP = (
    "Any of "
    + ", ".join(evaluator_names())
    + ", finetune:MODEL[:epochs=1:batch_size=16:lr=2e-5:max_length=128:steps=N:device=auto] "
    "(the encoder fine-tuned end to end with a classification head on each training set), "
    "or sklearn.MODULE.Class."
)
_TRAIN = typer.Argument(..., help="Training data file.")
_DEV = typer.Option(..., help="Dev data file (evaluated as is and filtered).")
_LABEL = typer.Option("label", help="Field holding the class label.")
_TEXT_FIELDS = typer.Option(..., help="Comma-separated text fields, e.g. premise,hypothesis.")
_FEATURE_FIELDS = typer.Option(
    None,
    help="Text fields the filter's features read (default: all --text-fields; the evaluators "
    "always see every text field), e.g. hypothesis for a hypothesis-only filter.",
)
_PARTIAL = typer.Option(
    None, help="Field of the partial-input evaluators (default: last text field)."
)
_EVALUATORS = typer.Option(",".join(evaluator_names()), help=_EVALUATORS_HELP)
_SEED = typer.Option(0, help="Random seed (of the representation, filter and random subset).")
_SEEDS = typer.Option(
    1,
    min=1,
    help="Repeat the filter and the random subset with this many seeds (--seed, --seed + 1, "
    "...); cells show mean ± standard deviation, and a row the difference filtered - random.",
)
_LABEL_MAP = typer.Option(
    None,
    help="Map predicted labels to an evaluation set's labels, for sets whose labels the models "
    "never saw, e.g. neutral=non-entailment,contradiction=non-entailment.",
)
_OOD_GROUP_FIELD = typer.Option(
    None,
    metavar="[SET:]FIELD",
    help="Break each --ood set's accuracy down by this field of it (repeatable; SET:FIELD for "
    "one set, by file stem), e.g. heuristic for HANS or category for a stress set.",
)
_OOD_LABELS = typer.Option(
    None,
    metavar="[SET:]LABELS",
    help="Keep only the --ood rows with these gold labels (repeatable; SET:LABEL,... for one "
    "set), e.g. hans:non-entailment as in the paper's HANS columns.",
)
_MARKDOWN = typer.Option(None, help="Write the table as Markdown here.")
_JSON = typer.Option(None, "--json", help="Write the results as JSON here.")


# the filter's options that compare and ood take, with the filter's defaults
COMPARE_FILTER_OPTIONS = (
    "group_field", "id_field", "features", "target_size", "n_partitions", "train_size",
    "slice_size", "threshold", "min_bias", "balance", "strategy", "warmup_fraction",
    "warmup_finetune", "device", "cache_dir",
)  # fmt: skip
_with_filter_options = config_options(
    FilterConfig,
    only=COMPARE_FILTER_OPTIONS,
    helps={"id_field": "Field with row ids (finds rows in a precomputed:FILE with ids)."},
    into="filter_options",
)


@experiment_app.command("compare")
@_with_filter_options
def compare_cmd(
    train: str = _TRAIN,
    dev: str = _DEV,
    label_field: str = _LABEL,
    text_fields: str = _TEXT_FIELDS,
    feature_fields: str | None = _FEATURE_FIELDS,
    partial_field: str | None = _PARTIAL,
    evaluators: str = _EVALUATORS,
    ood: list[str] = typer.Option(None, help="Extra labelled sets to evaluate on (repeatable)."),
    ood_group_field: list[str] = _OOD_GROUP_FIELD,
    ood_labels: list[str] = _OOD_LABELS,
    seed: int = _SEED,
    seeds: int = _SEEDS,
    label_map: str | None = _LABEL_MAP,
    markdown: str | None = _MARKDOWN,
    json_out: str | None = _JSON,
    *,
    filter_options: dict,
) -> None:
    """Train on D, a random D_n and the filtered D(Phi); evaluate on dev and filtered dev.
    Takes every option of `aflite filter`, with its defaults."""
    _compare(**locals(), only_ood=False)


@experiment_app.command("ood")
@_with_filter_options
def ood_cmd(
    train: str = _TRAIN,
    dev: str = _DEV,
    ood: list[str] = typer.Option(
        ..., help="Labelled sets to evaluate on (repeatable), e.g. HANS."
    ),
    ood_group_field: list[str] = _OOD_GROUP_FIELD,
    ood_labels: list[str] = _OOD_LABELS,
    label_field: str = _LABEL,
    text_fields: str = _TEXT_FIELDS,
    feature_fields: str | None = _FEATURE_FIELDS,
    partial_field: str | None = _PARTIAL,
    evaluators: str = _EVALUATORS,
    seed: int = _SEED,
    seeds: int = _SEEDS,
    label_map: str | None = _LABEL_MAP,
    markdown: str | None = _MARKDOWN,
    json_out: str | None = _JSON,
    *,
    filter_options: dict,
) -> None:
    """Per-set accuracy of the compare models on out-of-distribution sets.
    Takes every option of `aflite filter`, with its defaults."""
    _compare(**locals(), only_ood=True)
