"""``aflite verify``: check a published kept set against its data set card, by re-running the
filter from the card on the input (through the one filter pipeline, as the door that made it
did) or by reading a published kept file, and say in one line whether the kept set's
fingerprint matches and, if not, where the two first part: the card's options changed after
its run, the input, the aflite version or encoder, the options as resolved, or the first
phase whose removed rows differ.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from aflite.algorithm.loop.result import kept_fingerprint
from aflite.api.card import DatasetCard
from aflite.api.pipeline import FilterRun, filter_rows, prepare, read_rows, represent
from aflite.api.provenance import (
    features_description,
    input_parts,
    phase_fingerprints,
    recipe_fingerprint,
    resolved_options,
)
from aflite.api.recipe import cannot_rerun, command_options
from aflite.errors import DataError
from aflite.io.content import content_fingerprint

__all__ = ["BAD", "DIFFERS", "ELSEWHERE", "MATCH", "Verdict", "verify"]

# exit codes: the kept set matches; it differs; a bad card or input (every DataError, as
# every command's); it differs, and was made with another aflite version or encoder
MATCH, DIFFERS, BAD, ELSEWHERE = 0, 1, 2, 3


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found: ``code`` (0 the same kept set, 1 it differs, 3 it differs
    and was made with another aflite version or encoder: :data:`MATCH`, :data:`DIFFERS`,
    :data:`ELSEWHERE`), ``where`` the first difference (None on a match; ``"options"``,
    ``"input"``, ``"resolved"``, ``"phase N"``, ``"kept"``), ``line`` the one line to print
    and ``fingerprint`` the kept set checked (None where nothing was re-run or read)."""

    code: int
    where: str | None
    line: str
    fingerprint: str | None = None

    @property
    def matches(self) -> bool:
        return self.code == MATCH

    def __bool__(self) -> bool:
        return self.matches

    def __str__(self) -> str:
        return self.line


def verify(
    card: str | os.PathLike | DatasetCard,
    data: Any = None,
    *,
    kept: Any = None,
    device: str = "auto",
    cache_dir: str | None = None,
    progress: bool = False,
) -> Verdict:
    """Check a kept set against its data set card (``card.md``, a folder whose
    ``README.md`` is one, or a :class:`DatasetCard`).

    With ``data`` (the input: a path, a DataFrame, a Dataset, a list of dicts), the filter
    runs again from the card's options and its kept set's fingerprint is compared with the
    card's; with ``kept`` (a published kept file or folder, or rows in memory), the kept
    rows' ids are compared instead, without a run (and ``data``, if given too, is checked
    against the card's input fingerprint). Phi is built where the card's run built it when
    this machine has that device (else on the CPU); ``cache_dir`` lets an embedding cache
    serve it. A bad card or input is a one-line DataError.

    >>> import aflite
    >>> verdict = aflite.verify("card.md", "train.jsonl")  # doctest: +SKIP
    >>> verdict.code, verdict.line  # doctest: +SKIP
    (0, 'match: kept set 6f831c8771f4 (300 rows) re-made from card.md on train.jsonl')
    """
    from aflite._internal.checks import device as check_device
    from aflite._internal.checks import optional_text

    check_device(device, "device")  # before any file is read
    optional_text(cache_dir, "cache_dir")
    where = os.fspath(card) if isinstance(card, (str, os.PathLike)) else "card"
    card = card if isinstance(card, DatasetCard) else DatasetCard.read(card)
    if data is None and kept is None:
        raise DataError(
            "verify: give the input to re-run the filter on (INPUT / data=), or a published "
            "kept file (--kept / kept=)"
        )
    p = card.provenance
    recipe = {k: p.get(k) for k in ("made_by", "fields", "options")}
    edited = _edited(p, recipe)
    if edited is not None:
        return edited
    run = _run_of(card, recipe, data, where, device, cache_dir)
    if kept is not None:
        return _check_kept(card, run, kept, data)
    why = cannot_rerun(recipe)
    if why is not None:
        raise DataError(f"{where}: cannot be re-run from the card: {why}; check the published "
                        "kept set with --kept / kept=")  # fmt: skip
    plan = prepare(run, note=lambda line: None)
    differs = _input_differs(p, input_parts(run, plan.data), len(plan.data))
    if differs is not None:
        return Verdict(DIFFERS, "input", f"differs: input: {differs}")
    elsewhere = _environment(card, run)
    result = filter_rows(run, plan, represent(run, plan, progress=progress), progress=progress)
    ids = [plan.data.ids[i] for i in plan.rest]
    got = kept_fingerprint(ids[i] for i in result.kept)
    n = len(result.kept)
    if got == card.kept_fingerprint:
        also = f"; {'; '.join(elsewhere)}" if elsewhere else ""
        return Verdict(
            MATCH, None, f"match: kept set {got} ({n} rows) re-made from {where} on "
            f"{_named(data)}{also}", got,
        )  # fmt: skip
    spot, first = _first_difference(p, result, ids)
    tail = f"kept set {got} ({n} rows) here, {card.kept_fingerprint} in the card"
    if elsewhere:
        return Verdict(ELSEWHERE, spot, f"differs: {elsewhere[0]}; {first}; {tail}", got)
    return Verdict(DIFFERS, spot, f"differs: {first}; {tail}", got)


