"""Commands beyond ``filter`` and ``demo``: audits, experiments and reports."""

from __future__ import annotations

import typer

from aflite.cli.app import app
from aflite.cli.options import audit_names, config_options
from aflite.config import AuditConfig


@app.command("report")
def report_cmd(
    out_dir: str = typer.Argument(..., help="A filter or score run's output folder."),
) -> None:
    """Rebuild report.html from a filter or score run's output folder."""
    import json
    from pathlib import Path

    from aflite.errors import DataError
    from aflite.reports.html import write_report

    summary = Path(out_dir) / "summary.json"
    if not summary.exists():
        raise DataError(f"{out_dir}: no summary.json here; is it an aflite output folder?")
    try:
        kind = json.loads(summary.read_text(encoding="utf-8")).get("kind")
    except (ValueError, AttributeError):
        raise DataError(f"{summary}: not an aflite summary (unreadable JSON)") from None
    if kind == "scores":
        from aflite.reports.scores_html import write_scores_report

        typer.echo(str(write_scores_report(out_dir)))
        return
    typer.echo(str(write_report(out_dir)))


@app.command("export")
def export_cmd(
    out_dir: str = typer.Argument(..., metavar="OUT", help="A filter run's output folder."),
    to: str = typer.Option(
        ..., metavar="FORMAT", help="label-studio | argilla | csv (see the README for each format)."
    ),
    rows: str = typer.Option("removed", metavar="removed|all", help="The removed rows, or all."),
    output: str | None = typer.Option(
        None, metavar="FILE", help="Where to write (default: OUT/export-FORMAT-ROWS.json or .csv)."
    ),
    fields: str | None = typer.Option(
        None,
        metavar="A,B",
        help="Text fields to carry (default: those filtered on, then the "
        "input's other text columns, such as the premise beside a hypothesis).",
    ),
) -> None:
    """Write a filter run's removed (or all) rows with their scores, phase and why-removed
    n-grams for review in an annotation tool."""
    from aflite.exports import export_run

    path, n = export_run(out_dir, to, rows=rows, output=output, fields=fields)
    typer.echo(f"wrote {n} rows to {path}")


