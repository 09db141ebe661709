"""Reading labelled data sets and writing row subsets back in the same format, untouched.

Formats: JSON Lines, CSV, TSV, Parquet, and Hugging Face ``datasets`` (a ``save_to_disk``
folder, or ``hf:NAME[:CONFIG]:SPLIT`` from the local cache). Every error names the file, the
row (1-based line for text formats) and the field.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite._internal.atomic import atomic_path
from aflite.errors import DataError  # re-exported: aflite.io.tables.DataError

__all__ = ["DataError", "Table", "read_table", "FORMATS"]

FORMATS = ("jsonl", "csv", "tsv", "parquet", "hf")
_SUFFIX = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


class Table:
    """Rows of a data set with their source format, addressed by 0-based position."""

    def __init__(
        self,
        path: str,
        fmt: str,
        rows: list[dict[str, Any]] | None = None,
        line_numbers: list[int] | None = None,
        arrow: Any = None,
        hf: Any = None,
        fieldnames: list[str] | None = None,
    ) -> None:
        self.path = path
        self.format = fmt
        self._rows = rows
        self._lines = line_numbers
        self._arrow = arrow
        self._hf = hf
        self.fieldnames = fieldnames or []

    def __len__(self) -> int:
        if self._rows is not None:
            return len(self._rows)
        if self._arrow is not None:
            return self._arrow.num_rows
        return len(self._hf)

    def where(self, i: int) -> str:
        """'file:line N' for text formats, 'file: row N' otherwise (1-based)."""
        if self._lines is not None:
            return f"{self.path}:{self._lines[i]}"
        return f"{self.path}: row {i + 1}"

    @property
    def columns(self) -> list[str]:
        return list(self.fieldnames)

    def column(self, name: str) -> list[Any]:
        """All values of one field; a missing field or a null value is a DataError."""
        if self._rows is not None:
            out = []
            for i, row in enumerate(self._rows):
                if name not in row:
                    raise DataError(f"{self.where(i)}: field '{name}' is missing")
                out.append(row[name])
        else:
            if name not in self.fieldnames:
                raise DataError(
                    f"{self.path}: no field '{name}' (fields: {', '.join(self.fieldnames)})"
                )
            out = (
                self._arrow.column(name).to_pylist()
                if self._arrow is not None
                else list(self._hf[name])
            )
        for i, v in enumerate(out):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                raise DataError(f"{self.where(i)}: field '{name}' is empty")
        return out

    def text_column(self, name: str) -> list[str]:
        values = self.column(name)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise DataError(f"{self.where(i)}: field '{name}' is not text ({v!r})")
            if not v.strip():
                raise DataError(f"{self.where(i)}: field '{name}' is empty")
        return values

    def fingerprint(self) -> str:
        """Content hash of the input, for caches and the run summary (computed once)."""
        if getattr(self, "_fingerprint", None) is None:
            self._fingerprint = self._hash()
        return self._fingerprint

    def _hash(self) -> str:
        h = hashlib.sha256()
        p = Path(self.path)
        if p.is_file():
            with p.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        elif self._hf is not None:
            h.update(str(getattr(self._hf, "_fingerprint", self.path)).encode())
        else:
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    h.update(f.name.encode())
                    h.update(f.read_bytes())
        return h.hexdigest()[:16]

    def output_name(self, stem: str) -> str:
        ext = {"jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv", "parquet": ".parquet", "hf": ""}
        return stem + ext[self.format]

    def write_subset(
        self,
        target: str | os.PathLike,
        indices: Sequence[int] | np.ndarray,
        extra: dict[str, Sequence[Any]] | None = None,
    ) -> Path:
        """Write the rows at ``indices`` (in that order), untouched, plus ``extra`` columns.

        The file appears only when complete (written to a temporary name, then renamed).
        """
        idx = np.asarray(indices, dtype=np.int64)
        extra = {k: list(v) for k, v in (extra or {}).items()}
        target = Path(target)
        if self.format == "jsonl":
            with atomic_path(target) as tmp, tmp.open("w", encoding="utf-8") as fh:
                for j, i in enumerate(idx):
                    row = dict(self._rows[i])
                    for k, v in extra.items():
                        row[k] = _py(v[j])
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        elif self.format in ("csv", "tsv"):
            delim = "," if self.format == "csv" else "\t"
            names = self.fieldnames + [k for k in extra if k not in self.fieldnames]
            with atomic_path(target) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
                w = csv.DictWriter(fh, fieldnames=names, delimiter=delim)
                w.writeheader()
                for j, i in enumerate(idx):
                    row = dict(self._rows[i])
                    for k, v in extra.items():
                        row[k] = _py(v[j])
                    w.writerow(row)
        elif self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            sub = self._arrow.take(pa.array(idx, type=pa.int64()))
            for k, v in extra.items():
                sub = sub.append_column(k, pa.array([_py(x) for x in v]))
            with atomic_path(target) as tmp:
                pq.write_table(sub, tmp)
        else:
            sub = self._hf.select(idx.tolist())
            for k, v in extra.items():
                sub = sub.add_column(k, [_py(x) for x in v])
            tmpdir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
            try:
                sub.save_to_disk(str(tmpdir / "data"))
                if target.exists():
                    shutil.rmtree(target)
                os.replace(tmpdir / "data", target)
            finally:
                shutil.rmtree(tmpdir, ignore_errors=True)
        return target


def _py(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and np.isnan(v):
        return None
    return v


def _detect(path: str) -> str:
    if path.startswith("hf:"):
        return "hf"
    p = Path(path)
    if p.is_dir():
        if (p / "dataset_info.json").exists() or (p / "state.json").exists():
            return "hf"
        raise DataError(f"{path}: a folder but not a Hugging Face dataset saved with save_to_disk")
    fmt = _SUFFIX.get(p.suffix.lower())
    if fmt is None:
        raise DataError(
            f"{path}: unknown file type '{p.suffix}' (use .jsonl, .csv, .tsv, .parquet, "
            "or a Hugging Face dataset folder)"
        )
    return fmt


def read_table(path: str | os.PathLike, fmt: str | None = None) -> Table:
    """Read a data set. ``fmt`` overrides detection by suffix."""
    path = str(path)
    fmt = fmt or _detect(path)
    if fmt not in FORMATS:
        raise DataError(f"{path}: unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if fmt != "hf" and not Path(path).is_file():
        raise DataError(f"{path}: no such file")
    try:
        if fmt == "jsonl":
            return _read_jsonl(path)
        if fmt in ("csv", "tsv"):
            return _read_delimited(path, "," if fmt == "csv" else "\t", fmt)
        if fmt == "parquet":
            return _read_parquet(path)
        return _read_hf(path)
    except PermissionError:
        raise DataError(f"{path}: cannot be read (permission denied)") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _read_jsonl(path: str) -> Table:
    rows, lines, names = [], [], {}
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line, object_pairs_hook=_unique_keys)
            except json.JSONDecodeError as e:
                raise DataError(
                    f"{path}:{lineno}: malformed JSON ({e.msg}, column {e.colno})"
                ) from None
            except _DuplicateKey as e:
                raise DataError(f"{path}:{lineno}: field '{e.args[0]}' appears twice") from None
            if not isinstance(obj, dict):
                raise DataError(
                    f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}"
                )
            rows.append(obj)
            lines.append(lineno)
            names.update(dict.fromkeys(obj))
    if not rows:
        raise DataError(f"{path}: no rows")
    return Table(path, "jsonl", rows=rows, line_numbers=lines, fieldnames=list(names))


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return obj


def _read_delimited(path: str, delim: str, fmt: str) -> Table:
    rows, lines = [], []
    # a BOM is not part of the first field's name; fields may be longer than csv's default
    with open(path, newline="", encoding="utf-8-sig") as fh, _no_field_limit():
        reader = csv.DictReader(fh, delimiter=delim)
        try:
            if not reader.fieldnames:
                raise DataError(f"{path}: no header row")
            _check_header(f"{path}:1", reader.fieldnames)
            for row in reader:
                if None in row:
                    raise DataError(f"{path}:{reader.line_num}: more values than header fields")
                rows.append(row)
                lines.append(reader.line_num)
        except csv.Error as e:
            raise DataError(f"{path}:{reader.line_num}: malformed {fmt.upper()} ({e})") from None
        names = list(reader.fieldnames)
    if not rows:
        raise DataError(f"{path}: no rows")
    # DictReader fills short rows with None: report them as missing fields
    for i, row in enumerate(rows):
        for k in names:
            if row.get(k) is None:
                del row[k]
        rows[i] = row
    return Table(path, fmt, rows=rows, line_numbers=lines, fieldnames=names)


@contextlib.contextmanager
def _no_field_limit() -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _check_header(where: str, names: Sequence[str]) -> None:
    """Every field named once (a csv reader would silently keep only the last of two)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(f"{where}: field '{name}' appears twice in the header")
        seen.add(name)


