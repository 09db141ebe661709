"""``aflite experiment compare | ood`` as a job: read the training, dev and out-of-distribution
sets (rows or multiple-choice items) and run the comparison; and ``experiment synthetic``,
the paper's study. The command line prints their tables."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from aflite._internal.atomic import atomic_path
from aflite._internal.checks import to_names
from aflite.config import CompareConfig
from aflite.errors import DataError

__all__ = ["run_compare_job", "run_synthetic_job", "write_compare_files"]


def run_compare_job(config: CompareConfig, filter_options: dict[str, Any]) -> Any:
    """The comparison ``config`` asks for, with the filter's ``filter_options``: a
    :class:`~aflite.experiments.results.CompareResult`."""
    from aflite._internal.options import ConfigError

    try:
        return _compare_result(config, filter_options)
    except ConfigError as e:  # an option named as the command line's flag
        raise DataError(e.render(cli=True)) from None


def write_compare_files(res: Any, config: CompareConfig) -> list[str]:
    """The comparison as Markdown (``--markdown``) and JSON (``--json-out``); the files
    written."""
    written = []
    for path, text in ((config.markdown, res.markdown), (config.json_out, None)):
        if path:
            with atomic_path(path) as tmp:
                tmp.write_text(text() if text else json.dumps(res.to_dict(), indent=2))
            written.append(str(path))
    return written


def run_synthetic_job(
    out_dir: str, *, n: int = 2000, flip_share: float = 0.05, seed: int = 0
) -> tuple[Any, Path, Path]:
    """The paper's synthetic study into ``out_dir``: its table (header, rows), the JSON and
    the figure."""
    from aflite.experiments.synthetic import levels_table, run_synthetic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    levels = run_synthetic(n=n, flip_share=flip_share, seed=seed, plot=out / "synthetic.png")
    with atomic_path(out / "synthetic.json") as tmp:
        tmp.write_text(json.dumps([asdict(lv) for lv in levels], indent=2))
    return levels_table(levels), out / "synthetic.json", out / "synthetic.png"


def _labelled(
    path: str, label_field: str, fields: list[str], group_field: str | None, id_field: str | None
):
    from aflite.io.labelled import read_labelled

    return read_labelled(
        path, label=label_field, text=fields, id=id_field, group=group_field, pick=False
    )


def _ood_sets(
    paths: list[str],
    label_field: str,
    fields: list[str],
    id_field: str | None,
    group_fields: list[str] | None,
):
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
    return {k: list(to_names(v, "ood_labels")) for k, v in per_set.items()} or None


def _compare_result(config: CompareConfig, filter_options: dict):
    from aflite.experiments import compare_experiment

    fields = list(config.text)
    label_field = config.label
    opts = dict(filter_options)
    if opts.get("cache_dir") is None:
        from aflite.features.cache import default_cache_dir

        opts["cache_dir"] = str(default_cache_dir())
    group_field, id_field = opts.pop("group"), opts.pop("id")
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


def _compare_items(
    config: CompareConfig, opts: dict, group_field: str | None, id_field: str | None
):
    """compare on multiple-choice items: every set read as items with the same options."""
    from aflite.config.compare import check_item_options
    from aflite.experiments import compare_experiment
    from aflite.experiments.compare_items import read_item_sets

    # the filter's options are no CompareConfig fields, and the files are read here, before
    # compare_experiment checks them: refuse those items cannot take before reading
    check_item_options(opts)
    read = config.read_arguments() | {"id": id_field, "group": group_field}
    del read["text"]  # items are read from their choices and context
    names = [Path(p).stem for p in config.ood]
    tr, dv, *rest = read_item_sets(
        [("train", config.train), ("dev", config.dev), *zip(names, config.ood)], read
    )
    ood = dict(zip(names, rest))
    return compare_experiment(
        tr,
        dv,
        ood=ood,
        evaluators=config.evaluators,
        seed=config.seed,
        seeds=config.seeds,
        choice_context=config.choice_context,
        **opts,
    )
