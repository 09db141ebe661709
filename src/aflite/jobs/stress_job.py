"""``aflite experiment stress`` as a job: label-keeping stress sets (after Naik et al. 2018)
of any NLI file, written in the input's format beside ``stress_summary.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError

__all__ = ["StressOutcome", "run_stress_job"]


@dataclass
class StressOutcome:
    """The stress set written, its summary (as ``stress_summary.json`` holds it) and that file."""

    target: Path
    summary: dict[str, Any]
    summary_path: Path


def run_stress_job(
    dev: str,
    out_dir: str,
    *,
    premise_field: str = "premise",
    hypothesis_field: str = "hypothesis",
    id_field: str | None = None,
    category_field: str = "category",
    tests: list[str] | None = None,
    seed: int = 0,
    overwrite: bool = False,
) -> StressOutcome:
    """Rewrite ``dev`` with each of ``tests`` (None: all); every row keeps its label, its
    source id and its test in ``category_field``."""
    from aflite.experiments.stress import STRESS_TESTS, make_stress_set
    from aflite.io.labelled import read_labelled

    unknown = next((n for n in tests or [] if n not in STRESS_TESTS), None)
    if unknown is not None or tests == []:
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
        tests=tests,
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
        "tests": {
            n: {
                "kind": STRESS_TESTS[n].kind,
                "description": STRESS_TESTS[n].description,
                "rows": counts.get(n, 0),
                "skipped": k,
            }
            for n, k in stress.skipped.items()
        },
        "outputs": {"stress": target.name, "summary": summary_path.name},
    }
    with atomic_path(summary_path) as tmp:
        tmp.write_text(json.dumps(summary, indent=2, default=str))
    return StressOutcome(target, summary, summary_path)
