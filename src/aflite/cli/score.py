"""``aflite score``: per-example difficulty and bias scores of a data file, out of sample."""

from __future__ import annotations

import typer

from aflite.cli.app import app
from aflite.cli.options import features_help, input_help, parse_fields
from aflite.errors import DataError


def scorer_names() -> list[str]:
    """The registered per-example scorers (imports no torch)."""
    from aflite.scoring import scorer_names as names

    return names()


def _scorer_list(value: str | None) -> list[str] | None:
    names = parse_fields(value)
    if value is not None and not names:
        raise DataError("--scorers: name at least one scorer")
    known = scorer_names()
    for n in names:
        if n not in known:
            raise DataError(f"--scorers: unknown scorer '{n}' (use any of {', '.join(known)})")
    return names or None


@app.command("score")
def score_cmd(
    input_path: str = typer.Argument(..., metavar="INPUT", help=input_help()),
    scorers: str | None = typer.Option(
        None,
        metavar="NAMES",
        help="Comma-separated scorers, any of "
        + ", ".join(scorer_names())
        + " (default: all but partial; partial too with --partial-text-fields).",
    ),
    label_field: str = typer.Option(
        "label", metavar="FIELD", help="Field holding the class label."
    ),
    text_fields: str | None = typer.Option(
        None, metavar="FIELDS", help="Comma-separated text fields, e.g. premise,hypothesis."
    ),
    partial_text_fields: str | None = typer.Option(
        None,
        metavar="FIELDS",
        help="Text fields of a partial input (e.g. hypothesis) for partial and pvi_partial.",
    ),
    id_field: str | None = typer.Option(
        None, metavar="FIELD", help="Field with unique row ids (default: a field named id)."
    ),
    group_field: str | None = typer.Option(
        None, metavar="FIELD", help="Rows sharing this field never straddle a fold (e.g. premise)."
    ),
    features: str = typer.Option("ngrams", metavar="KIND[:ARG]", help=features_help()),
    dynamics: str | None = typer.Option(
        None,
        metavar="DIR",
        help="Training dynamics logged elsewhere (allenai/cartography's dynamics_epoch_N.jsonl, "
        "matched by id) instead of recording them.",
    ),
    probs: str | None = typer.Option(
        None,
        metavar="FILE",
        help="Out-of-fold class probabilities of your own model, by id (a column per class "
        "label, or one list column in sorted label order), for pvi instead of aflite's model.",
    ),
    partial_probs: str | None = typer.Option(
        None,
        metavar="FILE",
        help="The same from your own partial-input model (e.g. hypothesis-only), for partial "
        "and pvi_partial.",
    ),
    n_folds: int = typer.Option(5, metavar="K", help="Folds of each cross-fit."),
    repeats: int = typer.Option(1, metavar="R", help="Cross-fits with fresh folds, averaged."),
    epochs: int = typer.Option(10, metavar="E", help="Epochs of the training dynamics."),
    split: str | None = typer.Option(
        None, help="The split to score, for a Hugging Face DatasetDict folder (e.g. train)."
    ),
    out_dir: str = typer.Option("aflite-scores", metavar="DIR", help="Output folder."),
    seed: int = typer.Option(0, metavar="N", help="Random seed."),
    device: str = typer.Option("auto", metavar="DEVICE", help="auto | cpu | cuda."),
    cache_dir: str | None = typer.Option(
        None, metavar="DIR", help="Embedding cache folder (default ~/.cache/aflite)."
    ),
    overwrite: bool = typer.Option(
        False, help="Replace the outputs of an earlier run in --out-dir (other files stay)."
    ),
    report: bool = typer.Option(True, help="Write report.html."),
    quiet: bool = typer.Option(False, help="No progress bars (tqdm's and Hugging Face's)."),
) -> None:
    """Score every row (predictability, data map, PVI, AUM, EL2N, forgetting, partial input),
    each by models that never trained on it; write scores.parquet, summary.json, report.html."""
    from aflite._internal.progress import silence_third_party_progress

    if quiet:
        silence_third_party_progress()
    from aflite.features.cache import default_cache_dir
    from aflite.jobs.score_job import ScoreJob, run_score_job

    job = ScoreJob(
        input=input_path,
        label_field=label_field,
        text_fields=parse_fields(text_fields),
        id_field=id_field,
        group_field=group_field,
        features=features,
        partial_text_fields=parse_fields(partial_text_fields),
        dynamics=dynamics,
        probs=probs,
        partial_probs=partial_probs,
        scorers=_scorer_list(scorers),
        n_folds=n_folds,
        repeats=repeats,
        seed=seed,
        device=device,
        split=split,
        cache_dir=cache_dir or str(default_cache_dir()),
        out_dir=out_dir,
        overwrite=overwrite,
        report=report,
        options={"epochs": epochs},
    )
    typer.echo(run_score_job(job).summary_text)
