"""``--config FILE``: a run's options from a TOML file, or from the ``summary.json`` of an
earlier run (its ``options``), so a run can be repeated from its outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from aflite.errors import DataError

__all__ = ["read_config_file"]

# an option under its flag's name (``label-field``), as older runs' summary.json name it
_FLAG_NAMES = {
    "label_field": "label", "text_fields": "text", "id_field": "id", "group_field": "group",
    "choices_field": "choices", "choices_fields": "choices", "context_fields": "context",
    "partial_text_fields": "partial_text",
}  # fmt: skip


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
    from aflite._internal.options import unknown_key

    out: dict[str, Any] = {}
    for key, value in doc.items():
        name = str(key).replace("-", "_")
        name = _FLAG_NAMES.get(name, name) if name not in known else name
        if name in out:  # choices_field and choices_fields, or label and label-field
            raise DataError(f"{path}: '{key}' gives option '{name}' a second time")
        if name not in known and name != "preset":
            raise unknown_key(str(key), [*known, "preset"], path)
        out[name] = value
    return out
