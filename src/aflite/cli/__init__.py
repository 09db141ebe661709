"""The ``aflite`` command line."""
