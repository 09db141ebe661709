"""Data IO: reading labelled data sets in any registered format or from memory
(:func:`read_labelled` -> :class:`LabelledData`), writing row subsets in the same format,
checkpoints. A format writes its outputs through :func:`atomic_path` (a whole file, or
none).

Each format is one module in :mod:`aflite.io.formats`, registered with
:func:`register_format`; :data:`FORMATS` lists them and :func:`read_table` reads any of them.
"""

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError
from aflite.io.base import BaseTable, ImageTable, RowsTable, Table
from aflite.io.images import is_image_input, read_images
from aflite.io.labelled import LabelledData, read_labelled
from aflite.io.registry import (
    FORMATS,
    FormatSpec,
    ReadOptions,
    detect_format,
    formats_help,
    read_table,
    register_format,
)

__all__ = [
    "FORMATS",
    "BaseTable",
    "DataError",
    "FormatSpec",
    "ImageTable",
    "LabelledData",
    "ReadOptions",
    "RowsTable",
    "Table",
    "atomic_path",
    "detect_format",
    "formats_help",
    "is_image_input",
    "read_images",
    "read_labelled",
    "read_table",
    "register_format",
]
