"""The typer application and its commands: each command module (:mod:`~aflite.cli.filtering`,
:mod:`~aflite.cli.commands`, :mod:`~aflite.cli.score`, :mod:`~aflite.cli.experiments`,
:mod:`~aflite.cli.stress`) lists its commands by name, and they are registered here, in the
order the help lists them."""

from __future__ import annotations

import typer

from aflite.cli import commands, experiments, filtering, score, stress
from aflite.cli.helptext import AfliteGroup

__all__ = ["app", "experiment_app"]

app = typer.Typer(
    cls=AfliteGroup,
    # plain help: flags read `--report / --no-report`, and no box drawing in a pipe or a log
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find and remove spurious biases (dataset artifacts) with adversarial filtering.",
)
experiment_app = typer.Typer(
    cls=AfliteGroup,
    rich_markup_mode=None,
    no_args_is_help=True,
    help="The paper's experiments as commands.",
)
app.add_typer(experiment_app, name="experiment")


def _print_version(value: bool) -> None:
    if value:
        from aflite._internal.version import VERSION

        typer.echo(f"aflite {VERSION}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    pass


for group, table in (
    (app, filtering.COMMANDS),
    (app, commands.COMMANDS),
    (experiment_app, experiments.COMMANDS),
    (app, score.COMMANDS),
    (experiment_app, stress.COMMANDS),
):
    for name, command in table.items():
        group.command(name)(command)