def _edited(p: dict[str, Any], recipe: dict[str, Any]) -> Verdict | None:
    """A card whose options are not those its run recorded (changed after the run): the
    option whose value its command line gives otherwise, or the recipe's fingerprint."""
    if recipe_fingerprint(recipe) == p.get("recipe_fingerprint"):
        return None
    recorded = (p.get("reproduce") or {}).get("command")
    now = command_options(recipe)
    if recorded and now is not None:
        then = _flag_values(shlex.split(recorded)[3:])
        for flag, value in now:
            was = then.pop(flag, None)
            if was != value:
                return _changed(flag, value, was)
        if then:
            flag, was = next(iter(then.items()))
            return _changed(flag, None, was)
    return Verdict(
        DIFFERS, "options",
        "differs: options: the card's options are not those of its run (their fingerprint "
        f"{recipe_fingerprint(recipe)}, the run's {p.get('recipe_fingerprint')}): the card "
        "was changed after the run",
    )  # fmt: skip


def _changed(flag: str, value: str | None, was: str | None) -> Verdict:
    def shown(v: str | None) -> str:
        return "absent" if v is None else "set" if v == "" else v

    return Verdict(
        DIFFERS, "options",
        f"differs: options: {flag} is {shown(value)} in the card's options but {shown(was)} "
        "in the command line its run recorded: the card was changed after the run",
    )  # fmt: skip


def _flag_values(words: list[str]) -> dict[str, str]:
    """``--flag value`` (or a switch, ``""``) pairs of a command line's words."""
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        if w.startswith("--"):
            nxt = words[i + 1] if i + 1 < len(words) else None
            out[w] = "" if nxt is None or nxt.startswith("--") else nxt
    return out


def _run_of(
    card: DatasetCard, recipe: dict[str, Any], data: Any, where: str, device: str, cache: Any
) -> FilterRun:
    """The card's run on ``data``, as the door that made it ran it."""
    from aflite.algorithm import FilterOptions
    from aflite.config.fields import DataFields
    from aflite.io.ids import NO_ID

    f, o = recipe["fields"], dict(recipe["options"])
    try:
        options = FilterOptions(**{k: o[k] for k in FilterOptions.names() if k in o})
        fields = DataFields(
            label=f["label"], text=tuple(f.get("text") or ()), choices=f.get("choices"),
            context=tuple(f.get("context") or ()), blank=f.get("blank"),
            answer_format=f.get("answer_format"),
        )  # fmt: skip
    except (DataError, TypeError, KeyError) as e:
        raise DataError(f"{where}: the card's options cannot be read ({e})") from None
    built = card.provenance.get("environment", {}).get("features_device")
    return FilterRun(
        data, fields, options,
        features=o.get("features", "ngrams"), id=f.get("id") or NO_ID, group=f.get("group"),
        split=o.get("split"), input_format=o.get("input_format"),
        choice_context=o.get("choice_context") or "joint",
        drop_labels=tuple(o.get("drop_labels") or ()), keep_ids=o.get("keep_ids"),
        drop_ids=o.get("drop_ids"), warmup_fraction=o.get("warmup_fraction"),
        warmup_finetune=bool(o.get("warmup_finetune")), by=o.get("by"), seed=o.get("seed", 0),
        device=device, embed_device=_embed_device(built), cache_dir=cache,
        cli=recipe["made_by"] == "command line",
    )  # fmt: skip


def _embed_device(built: str | None) -> str:
    """Where the card's run built Phi, where this machine has it; else the CPU."""
    if built in (None, "cpu"):
        return "cpu"
    import torch

    return built if built == "cuda" and torch.cuda.is_available() else "cpu"


