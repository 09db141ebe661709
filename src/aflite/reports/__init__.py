"""Reports: the self-contained HTML page of a filter run, and tables for the terminal."""

from aflite.reports.html import render_report, write_report

__all__ = ["render_report", "write_report"]
