"""The registry of data formats, and :func:`read_table`, which finds an input's format in it.

A format is a class with ``read(path, options) -> Table`` (a classmethod) registered with
:func:`register_format`; the built-in ones are in :mod:`aflite.io.formats`, one file each,
listed in :mod:`aflite.plugins`. An input's format is the one whose ``detect`` claims the path, else the one whose suffix its
name ends with; a later registration takes precedence over an earlier one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aflite._internal.registry import Entry, Registry
from aflite.errors import DataError
from aflite.io.base import Table

__all__ = [
    "FORMATS",
    "FormatSpec",
    "ReadOptions",
    "detect_format",
    "formats_help",
    "read_table",
    "register_format",
]


@dataclass(frozen=True)
class ReadOptions:
    """Options a reader may use: ``split`` of a data set with splits (a Hugging Face
    DatasetDict), ``image_size`` to resize images to (``None``: the first image's size)."""

    split: str | None = None
    image_size: int | None = None


@dataclass(frozen=True)
class FormatSpec(Entry):
    """A registered format: its reader class (``target``: ``read(path, options) -> Table``)
    and how inputs are recognised."""

    suffixes: tuple[str, ...] = ()
    detect: Callable[[str], bool] | None = None
    images: bool = False
    splits: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "suffixes", tuple(s.lower() for s in self.suffixes))

    def claims(self, path: str) -> bool:
        """Whether ``detect`` recognises ``path`` (a detector that cannot look is a no)."""
        if self.detect is None:
            return False
        try:
            return bool(self.detect(path))
        except OSError:
            return False

    def help(self) -> str:
        """``description (.a, .b)`` for help and error messages."""
        text = self.description or self.name
        return f"{text} ({', '.join(self.suffixes)})" if self.suffixes else text


def _stamp(spec: FormatSpec) -> None:
    spec.target.format = spec.name  # the class's own name for what it reads; never changed


FORMATS: Registry[FormatSpec] = Registry("format", entry=FormatSpec, on_register=_stamp)
register_format = FORMATS.register
"""Register a reader class under a name and set its ``format`` to the name.

``suffixes`` are file name endings (``".jsonl"``, case-insensitive); ``detect(path)``
recognises inputs a suffix cannot (a folder, ``hf:NAME``). ``images``: the tables have
``images`` (:class:`~aflite.io.base.ImageTable`); ``splits``: the reader takes
``options.split``. Registering a name again replaces the earlier format.

>>> @register_format("lines", suffixes=(".lines",))  # doctest: +SKIP
... class LinesTable(RowsTable):
...     @classmethod
...     def read(cls, path, options): ...
"""


def formats_help() -> str:
    """Every registered format, e.g. ``JSON Lines (.jsonl, .json), CSV (.csv), ...``."""
    return ", ".join(spec.help() for spec in FORMATS.values())


def _by_suffix(path: str) -> FormatSpec | None:
    name = Path(path).name.lower()
    best: tuple[int, FormatSpec] | None = None
    for spec in FORMATS.values():  # the longest suffix wins; on a tie, the latest format
        for s in spec.suffixes:
            if name.endswith(s) and (best is None or len(s) >= best[0]):
                best = (len(s), spec)
    return best[1] if best else None


def detect_format(path: str | os.PathLike, fmt: str | None = None) -> FormatSpec:
    """The format of ``path``: ``fmt`` when given, else by detector, then by suffix."""
    path = str(path)
    if fmt is not None:
        return FORMATS.lookup(fmt, flag=path)
    for spec in reversed(list(FORMATS.values())):
        if spec.claims(path):
            return spec
    p = Path(path)
    if p.is_dir():
        folders = [s.help() for s in FORMATS.values() if s.detect is not None]
        raise DataError(f"{path}: a folder, but not one aflite reads ({'; '.join(folders)})")
    spec = _by_suffix(path)
    if spec is None:
        if not p.exists():
            raise DataError(f"{path}: no such file")
        raise DataError(f"{path}: unknown file type '{p.suffix}' (aflite reads {formats_help()})")
    return spec


def read_table(
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    split: str | None = None,
    image_size: int | None = None,
) -> Table:
    """Read a data set in any registered format (``fmt`` overrides detection).

    ``split`` picks one split of an input that has several (a Hugging Face DatasetDict);
    ``image_size`` resizes a folder of images. Every problem is a one-line DataError.

    >>> t = read_table("train.csv")  # doctest: +SKIP
    >>> t.column("label")[:2], t.where(0)  # doctest: +SKIP
    (['entailment', 'neutral'], 'train.csv:2')
    """
    path = str(path)
    spec = detect_format(path, fmt)
    if split is not None and not spec.splits:
        raise DataError(
            f"{path}: split '{split}' given (--split / split=), but {spec.help()} input has no "
            "splits"
        )
    if not spec.claims(path) and not Path(path).exists():
        raise DataError(f"{path}: no such file")
    try:
        return spec.target.read(path, ReadOptions(split=split, image_size=image_size))
    except PermissionError:
        raise DataError(f"{path}: cannot be read (permission denied)") from None
    except IsADirectoryError:
        raise DataError(f"{path}: a folder, not a {spec.help()} file") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