def _input_differs(p: dict[str, Any], parts: dict[str, str], n_rows: int) -> str | None:
    """How the input differs from the card's: its row count, else its first part that does."""
    card_input = p["input"]
    if n_rows != card_input.get("rows"):
        return f"{n_rows} rows here, {card_input.get('rows')} in the card"
    theirs = card_input.get("parts") or {}
    for key in sorted(set(parts) | set(theirs)):
        if parts.get(key) != theirs.get(key):
            return (
                f"{_part_name(key)} differ from the card's (content fingerprint "
                f"{content_fingerprint(parts)} here, {card_input.get('fingerprint')} in the card)"
            )
    return None


def _part_name(key: str) -> str:
    if key.startswith("text:"):
        return f"the values of field '{key[5:]}'"
    files = {"keep_ids": "the --keep-ids file's ids", "drop_ids": "the --drop-ids file's ids"}
    return files.get(key, f"the {key}")


def _environment(card: DatasetCard, run: FilterRun) -> list[str]:
    """What is not here as it was for the card's run: aflite's version, then what makes the
    features (an encoder's content or library, the n-grams' scikit-learn), then the device
    Phi is built on."""
    from aflite._internal.version import VERSION

    p, out = card.provenance, []
    if card.version != VERSION:
        out.append(f"the card was made with aflite {card.version}, this is aflite {VERSION}")
    theirs, mine = p.get("features") or {}, features_description(run)
    for key in theirs:
        if key not in ("spec", "kind") and theirs[key] != mine.get(key):
            out.append(f"features: {key} is {mine.get(key)} here, {theirs[key]} in the card")
    built = (p.get("environment") or {}).get("features_device")
    if built not in (None, run.embed_device):
        out.append(f"Phi was built on {built} for the card, on {run.embed_device} here")
    return out


def _first_difference(p: dict[str, Any], result: Any, ids: list[Any]) -> tuple[str, str]:
    """Where a re-run first parts from the card: an option resolved otherwise, else the first
    phase whose removed rows differ, else the kept set itself."""
    theirs, mine = p.get("resolved") or {}, resolved_options(result)
    for key, value in theirs.items():
        if key in mine and mine[key] != value:
            return "resolved", f"options: {key} resolved to {mine[key]} here, {value} in the card"
    card_phases = (p.get("result") or {}).get("phases") or []
    here = phase_fingerprints(result, ids)
    for i in range(max(len(card_phases), len(here))):
        a = card_phases[i] if i < len(card_phases) else None
        b = here[i] if i < len(here) else None
        if a is None or b is None:
            which = "this run" if b is None else "the card's run"
            return f"phase {i}", f"phase {i}: {which} stopped before it"
        if (a["removed"], a["removed_fingerprint"]) != (b["removed"], b["removed_fingerprint"]):
            return f"phase {i}", (
                f"phase {i} removed other rows ({b['removed']} rows, fingerprint "
                f"{b['removed_fingerprint']} here; {a['removed']} rows, "
                f"{a['removed_fingerprint']} in the card)"
            )
    return "kept", "the kept rows differ"


def _check_kept(card: DatasetCard, run: FilterRun, kept: Any, data: Any) -> Verdict:
    """A published kept set's ids against the card's fingerprint, nothing re-run (and the
    input, if given, against the card's input fingerprint)."""
    from aflite.io.labelled import read_labelled

    p = card.provenance
    id_field = p["fields"].get("id")
    if id_field is None:
        raise DataError(
            "--kept: the card's run numbered its rows (no id field), so kept rows cannot be "
            "matched to it; re-run the filter on the input instead"
        )
    if data is not None:
        read = read_rows(_with_data(run, data))
        differs = _input_differs(p, input_parts(run, read), len(read))
        if differs is not None:
            return Verdict(DIFFERS, "input", f"differs: input: {differs}")
    rows = read_labelled(kept, label=None, id=id_field, need_text=False, pick=False)
    got = kept_fingerprint(rows.ids)
    want, n = card.kept_fingerprint, p["result"]["rows"]["kept"]
    if got == want:
        return Verdict(MATCH, None, f"match: kept set {got} ({len(rows)} rows) in "
                       f"{_named(kept)}, as the card says", got)  # fmt: skip
    return Verdict(
        DIFFERS, "kept", f"differs: kept: {len(rows)} rows with fingerprint {got} in "
        f"{_named(kept)}; the card's kept set is {n} rows, {want}", got,
    )  # fmt: skip


def _with_data(run: FilterRun, data: Any) -> FilterRun:
    import dataclasses

    return dataclasses.replace(run, data=data)


def _named(data: Any) -> str:
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    return {"DataFrame": "the DataFrame", "Dataset": "the Dataset"}.get(
        type(data).__name__, "the rows given"
    )
