"""``aflite experiment stress``: stress sets (after Naik et al. 2018) from any NLI file."""

from __future__ import annotations

import typer

from aflite.cli.options import parse_fields
from aflite.config.names import stress_test_names


def stress_cmd(
    dev: str = typer.Argument(..., help="Labelled NLI file to rewrite (any format filter reads)."),
    out_dir: str = typer.Option(..., help="Folder for stress.<format> and stress_summary.json."),
    premise_field: str = typer.Option("premise", help="Field holding the premise."),
    hypothesis_field: str = typer.Option("hypothesis", help="Field holding the hypothesis."),
    id_field: str | None = typer.Option(
        None, help="Field with unique row ids (default: a field named id, else the row number)."
    ),
    category_field: str = typer.Option(
        "category", help="Field the test's name is written to (for --ood-group-field)."
    ),
    tests: str | None = typer.Option(
        None, help="Comma-separated tests (default: all): " + ", ".join(stress_test_names()) + "."
    ),
    seed: int = typer.Option(0, help="Random seed of the typos."),
    overwrite: bool = typer.Option(False, help="Replace an earlier stress set in --out-dir."),
) -> None:
    """Label-keeping stress sets of any NLI file: distraction and noise tests. As in Naik et
    al. (2018): tautologies appended, or one typo; every row keeps its label, its source id
    and its test in --category-field.
    Evaluate on them with: experiment ood --ood OUT/stress.jsonl --ood-group-field category."""
    from aflite.jobs.stress_job import run_stress_job

    names = parse_fields(tests) if tests is not None else None
    out = run_stress_job(
        dev,
        out_dir,
        premise_field=premise_field,
        hypothesis_field=hypothesis_field,
        id_field=id_field,
        category_field=category_field,
        tests=names,
        seed=seed,
        overwrite=overwrite,
    )
    for n, t in out.summary["tests"].items():
        skipped = f" ({t['skipped']} left out: nothing to rewrite)" if t["skipped"] else ""
        typer.echo(f"{n} ({t['kind']}): {t['rows']} rows{skipped}")
    typer.echo(f"wrote {out.target} ({out.summary['rows']} rows) and {out.summary_path}")


# the commands of this module, by name: registered on the command line by aflite.cli.app
COMMANDS = {
    "stress": stress_cmd,
}
