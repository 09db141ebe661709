"""The table API under its first name: :func:`read_table`, :data:`FORMATS` and the
:class:`Table` protocol now live in :mod:`aflite.io.registry` and :mod:`aflite.io.base`."""

from __future__ import annotations

from aflite.errors import DataError
from aflite.io.base import Table
from aflite.io.registry import FORMATS, read_table

__all__ = ["DataError", "FORMATS", "Table", "read_table"]
