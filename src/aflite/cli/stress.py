"""``aflite experiment stress``: stress sets (after Naik et al. 2018) from any NLI file."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aflite.cli.app import experiment_app
from aflite.cli.options import parse_fields
from aflite.errors import DataError


def _test_names() -> list[str]:
    from aflite.experiments.stress import STRESS_TESTS

    return list(STRESS_TESTS)


@experiment_app.command("stress")
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
        None, help="Comma-separated tests (default: all): " + ", ".join(_test_names()) + "."
    ),
    seed: int = typer.Option(0, help="Random seed of the typos."),
    overwrite: bool = typer.Option(False, help="Replace an earlier stress set in --out-dir."),
) -> None:
    """Label-keeping stress sets of any NLI file: distraction and noise tests. As in Naik et
    al. (2018): tautologies appended, or one typo; every row keeps its label, its source id
    and its test in --category-field.
    Evaluate on them with: experiment ood --ood OUT/stress.jsonl --ood-group-field category."""
    from aflite.experiments.stress import STRESS_TESTS, make_stress_set
    from aflite.io.labelled import read_labelled

    names = parse_fields(tests) if tests is not None else None
    unknown = next((n for n in names or [] if n not in STRESS_TESTS), None)
    if unknown is not None or names == []:
        raise DataError(
            f"--tests: {'unknown test ' + repr(unknown) if unknown else 'name at least one test'}"
            f" (use any of {', '.join(STRESS_TESTS)})"
        )
    data = read_labelled(dev, label=None, text=[premise_field, hypothesis_field], id=id_field)
    table, ids, texts = data.table, data.ids, data.texts or {}
    taken = (premise_field, hypothesis_field, data.fields.id, "source_id", "stress_kind")
    if category_field in taken:
        raise DataError(f"--category-field: '{category_field}' is a field the set needs")
    stress = make_stress_set(
        texts[premise_field],
        texts[hypothesis_field],
        tests=names,
        seed=seed,
    )
    out = Path(out_dir)
    target = out / table.output_name("stress")
    summary_path = out / "stress_summary.json"
    if not overwrite and (target.exists() or summary_path.exists()):
        raise DataError(f"{out}: holds an earlier stress set; pass --overwrite to replace it")
    out.mkdir(parents=True, exist_ok=True)
    source_ids = [ids[i] for i in stress.source]
    extra = {
        premise_field: stress.premise,
        hypothesis_field: stress.hypothesis,
        "source_id": source_ids,
        category_field: stress.category,
        "stress_kind": stress.kind,
    }
    if data.fields.id:
        extra[data.fields.id] = [f"{i}:{c}" for i, c in zip(source_ids, stress.category)]
    table.write_subset(target, stress.source, extra)
    counts = {n: stress.category.count(n) for n in dict.fromkeys(stress.category)}
    summary = {
        "kind": "stress",
        "input": str(dev),
        "rows": len(stress),
        "source_rows": len(table),
        "seed": seed,
        "tests": {n: {"kind": STRESS_TESTS[n].kind, "description": STRESS_TESTS[n].description,
                      "rows": counts.get(n, 0), "skipped": k} for n, k in stress.skipped.items()},
        "outputs": {"stress": target.name, "summary": summary_path.name},
    }  # fmt: skip
    from aflite._internal.atomic import atomic_path

    with atomic_path(summary_path) as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=str))
    for n, t in summary["tests"].items():
        skipped = f" ({t['skipped']} left out: nothing to rewrite)" if t["skipped"] else ""
        typer.echo(f"{n} ({t['kind']}): {t['rows']} rows{skipped}")
    typer.echo(f"wrote {target} ({len(stress)} rows) and {summary_path}")
