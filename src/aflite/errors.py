"""Errors that reach the user as one line (the command line exits with code 2 on them)."""

from __future__ import annotations

__all__ = ["DataError", "LabelWarning", "MissingExtraError", "OptionWarning"]


class DataError(ValueError):
    """A problem with the user's data; its message is one line naming file, row and field."""


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class OptionWarning(UserWarning):
    """An option given with a value the run does not read (e.g. ``threshold`` with ``by``):
    the run goes on without it; the message names it."""


class LabelWarning(UserWarning):
    """A class that may be a mistake but may be real (a few rows beside large classes)."""
