"""``aflite experiment synthetic | compare | ood``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aflite.cli.app import experiment_app
from aflite.cli.options import config_options, evaluator_names, parse_fields
from aflite.config import CompareConfig, FilterConfig
from aflite.config.compare import COMPARE_FILTER_OPTIONS
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


def _compare(config: CompareConfig, filter_options: dict, *, only_ood: bool) -> None:
    from aflite.config.base import ConfigError

    try:
        res = _compare_result(config, filter_options)
    except ConfigError as e:  # an option named as the command line's flag
        raise DataError(e.render(cli=True)) from None
    _print(res, config, only_ood=only_ood)


def _compare_result(config: CompareConfig, filter_options: dict):
    from aflite.experiments import compare_experiment

    fields = list(config.text_fields)
    label_field = config.label_field
    opts = dict(filter_options)
    if opts.get("cache_dir") is None:
        from aflite.features.cache import default_cache_dir

        opts["cache_dir"] = str(default_cache_dir())
    group_field, id_field = opts.pop("group_field"), opts.pop("id_field")
    if config.choices is not None:
        return _compare_items(config, opts, group_field, id_field)
    tr = _labelled(config.train, label_field, fields, group_field, id_field)
    dv = _labelled(config.dev, label_field, fields, group_field, id_field)
    ood_sets = _ood_sets(list(config.ood), label_field, fields, id_field, config.ood_group_field)
    return compare_experiment(
        tr,
        dv,
        feature_fields=config.feature_fields,
        partial_field=config.partial_field,
        evaluators=config.evaluators,
        ood=ood_sets,
        ood_labels=_ood_labels(list(config.ood_labels), list(ood_sets)),
        seed=config.seed,
        seeds=config.seeds,
        label_map=config.label_map,
        **opts,
    )


def _compare_items(config: CompareConfig, opts: dict, group_field: str | None,
                   id_field: str | None):  # fmt: skip
    """compare on multiple-choice items: every set read as items with the same options."""
    from aflite.config.compare import check_item_options
    from aflite.experiments import compare_experiment
    from aflite.experiments.compare_items import read_item_sets

    # the filter's options are no CompareConfig fields, and the files are read here, before
    # compare_experiment checks them: refuse those items cannot take before reading
    check_item_options(opts)
    read = {"label": config.label_field, "id": id_field, "group": group_field,
            "choices": config.choices, "context": list(config.context_fields) or None,
            "blank": config.blank, "answer_format": config.answer_format}  # fmt: skip
    names = [Path(p).stem for p in config.ood]
    tr, dv, *rest = read_item_sets([("train", config.train), ("dev", config.dev),
                                    *zip(names, config.ood)], read)  # fmt: skip
    ood = dict(zip(names, rest))
    return compare_experiment(
        tr, dv, ood=ood, evaluators=config.evaluators, seed=config.seed, seeds=config.seeds,
        choice_context=config.choice_context, **opts,
    )  # fmt: skip


def _print(res, config: CompareConfig, *, only_ood: bool) -> None:
    """The comparison's tables on the terminal, and its Markdown and JSON files."""
    json_out, markdown = config.json_out, config.markdown
    typer.echo(res.filter_summary)
    for line in res.filter_notes:
        typer.echo(line, err=True)  # notes and warnings on stderr, as aflite filter's
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
    "or sklearn.MODULE.Class; on multiple-choice items: "
    + ", ".join(evaluator_names(items=True))
    + " (the choice-wise model).  [default: "
    + ",".join(evaluator_names())
    + "; on items: "
    + ",".join(evaluator_names(items=True))
    + "]"
)
_with_filter_options = config_options(
    FilterConfig,
    only=COMPARE_FILTER_OPTIONS,
    helps={"id_field": "Field with row ids (finds rows in a precomputed:FILE with ids)."},
    into="filter_options",
)
_COMPARE = {"helps": {"evaluators": _EVALUATORS_HELP}}


@experiment_app.command("compare")
@_with_filter_options
@config_options(CompareConfig, **_COMPARE)
def compare_cmd(*, config: CompareConfig, filter_options: dict) -> None:
    """Train on D, a random D_n and the filtered D(Phi); evaluate on dev and filtered dev.
    Takes every option of `aflite filter`, with its defaults."""
    _compare(config, filter_options, only_ood=False)


@experiment_app.command("ood")
@_with_filter_options
@config_options(
    CompareConfig,
    helps={**_COMPARE["helps"], "ood": "Labelled sets to evaluate on (repeatable), e.g. HANS."},
    required=("ood",),
)
def ood_cmd(*, config: CompareConfig, filter_options: dict) -> None:
    """Per-set accuracy of the compare models on out-of-distribution sets.
    Takes every option of `aflite filter`, with its defaults."""
    _compare(config, filter_options, only_ood=True)
