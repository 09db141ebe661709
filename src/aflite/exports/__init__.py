"""Exports of a filter run's rows for review in annotation tools (``aflite export``): one file
per format, registered by name in :mod:`aflite.exports.registry`."""

from aflite.exports.registry import EXPORTERS, export_run, register_exporter
from aflite.exports.rows import ReviewRow, load_review_rows

__all__ = ["EXPORTERS", "export_run", "register_exporter", "ReviewRow", "load_review_rows"]
