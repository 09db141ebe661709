"""``aflite audit`` as a job: read the input (and the set ``--compare`` names, with the
representation of the run it came from), build Phi where an audit measures with it, run the
audits before and after at one t beside a random control, and write ``--json``. The command
line parses the options, calls :func:`run_audit_job` and prints its tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aflite._internal.progress import progress_bar
from aflite.config import AuditConfig
from aflite.errors import DataError
from aflite.io.labelled import LabelledData

__all__ = ["AuditOutcome", "run_audit_job"]


@dataclass
class AuditOutcome:
    """The audits of the input (``before``), of the set compared (``after``, None without
    ``--compare``) and of a random subset of its size (``control``); the warnings on the set
    compared, and the JSON file written, if any."""

    before: list[Any]
    after: list[Any] | None
    control: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    json_path: str | None = None


def run_audit_job(
    config: AuditConfig,
    *,
    progress: bool = True,
    note: Callable[[str], None] = lambda line: None,
) -> AuditOutcome:
    """Run the audits ``config`` asks for; ``note`` receives the one-line notes (which
    representation the bias figures measure, a t other than the run's) as they arise."""
    from aflite.audits import AUDITS
    from aflite.audits.before_after import AuditSet, audit_before_after, sized_audits
    from aflite.audits.options import bias_train_rows
    from aflite.audits.registry import audits_for
    from aflite.features.build import build_features, parse_feature_spec
    from aflite.features.cache import default_cache_dir
    from aflite.jobs.audit_sources import compare_source, run_train_size

    compare, features, fields = config.compare, config.features, list(config.text)
    # the representation (knn, bias) reads rep_fields: a filter run's own with --compare
    source_note, rep_fields = None, fields
    if compare:
        source = compare_source(compare, features, fields)
        compare, features = source.path, source.features
        source_note, rep_fields = source.note, list(source.fields)
    spec = parse_feature_spec(features or "ngrams")
    items = config.choices
    names = list(config.audits) if config.audits else audits_for(items is not None)
    # only knn and bias measure with the representation: the word audits alone neither read
    # the run's fields nor say anything about its representation
    measures = items is None and any(AUDITS[a].reads_features for a in names)

    def phi_of(inputs: LabelledData) -> Any:
        if not measures:
            return None
        # each set's Phi from its own texts (n-grams: its own vocabulary), as the spec says
        with progress_bar("embedding", enabled=progress) as bar:
            # the filter's embedding cache: an audit of a file the filter read reuses its
            # embeddings, and a second audit its own
            phi, _ = build_features(
                spec,
                {f: inputs.texts[f] for f in rep_fields},
                n_rows=len(inputs.labels),
                ids=inputs.ids,
                fingerprint=inputs.table.fingerprint(),
                progress=bar,
                cache_dir=config.cache_dir or str(default_cache_dir()),
            )
        return phi

    read = _reader(config, items, fields, rep_fields if measures else fields, note)
    sets = [read(config.input, given=True)] + ([read(compare)] if compare else [])
    bias_t = None
    if "bias" in names:
        # before and after are measured at one t, resolved on INPUT
        bias_t = bias_train_rows(
            [len(s.labels) for s in sets], config.bias_train_size, flag="--bias-train-size"
        )
    # the word audits read the fields given, whatever the representation reads
    audit_sets = [
        AuditSet(
            s.texts if items else {f: s.texts[f] for f in fields}, s.labels, phi_of(s), s.choices
        )
        for s in sets
    ]
    if source_note and measures:
        note(source_note)
    run_t = run_train_size(compare) if compare else None
    if run_t is not None and bias_t is not None and run_t != bias_t:
        note(
            f"note: the run scored its rows at t = {run_t} training rows, the bias audit at "
            f"t = {bias_t}; --bias-train-size {run_t} measures the bias at the run's t"
        )
    sizes = [len(s) for s in audit_sets]
    sized = sized_audits(names)
    total = len(names) * len(sets) + (len(sizes) > 1 and sizes[1] < sizes[0]) * len(sized)
    done = [0]
    with progress_bar("audits", enabled=progress) as bar:

        def step(_name: str) -> None:
            done[0] += 1
            bar(done[0], max(total, done[0]))

        measured = audit_before_after(
            audit_sets[0],
            audit_sets[1] if compare else None,
            audits=names,
            options=config,
            before_tag="input" if compare else "",
            after_tag="compare",
            bias_train_size=bias_t,
            progress=step,
        )
    out = AuditOutcome(measured.before, measured.after if compare else None, measured.control)
    if out.after is not None:
        from aflite.reports.warnings import audit_warnings

        # the filter's check of its kept rows, on the set compared
        out.warnings = audit_warnings(
            [r.to_dict() for r in out.after],
            rows="the compare set",
            reference=[r.to_dict() for r in out.before],
        )
    if config.json_out:
        out.json_path = _write_json(config, compare, out)
    return out


def _reader(
    config: AuditConfig,
    items: Any,
    fields: list[str],
    rep_fields: list[str],
    note: Callable[[str], None],
) -> Callable[..., LabelledData]:
    """Reads a set as the audits need it: the word audits' fields and the representation's,
    rows of dropped labels left out (checked against the input only: a filtered set may have
    lost them)."""
    from aflite.io.dropped import without_dropped
    from aflite.io.label_check import check_dropped_labels
    from aflite.io.labelled import read_labelled

    def read(path: str, *, given: bool = False) -> LabelledData:
        if items is not None:
            return read_labelled(path, **config.read_arguments(), pick=False)
        extra = [f for f in rep_fields if f not in fields]
        try:
            data = read_labelled(
                path,
                label=config.label,
                text=fields + extra,
                pick=False,
                drop_labels=config.drop_labels,
            )
        except DataError as e:
            if not extra:
                raise
            raise DataError(
                f"{e}; the run's representation reads {', '.join(rep_fields)} (a --features "
                "other than the run's measures the --text-fields given)"
            ) from None
        if given:
            check_dropped_labels(data, config.drop_labels)
            tiny = data.tiny_classes_note()
            if tiny is not None:
                note(f"note: {tiny}")
        if data.dropped is not None and data.dropped.any():
            n = int(data.dropped.sum())
            note(f"note: {path}: {n} {'row' if n == 1 else 'rows'} left out by --drop-labels")
        return without_dropped(data)

    return read


def _write_json(config: AuditConfig, compare: str | None, out: AuditOutcome) -> str:
    from aflite._internal.atomic import atomic_path

    doc: dict[str, Any] = {"input": config.input, "audits": [r.to_dict() for r in out.before]}
    if out.after is not None:
        doc["compare"] = compare
        doc["compare_audits"] = [r.to_dict() for r in out.after]
    if out.control:
        doc["control_audits"] = [r.to_dict() for r in out.control]
    with atomic_path(config.json_out) as tmp:
        tmp.write_text(json.dumps(doc, indent=2, default=str))
    return str(config.json_out)
