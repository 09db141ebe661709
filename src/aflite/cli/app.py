"""The typer application that every command registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find and remove spurious biases (dataset artifacts) with adversarial filtering.",
)
experiment_app = typer.Typer(no_args_is_help=True, help="The paper's experiments as commands.")
app.add_typer(experiment_app, name="experiment")
