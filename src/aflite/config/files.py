"""``--config FILE``: a run's options from a TOML file, or from the ``summary.json`` of an
earlier run (its ``options``), so a run can be repeated from its outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from aflite.errors import DataError

__all__ = ["current_names", "read_config_file"]


def current_names(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with an option named by its flag (``label_field``, as older runs' summaries
    and checkpoints name it) under its own name (``label``)."""
    from aflite._internal.options import flag_names

    renamed = flag_names()
    return {renamed.get(k, k): v for k, v in options.items()}


def read_config_file(path: str, known: list[str]) -> dict[str, Any]:
    """The options in ``path`` (``.toml``, or a run's ``summary.json``), keys checked against
    ``known`` (``preset`` is known too); an unknown key is a one-line DataError naming it and
    the file, with a did-you-mean. Dashes in keys read as underscores (``train-size``), and an
    option may go by its flag's name (``label-field`` for ``label``)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or e}") from None
    if p.suffix.lower() == ".json":
        try:
            doc = json.loads(raw)
        except ValueError as e:
            raise DataError(f"{path}: not JSON ({e})") from None
        if isinstance(doc, dict) and isinstance(doc.get("options"), dict):
            doc = doc["options"]  # an aflite summary.json: the options of the run it describes
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: not TOML ({e})") from None
    if not isinstance(doc, dict):
        raise DataError(f"{path}: expected a table of options")
    from aflite._internal.options import flag_names, unknown_key

    renamed = {k: v for k, v in flag_names().items() if v in known}
    out: dict[str, Any] = {}
    for key, value in doc.items():
        name = str(key).replace("-", "_")
        name = renamed.get(name, name) if name not in known else name
        if name in out:  # choices_field and choices_fields, or label and label-field
            raise DataError(f"{path}: '{key}' gives option '{name}' a second time")
        if name not in known and name != "preset":
            raise unknown_key(str(key), [*known, *renamed, "preset"], path)
        out[name] = value
    return out
