"""A run's options as files hold them: ``--config FILE`` reads them from a TOML file or from
the ``summary.json`` of an earlier run (its ``options``), so a run can be repeated from its
outputs; a filtering run's key (:class:`RunKey`: the options that decide its result, which a
finished run or a checkpoint must match to be resumed, and the options its ``summary.json``
records, with the fields picked when its input was read), computed once."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aflite._internal.options import config_fields, flag, show
from aflite.errors import DataError

__all__ = [
    "RunKey",
    "current_names",
    "first_difference",
    "job_key",
    "read_config_file",
    "summary_options",
    "with_fields",
]


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


def with_fields(job: Any, data: Any) -> Any:
    """A copy of ``job`` (a :class:`~aflite.config.FilterConfig`) with the fields ``data``
    (a :class:`~aflite.io.labelled.LabelledData`) was read with, those picked filled in."""
    picked = data.fields.picked
    return replace(
        job,
        text=tuple(data.fields.text) if "text" in picked else job.text,
        id=data.fields.id if "id" in picked else job.id,
    )


# options a job's key leaves out at these values, so that checkpoints and summaries written
# before the option existed (or, for partitions, before block partitions) still match
_LEFT_OUT = {
    "model": "linear",
    "partitions": "uniform",
    "split": None,
    "by": None,
    "keep_ids": None,
    "drop_ids": None,
    "choices": None,
    "context": (),
    "blank": None,
    "answer_format": None,
    "choice_context": "joint",
    "drop_labels": (),
}


def job_key(job: Any) -> dict[str, Any]:
    """The options that decide a job's result (a checkpoint is only resumed under the same)."""
    d = {f.name: getattr(job, f.name) for f in config_fields(job) if f.metadata["result"]}
    for k, left_out in _LEFT_OUT.items():
        if d[k] == left_out:
            d.pop(k)
    return json.loads(json.dumps(d, default=str))


def summary_options(job: Any) -> dict[str, Any]:
    """The job key as a run's ``summary.json`` records it: with every left-out value that is
    not the option's own default (``partitions="uniform"``, the paper preset's), so that
    ``--config summary.json`` repeats the run."""
    d = job_key(job)
    for f in config_fields(job):
        if f.name in _LEFT_OUT and f.name not in d and f.default != _LEFT_OUT[f.name]:
            d[f.name] = _LEFT_OUT[f.name]
    return d


def first_difference(key: dict[str, Any], other: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first option on which two job keys differ, with its value in each, or None."""
    for name in [*key, *(k for k in other if k not in key)]:
        here = key.get(name, _LEFT_OUT.get(name))
        there = other.get(name, _LEFT_OUT.get(name))
        if json.dumps(here, default=str) != json.dumps(there, default=str):
            return name, here, there
    return None


@dataclass(frozen=True)
class RunKey:
    """What makes a filtering run the one it is, computed once its input has been read: the
    job with the fields picked then (``job``), the options that decide its result
    (``options``; the input not among them by its path, since ``../wf/pairs.jsonl`` and its
    absolute path are one file, but by its content, ``fingerprint``) and the options its
    ``summary.json`` records (``summary``)."""

    job: Any
    options: dict[str, Any]
    fingerprint: str
    summary: dict[str, Any]

    @classmethod
    def of(cls, job: Any, data: Any) -> RunKey:
        """The key of ``job`` (a :class:`~aflite.config.FilterConfig`) run on ``data`` (the
        :class:`~aflite.io.labelled.LabelledData` it read)."""
        job = with_fields(job, data)
        options = _without_input(job_key(job))
        return cls(job, options, data.table.fingerprint(), summary_options(job))

    @property
    def identity(self) -> dict[str, Any]:
        """The key as a checkpoint's manifest holds it."""
        return {"fingerprint": self.fingerprint, "job": self.options}

    @staticmethod
    def upgrade(stored: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's identity as an earlier version wrote it (the input's path among the
        options), with the options named as now."""
        return stored | {"job": _without_input(current_names(stored.get("job") or {}))}

    def refuse_other(self, finished: dict | None, stored: Any, here: Any) -> None:
        """``--resume`` on another run: a one-line DataError naming what differs, and how to
        resume it or start over instead. ``finished``: the ``summary.json`` of a finished
        run in the folder; else ``stored``, the identity its checkpoint was written under
        (None, a damaged one or this run's: the checkpoint's load says which), beside
        ``here``, the identity this run writes."""
        out = self.job.out_dir
        if finished is not None:
            options = {k: v for k, v in (finished.get("options") or {}).items() if k != "device"}
            found = self._differs(current_names(options), finished.get("input_fingerprint"))
            if found is not None:
                raise DataError(
                    f"{out}: holds a finished run {found[0]}, nothing to resume; pass "
                    "--overwrite instead of --resume to replace it"
                )
            return
        if not isinstance(stored, dict) or stored == here:
            return
        job = stored.get("job")
        found = self._differs(job if isinstance(job, dict) else {}, stored.get("fingerprint"))
        why, same = found or ("of other options", None)
        resume = f"run with {same} to resume it, or " if same else ""
        raise DataError(
            f"{out}: holds the checkpoint of a run {why}; {resume}pass --overwrite instead "
            "of --resume to start over"
        )

    def _differs(self, stored: dict[str, Any], was: Any) -> tuple[str, str | None] | None:
        """What makes a stored run (its options ``stored``, its input's fingerprint ``was``)
        another run than this one, and the option that would make them one: the first option
        that differs, with both values, or the input, by its content; None when it is this
        run."""
        differs = first_difference(self.options, _without_input(stored))
        if differs is not None:
            name, here, there = differs
            return f"with {flag(name)} {_shown(there)}, not {_shown(here)}", (
                f"{flag(name)} {_shown(there)}"
            )
        if was == self.fingerprint:
            return None
        given, now = stored.get("input"), self.job.input
        if given == now:
            return f"of another input ({now} has changed since)", None
        if given is None:
            return f"of another input (not the rows {now} holds)", None
        return f"of another input ({given}; {now} holds other rows)", None


def _without_input(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "input"}


def _shown(value: Any) -> str:
    """A job key's value as the command line takes it."""
    if value is None:
        return "none"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    return show(value).strip("'")