def _read_parquet(path: str) -> Table:
    import pyarrow.parquet as pq

    try:
        tbl = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for corrupt files
        raise DataError(f"{path}: not a readable Parquet file ({type(e).__name__})") from None
    if tbl.num_rows == 0:
        raise DataError(f"{path}: no rows")
    _check_header(path, tbl.column_names)
    return Table(path, "parquet", arrow=tbl, fieldnames=tbl.column_names)


def _read_hf(path: str) -> Table:
    try:
        import datasets
    except ImportError:
        raise DataError("Hugging Face datasets input needs: pip install 'aflite[hf]'") from None
    if path.startswith("hf:"):
        parts = path[3:].split(":")
        if len(parts) not in (2, 3):
            raise DataError(f"{path}: use hf:NAME:SPLIT or hf:NAME:CONFIG:SPLIT")
        name, split = parts[0], parts[-1]
        config = parts[1] if len(parts) == 3 else None
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        try:
            ds = datasets.load_dataset(name, config, split=split)
        except Exception as e:
            raise DataError(
                f"{path}: not in the local Hugging Face cache ({type(e).__name__})"
            ) from None
    else:
        try:
            ds = datasets.load_from_disk(path)
        except Exception as e:
            raise DataError(
                f"{path}: not a dataset saved with save_to_disk ({type(e).__name__})"
            ) from None
        if isinstance(ds, datasets.DatasetDict):
            raise DataError(f"{path}: a DatasetDict; point at one split's folder ({', '.join(ds)})")
    if len(ds) == 0:
        raise DataError(f"{path}: no rows")
    return Table(path, "hf", hf=ds, fieldnames=list(ds.column_names))