@app.command("audit")
@config_options(
    AuditConfig,
    helps={
        "audits": "Audits to run (default: all of the data's kind): for labelled rows any of "
        + ", ".join(audit_names())
        + "; for multiple-choice items any of "
        + ", ".join(audit_names(choices=True))
        + "."
    },
)
def audit_cmd(
    quiet: bool = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's)."),
    *,
    config: AuditConfig,
) -> None:
    """Measure dataset biases (before/after filtering with --compare)."""
    import json
    import sys

    from aflite._internal.progress import progress_bar, silence_third_party_progress
    from aflite.cli.audit_compare import compare_source, run_train_size
    from aflite.errors import DataError

    input_path, label_field, field = config.input, config.label_field, config.field
    compare, features, seed = config.compare, config.features, config.seed
    min_count, tokenizer, dedupe_sentences = (
        config.min_count, config.tokenizer, config.dedupe_sentences,
    )  # fmt: skip
    plot_dir, save_counts, json_out = config.plot_dir, config.save_counts, config.json_out
    if quiet:
        silence_third_party_progress()
    # bars (on stderr) only on a terminal, as the filter's are
    show = not quiet and sys.stderr.isatty()
    fields = list(config.text_fields)
    # the representation (knn, bias) reads rep_fields: a filter run's own with --compare
    note, rep_fields = None, fields
    if compare:
        source = compare_source(compare, features, fields)
        compare, features, note, rep_fields = (
            source.path, source.features, source.note, list(source.fields),
        )  # fmt: skip
    features = features or "ngrams"

    from aflite._internal.atomic import atomic_path
    from aflite.audits import AUDITS, load_identity_words, parse_min_counts
    from aflite.audits.baselines import bias_train_rows
    from aflite.audits.before_after import AuditSet, audit_before_after, sized_audits
    from aflite.features.build import build_features, parse_feature_spec
    from aflite.io.dropped import without_dropped
    from aflite.io.label_check import check_dropped_labels
    from aflite.io.labelled import read_labelled
    from aflite.jobs import read_labelled_texts
    from aflite.reports.terminal import print_audits

    items = config.choices_field or config.choices_fields or None
    names = list(config.audits) if config.audits else audit_names(choices=items is not None)
    words = load_identity_words(config.identity_words) if config.identity_words else None
    min_counts = parse_min_counts(config.identity_min_count)
    spec = parse_feature_spec(features)
    # only knn and bias measure with the representation: the word audits alone neither read
    # the run's fields nor say anything about its representation
    measures = items is None and any(AUDITS[a].reads_features for a in names)

    def phi_of(inputs):
        if not measures:
            return None
        # each set's Phi from its own texts (n-grams: its own vocabulary), as the spec says
        with progress_bar("embedding", enabled=show) as bar:
            phi, _ = build_features(
                spec,
                {f: inputs.texts[f] for f in rep_fields},
                n_rows=len(inputs.labels),
                ids=inputs.ids,
                fingerprint=inputs.table.fingerprint(),
                progress=bar,
            )
        return phi

    def read(path: str, *, given: bool = False):  # noqa: ANN202 -- LabelledData
        if items is None:
            extra = [f for f in rep_fields if f not in fields] if measures else []
            try:
                data = read_labelled_texts(path, fields + extra, label_field=label_field,
                                           drop_labels=config.drop_labels)  # fmt: skip
            except DataError as e:
                if not extra:
                    raise
                raise DataError(
                    f"{e}; the run's representation reads {', '.join(rep_fields)} (a --features "
                    "other than the run's measures the --text-fields given)"
                ) from None
            if given:  # a filtered set (--compare) may have lost the rows; the input has them
                check_dropped_labels(data, config.drop_labels)
            return without_dropped(data)
        return read_labelled(path, label=label_field, choices=items, pick=False,
                             context=config.context_fields, blank=config.blank,
                             answer_format=config.answer_format)  # fmt: skip

    sets = [read(input_path, given=True)] + ([read(compare)] if compare else [])
    bias_t = None
    if "bias" in names:
        # before and after are measured at one t, resolved on INPUT
        given = config.bias_train_size
        bias_t = bias_train_rows([len(s.labels) for s in sets], given, flag="--bias-train-size")
    # the word audits read the fields given, whatever the representation reads
    audit_sets = [
        AuditSet(s.texts if items else {f: s.texts[f] for f in fields}, s.labels, phi_of(s),
                 s.choices)
        for s in sets
    ]  # fmt: skip
    if note and measures:
        typer.echo(note, err=True)
    run_t = run_train_size(compare) if compare else None
    if run_t is not None and bias_t is not None and run_t != bias_t:
        typer.echo(
            f"note: the run scored its rows at t = {run_t} training rows, the bias audit at "
            f"t = {bias_t}; --bias-train-size {run_t} measures at the run's",
            err=True,
        )
    sized = sized_audits(names)
    sizes = [len(s) for s in audit_sets]
    total = len(names) * len(sets) + (len(sizes) > 1 and sizes[1] < sizes[0]) * len(sized)
    done = [0]
    with progress_bar("audits", enabled=show) as bar:

        def step(_name: str) -> None:
            done[0] += 1
            bar(done[0], max(total, done[0]))

        measured = audit_before_after(
            audit_sets[0],
            audit_sets[1] if compare else None,
            audits=names,
            before_tag="input" if compare else "",
            after_tag="compare",
            bias_train_size=bias_t,
            counts_path=save_counts,
            seed=seed,
            progress=step,
            field=field,
            min_count=min_count,
            identity_min_count=min_counts,
            identity_words=words,
            dedupe_sentences=dedupe_sentences,
            tokenizer=tokenizer,
            plot_dir=plot_dir,
        )
    first, control = measured.before, measured.control
    second = measured.after if compare else None
    print_audits(first, second)
    if control:
        print_audits(control)
    if second is not None:
        from aflite.reports.warnings import audit_warnings

        # the filter's check of its kept rows, on the set compared
        found = audit_warnings([r.to_dict() for r in second], rows="the compare set",
                               reference=[r.to_dict() for r in first])  # fmt: skip
        for warning in found:
            typer.echo(f"warning: {warning}", err=True)
    if json_out:
        doc = {"input": input_path, "audits": [r.to_dict() for r in first]}
        if second is not None:
            doc["compare"] = compare
            doc["compare_audits"] = [r.to_dict() for r in second]
        if control:
            doc["control_audits"] = [r.to_dict() for r in control]
        with atomic_path(json_out) as tmp:
            tmp.write_text(json.dumps(doc, indent=2, default=str))
        typer.echo(f"wrote {json_out}")


@app.command("pmi-query")
def pmi_query_cmd(
    counts: str = typer.Argument(..., help="Counts saved by `aflite audit --save-counts`."),
    term: str = typer.Argument(..., help='A word or a two-word term: woman, "african boy".'),
    top: int = typer.Option(20, help="How many associations per table."),
    min_count: int | None = typer.Option(
        None, help="Drop n-grams seen fewer times (at least the saved min count)."
    ),
    field: str | None = typer.Option(
        None,
        metavar="FIELD",
        help="Which saved view: a text field, or all fields together (the default).",
    ),
    ngrams: str = typer.Option(
        "auto", help="unigrams | bigrams | both | auto (unigrams; both for a two-word term)."
    ),
    examples: str | None = typer.Option(
        None, help="Print sentences that hold TERM and this n-gram (e.g. purse)."
    ),
    n_examples: int = typer.Option(5, help="How many example sentences."),
) -> None:
    """Top unigram (and bigram) associations of one term from saved co-occurrence counts."""
    from aflite.audits import load_counts
    from aflite.errors import DataError
    from aflite.reports.terminal import association_lines, example_lines

    kinds = {"unigrams": ["unigrams"], "bigrams": ["bigrams"], "both": ["unigrams", "bigrams"]}
    if ngrams not in (*kinds, "auto"):
        raise DataError(f"--ngrams must be unigrams, bigrams, both or auto, got '{ngrams}'")
    cc = load_counts(counts, field, text=examples is not None)
    if ngrams == "auto":
        ngrams = "both" if len(term.split()) == 2 else "unigrams"
    try:
        tables = {
            k: cc.top_associations(term, top, ngrams=k, min_count=min_count) for k in kinds[ngrams]
        }
        found = cc.example_sentences(term, examples, n_examples) if examples else None
    except KeyError as e:
        raise DataError(f"{counts}: {e.args[0]}") from None
    for line in association_lines(cc, term, tables, min_count=min_count):
        typer.echo(line)
    if found is not None:
        for line in example_lines(term, examples, *found):
            typer.echo(line)
