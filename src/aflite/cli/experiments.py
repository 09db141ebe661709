"""``aflite experiment synthetic | compare | ood``."""

from __future__ import annotations

import typer

from aflite.cli.helptext import TEXT_FIELDS_NAMED
from aflite.cli.options import config_options
from aflite.config import CompareConfig, FilterConfig
from aflite.config.compare import COMPARE_FILTER_OPTIONS
from aflite.config.names import evaluator_names


def _print_table(title: str, header: list[str], rows: list[list]) -> None:
    from aflite.reports.terminal import print_table

    print_table(title, header, rows)


def synthetic_cmd(
    out_dir: str = typer.Option("aflite-synthetic", help="Folder for the figure and JSON."),
    n: int = typer.Option(2000, help="Instances per data set."),
    flip_share: float = typer.Option(
        0.05, help="Share of flipped labels in the most separated set."
    ),
    seed: int = typer.Option(0, help="Random seed."),
) -> None:
    """The paper's §3 study: four concentric-circle sets with planted artifacts, before/after."""
    from aflite.jobs.compare_job import run_synthetic_job

    table, doc, figure = run_synthetic_job(out_dir, n=n, flip_share=flip_share, seed=seed)
    _print_table("Synthetic study (before → after AFLITE)", *table)
    typer.echo(f"wrote {doc}")
    typer.echo(f"figure: {figure}")


def _compare(config: CompareConfig, filter_options: dict, *, only_ood: bool) -> None:
    from aflite.jobs.compare_job import run_compare_job, write_compare_files

    res = run_compare_job(config, filter_options)
    _print(res, config, only_ood=only_ood)
    for path in write_compare_files(res, config):
        typer.echo(f"wrote {path}")


def _print(res, config: CompareConfig, *, only_ood: bool) -> None:
    """The comparison's tables on the terminal, and its Markdown and JSON files."""
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
    helps={"id": "Field with row ids (finds rows in a precomputed:FILE with ids)."},
    into="filter_options",
)
_COMPARE = {"helps": {"evaluators": _EVALUATORS_HELP, "text": TEXT_FIELDS_NAMED}}


@_with_filter_options
@config_options(CompareConfig, **_COMPARE)
def compare_cmd(*, config: CompareConfig, filter_options: dict) -> None:
    """Train on D, a random D_n and the filtered D(Phi); evaluate on dev and filtered dev.
    Takes every option of `aflite filter`, with its defaults."""
    _compare(config, filter_options, only_ood=False)


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


# the commands of this module, by name: registered on the command line by aflite.cli.app
COMMANDS = {
    "synthetic": synthetic_cmd,
    "compare": compare_cmd,
    "ood": ood_cmd,
}
