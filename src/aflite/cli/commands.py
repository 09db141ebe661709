"""Commands beyond ``filter`` and ``demo``: audits, experiments and reports."""

from __future__ import annotations

import typer

from aflite.cli.main import app


@app.command("report")
def report_cmd(out_dir: str = typer.Argument(..., help="A filter run's output folder.")) -> None:
    """Rebuild report.html from a filter run's output folder."""
    from pathlib import Path

    from aflite.io.tables import DataError
    from aflite.reports.html import write_report

    if not (Path(out_dir) / "summary.json").exists():
        raise DataError(f"{out_dir}: no summary.json here; is it an aflite filter output folder?")
    typer.echo(str(write_report(out_dir)))
