"""Commands beyond ``filter`` and ``demo``: audits, experiments and reports."""

from __future__ import annotations

import typer

from aflite.cli.app import app


@app.command("report")
def report_cmd(out_dir: str = typer.Argument(..., help="A filter run's output folder.")) -> None:
    """Rebuild report.html from a filter run's output folder."""
    from pathlib import Path

    from aflite.io.tables import DataError
    from aflite.reports.html import write_report

    if not (Path(out_dir) / "summary.json").exists():
        raise DataError(f"{out_dir}: no summary.json here; is it an aflite filter output folder?")
    typer.echo(str(write_report(out_dir)))


@app.command("audit")
def audit_cmd(
    input_path: str = typer.Argument(
        ..., metavar="INPUT", help="Data file (any format `filter` reads)."
    ),
    label_field: str = typer.Option("label", help="Field holding the class label."),
    text_fields: str = typer.Option(
        ..., help="Comma-separated text fields, e.g. premise,hypothesis."
    ),
    field: str | None = typer.Option(
        None,
        help="Field for word audits and the partial-input baseline (default: last text field).",
    ),
    compare: str | None = typer.Option(
        None, help="A second file (e.g. kept.jsonl) audited the same way, shown side by side."
    ),
    audits: str = typer.Option(
        ",".join(("pmi", "zstats", "identity", "partial", "ppmi", "knn", "bias")),
        help="Audits to run.",
    ),
    min_count: int = typer.Option(20, help="Minimum texts containing a word (PMI, z)."),
    identity_min_count: int = typer.Option(10, help="Minimum n-gram count for identity-word PMI."),
    identity_words: str | None = typer.Option(
        None, help="Replacement identity-word list (category<TAB>word per line)."
    ),
    features: str = typer.Option(
        "ngrams", help="Representation for knn/bias audits (as in `filter`)."
    ),
    json_out: str | None = typer.Option(None, "--json", help="Write all results as JSON here."),
    plot_dir: str | None = typer.Option(None, help="Write the z-statistics plot(s) here."),
    save_counts: str | None = typer.Option(
        None, help="Save identity co-occurrence counts (.npz) for `aflite pmi-query`."
    ),
    seed: int = typer.Option(0, help="Random seed."),
) -> None:
    """Measure dataset biases (before/after filtering with --compare)."""
    import json

    from aflite._internal.atomic import atomic_path
    from aflite.audits import load_identity_words, run_audits
    from aflite.features.build import build_features, parse_feature_spec
    from aflite.jobs.filter_job import FilterJob, load_job_inputs
    from aflite.reports.terminal import print_audits

    names = [a.strip() for a in audits.split(",") if a.strip()]
    fields = [f.strip() for f in text_fields.split(",") if f.strip()]
    words = load_identity_words(identity_words) if identity_words else None
    spec = parse_feature_spec(features)

    def one(path: str, tag: str, counts_path: str | None):
        inputs = load_job_inputs(FilterJob(input=path, label_field=label_field, text_fields=fields))
        phi = None
        if spec.kind != "ngrams" and ({"knn", "bias"} & set(names)):
            phi, _ = build_features(
                spec,
                inputs.texts,
                n_rows=len(inputs.labels),
                ids=inputs.ids,
                fingerprint=inputs.table.fingerprint(),
            )
        return run_audits(
            inputs.texts,
            inputs.labels,
            field=field,
            audits=names,
            features=phi,
            min_count=min_count,
            identity_min_count=identity_min_count,
            identity_words=words,
            plot_dir=plot_dir,
            counts_path=counts_path,
            seed=seed,
            tag=tag,
        )

    first = one(input_path, "input" if compare else "", save_counts)
    second = one(compare, "compare", None) if compare else None
    print_audits(first, second)
    if json_out:
        doc = {"input": input_path, "audits": [r.to_dict() for r in first]}
        if second is not None:
            doc["compare"] = compare
            doc["compare_audits"] = [r.to_dict() for r in second]
        with atomic_path(json_out) as tmp:
            tmp.write_text(json.dumps(doc, indent=2, default=str))
        typer.echo(f"wrote {json_out}")


@app.command("pmi-query")
def pmi_query_cmd(
    counts: str = typer.Argument(..., help="Counts saved by `aflite audit --save-counts`."),
    word: str = typer.Argument(..., help="The word to look up."),
    top: int = typer.Option(20, help="How many associations."),
) -> None:
    """Top n-gram associations of one word from saved co-occurrence counts."""
    from pathlib import Path

    from aflite.audits import CooccurrenceCounts
    from aflite.io.tables import DataError

    if not Path(counts).is_file():
        raise DataError(f"{counts}: no such counts file")
    cc = CooccurrenceCounts.load(counts)
    try:
        rows = cc.top_associations(word, top)
    except KeyError as e:
        raise DataError(f"{counts}: {e.args[0]}") from None
    for gram, pmi, c in rows:
        typer.echo(f"{pmi:7.3f}  {c:6d}  {gram}")
