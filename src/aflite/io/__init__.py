"""Data IO: reading labelled data sets, writing row subsets in the same format, checkpoints."""

from aflite.io.tables import FORMATS, DataError, Table, read_table

__all__ = ["FORMATS", "DataError", "Table", "read_table"]
