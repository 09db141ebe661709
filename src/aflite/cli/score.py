"""``aflite score``: per-example difficulty and bias scores of a data file, out of sample."""

from __future__ import annotations

import typer

from aflite.cli.options import config_options
from aflite.config import ScoreConfig


@config_options(ScoreConfig, config_file=True)
def score_cmd(
    quiet: bool = typer.Option(False, help="No progress bars (tqdm's and Hugging Face's)."),
    *,
    config: ScoreConfig,
) -> None:
    """Score every row (predictability, data map, PVI, AUM, EL2N, forgetting, partial input),
    each by models that never trained on it; write scores.parquet, summary.json, report.html."""
    from aflite._internal.progress import silence_third_party_progress

    if quiet:
        silence_third_party_progress()
    from aflite.jobs.score_job import run_score_job

    typer.echo(run_score_job(config).summary_text)


# the commands of this module, by name: registered on the command line by aflite.cli.app
COMMANDS = {
    "score": score_cmd,
}
