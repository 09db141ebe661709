"""Hugging Face ``datasets``: a folder written by ``save_to_disk`` (a Dataset, or a
DatasetDict with ``split``), or ``hf:NAME[:CONFIG]:SPLIT`` from the local cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.errors import DataError, MissingExtraError
from aflite.io.base import BaseTable, did_you_mean, plain_value
from aflite.io.registry import ReadOptions, register_format

__all__ = ["HFDatasetTable", "choose_split"]

# files save_to_disk writes: a Dataset's, then a DatasetDict's
_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")


def _is_hf(path: str) -> bool:
    if path.startswith("hf:"):
        return True
    p = Path(path)
    return p.is_dir() and any((p / m).exists() for m in _MARKERS)


def _load_named(path: str, split: str | None) -> Any:
    import datasets

    parts = path[3:].split(":")
    # with --split the name is NAME[:CONFIG]; without, the split is the last part
    n_parts = (1, 2) if split is not None else (2, 3)
    if len(parts) not in n_parts or not all(parts):
        raise DataError(f"{path}: use hf:NAME[:CONFIG] with --split, or hf:NAME[:CONFIG]:SPLIT")
    if split is None:
        split = parts.pop()
    name, config = parts[0], (parts[1] if len(parts) == 2 else None)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    try:
        return datasets.load_dataset(name, config, split=split)
    except Exception as e:
        raise DataError(
            f"{path}: not in the local Hugging Face cache ({type(e).__name__})"
        ) from None


def choose_split(data: Any, split: str | None, where: str) -> Any:
    """The Dataset ``split`` of a DatasetDict, or a single Dataset given no split; a wrong
    or missing split is a one-line DataError naming ``where`` and the splits there are."""
    if not hasattr(data, "select"):  # a DatasetDict
        names = list(data.keys())
        if split is None:
            raise DataError(
                f"{where}: a DatasetDict with splits {', '.join(names)}; choose one "
                "(--split / split=)"
            )
        if split not in data:
            raise DataError(
                f"{where}: no split '{split}' (splits: {', '.join(names)}"
                f"{did_you_mean(split, names)})"
            )
        return data[split]
    if split is not None:
        raise DataError(
            f"{where}: a single Dataset without splits; leave out the split (--split / split=)"
        )
    return data


def _load_folder(path: str, split: str | None) -> Any:
    import datasets

    try:
        ds = datasets.load_from_disk(path)
    except Exception as e:
        raise DataError(
            f"{path}: not a dataset saved with save_to_disk ({type(e).__name__})"
        ) from None
    return choose_split(ds, split, path)


@register_format(
    "hf",
    detect=_is_hf,
    splits=True,
    description="a Hugging Face dataset (a save_to_disk folder, or hf:NAME[:CONFIG]:SPLIT)",
)
class HFDatasetTable(BaseTable):
    """Rows of a ``datasets.Dataset``; subsets are written with ``save_to_disk``."""

    suffix = ""
    readme = True

    def __init__(self, path: str, dataset: Any, split: str | None = None) -> None:
        super().__init__(path, list(dataset.column_names))
        self._ds = dataset
        self.split = split

    @classmethod
    def read(cls, path: str, options: ReadOptions) -> HFDatasetTable:
        try:
            import datasets  # noqa: F401
        except ImportError:
            raise MissingExtraError(
                "Hugging Face datasets input needs: pip install 'aflite[hf]'"
            ) from None
        if path.startswith("hf:"):
            ds = _load_named(path, options.split)
        else:
            ds = _load_folder(path, options.split)
        if len(ds) == 0:
            raise DataError(f"{path}: no rows")
        return cls(path, ds, options.split)

    def __len__(self) -> int:
        return len(self._ds)

    def where(self, i: int) -> str:
        if self.split is not None:
            return f"{self.path} (split {self.split}): row {i + 1}"
        return f"{self.path}: row {i + 1}"

    def values(self, name: str) -> list[Any]:
        """A column; a ``ClassLabel`` column as its class names (values outside its range,
        such as SNLI's -1 for no gold label, stay as they are)."""
        values = list(self._ds[name])
        feature = (getattr(self._ds, "features", None) or {}).get(name)
        names = getattr(feature, "names", None)
        if type(feature).__name__ == "ClassLabel" and names:
            return [names[v] if isinstance(v, int) and 0 <= v < len(names) else v for v in values]
        return values

    def content_hash(self) -> str:
        # datasets keeps a content fingerprint for every Dataset; hashing the Arrow files
        # again would read the whole data set
        fp = str(getattr(self._ds, "_fingerprint", None) or self.path)
        if self.split is not None:
            fp += f"\0{self.split}"
        return hashlib.sha256(fp.encode()).hexdigest()[:16]

    def write_rows(self, target: Path, rows: np.ndarray, extra: dict[str, Sequence[Any]]) -> None:
        sub = self._ds.select(rows.tolist())
        for k, v in extra.items():
            if k in sub.column_names:  # an input column of the same name is replaced
                sub = sub.remove_columns(k)
            sub = sub.add_column(k, [plain_value(x) for x in v])
        # save_to_disk writes a folder: build it beside the target, then swap it in
        tmpdir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            # datasets cannot load back an empty subset saved in the default zero shards
            sub.save_to_disk(str(tmpdir / "data"), num_shards=1 if len(sub) == 0 else None)
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmpdir / "data", target)
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
