"""Commands beyond ``filter`` and ``demo``: audits, experiments and reports."""

from __future__ import annotations

import typer

from aflite.cli.helptext import TEXT_FIELDS_NAMED
from aflite.cli.options import config_options
from aflite.config import AuditConfig
from aflite.config.names import audit_names


def report_cmd(
    out_dir: str = typer.Argument(..., help="A filter or score run's output folder."),
) -> None:
    """Rebuild report.html from a filter or score run's output folder."""
    from aflite.jobs.run_tools import rebuild_report

    typer.echo(str(rebuild_report(out_dir)))


def export_cmd(
    out_dir: str = typer.Argument(..., metavar="OUT", help="A filter run's output folder."),
    to: str = typer.Option(
        ...,
        metavar="FORMAT",
        help="label-studio | argilla | csv (see the report and review page of the docs for each format).",
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
    from aflite._internal.text import plural
    from aflite.jobs.run_tools import export_job

    path, n, items = export_job(out_dir, to, rows=rows, output=output, fields=fields)
    # a multiple-choice run's rows are items
    typer.echo(f"wrote {plural(n, 'item' if items else 'row')} to {path}")


@config_options(
    AuditConfig,
    helps={
        "text": TEXT_FIELDS_NAMED,
        "audits": "Audits to run (default: all of the data's kind): for labelled rows any of "
        + ", ".join(audit_names())
        + "; for multiple-choice items any of "
        + ", ".join(audit_names(choices=True))
        + ".",
    },
)
def audit_cmd(
    quiet: bool = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's)."),
    *,
    config: AuditConfig,
) -> None:
    """Measure dataset biases (before/after filtering with --compare)."""

    from aflite._internal.progress import silence_third_party_progress
    from aflite.jobs.audit_job import run_audit_job
    from aflite.reports.terminal import print_audits

    if quiet:
        silence_third_party_progress()
    # a bar on a terminal, a line every few seconds off one, as the filter's
    out = run_audit_job(config, progress=not quiet, note=lambda line: typer.echo(line, err=True))
    print_audits(out.before, out.after)
    if out.control:
        print_audits(out.control)
    for warning in out.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if out.json_path:
        typer.echo(f"wrote {out.json_path}")


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
    from aflite.jobs.run_tools import query_counts
    from aflite.reports.terminal import association_lines, example_lines

    cc, tables, found = query_counts(
        counts,
        term,
        top=top,
        min_count=min_count,
        field=field,
        ngrams=ngrams,
        examples=examples,
        n_examples=n_examples,
    )
    for line in association_lines(cc, term, tables, min_count=min_count):
        typer.echo(line)
    if found is not None:
        for line in example_lines(term, examples, *found):
            typer.echo(line)


def verify_cmd(
    card: str = typer.Argument(
        ...,
        metavar="CARD",
        help="A data set card: a run's card.md, or a kept set's folder whose README.md is one.",
    ),
    data: str | None = typer.Argument(
        None, metavar="INPUT", help="The input the card's run filtered, to re-run it on."
    ),
    kept: str | None = typer.Option(
        None,
        metavar="FILE",
        help="A published kept file (or dataset folder) to check "
        "against the card's kept-set fingerprint, without re-running the filter.",
    ),
    device: str = typer.Option("auto", metavar="DEVICE", help="auto | cpu | cuda."),
    cache_dir: str | None = typer.Option(
        None,
        metavar="DIR",
        help="An embedding cache to build Phi from (default: none, everything is computed again).",
    ),
    quiet: bool = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's)."),
) -> None:
    """Re-run the filter a data set card describes on INPUT (or read a published kept file)
    and say in one line whether the kept set's fingerprint matches the card's, and if not,
    where they first differ. Exit code 0: the same kept set; 1: it differs; 2: a bad card or
    input; 3: it differs, and the card was made with another aflite version or encoder."""
    from aflite._internal.progress import silence_third_party_progress
    from aflite.jobs.run_tools import verify_job

    if quiet:
        silence_third_party_progress()
    verdict = verify_job(card, data, kept=kept, device=device, cache_dir=cache_dir,
                         progress=not quiet)  # fmt: skip
    typer.echo(verdict.line)
    if verdict.code:
        raise typer.Exit(verdict.code)


# the commands of this module, by name: registered on the command line by aflite.cli.app
COMMANDS = {
    "report": report_cmd,
    "export": export_cmd,
    "audit": audit_cmd,
    "pmi-query": pmi_query_cmd,
    "verify": verify_cmd,
}
