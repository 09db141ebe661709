"""AFLITE on the data a user already holds: a pandas DataFrame, a Hugging Face ``Dataset``,
a list of dicts or a file. The array-level algorithm is :func:`aflite.adversarial_filter`."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aflite._internal.calls import checked_keywords, misspelt, named_arguments
from aflite._internal.checks import refuse_for_items
from aflite._internal.options import ConfigError
from aflite.algorithm.models import asks_for_items
from aflite.api.pipeline import FilterRun, filter_rows, prepare, represent
from aflite.config import preset as config_preset
from aflite.config.fields import data_fields, to_card_fields
from aflite.config.filter import NOT_FOR_ITEMS
from aflite.errors import DataError, LabelWarning
from aflite.io.label_check import drop_names
from aflite.io.labelled import NO_ID, LabelledData, read_labelled

__all__ = [
    "DatasetFilterResult",
    "featurize",
    "filter_dataset",
    "item_features",
    "needs_text",
    "text_features",
]


@dataclass(repr=False)
class DatasetFilterResult:
    """What :func:`filter_dataset` returns.

    ``kept`` and ``removed`` are subsets of the input in its own type (a file's rows as a
    pandas DataFrame); ``scores`` has one row
    per input row (id, label, split, score, removal_score, final_score, phase_removed);
    ``result`` is the algorithm's :class:`~aflite.FilterResult`; ``fields`` says which
    columns were used (and which were picked automatically); ``fingerprint`` is the kept
    set's (the first 12 hex digits of the SHA-256 of its sorted ids), as ``aflite filter``
    prints it; ``card`` the run's data set card (:class:`~aflite.api.card.DatasetCard`), as
    ``aflite filter`` writes it to ``card.md``: ``out.card.save("card.md")``, or
    :meth:`save_to_disk` for a kept ``Dataset``; ``audits``, with ``audits=``, what they
    measured on the rows filtered (``audits.before``) and on the kept rows
    (``audits.after``), at one t, else None.
    """

    kept: Any
    removed: Any
    scores: Any
    result: Any
    fields: dict[str, Any]
    fingerprint: str = ""
    card: Any = None
    audits: Any = None

    def save_to_disk(self, path: str | os.PathLike) -> None:
        """Write the kept rows of a Hugging Face ``Dataset`` with its ``save_to_disk`` and the
        card as the folder's ``README.md``, which the Hub shows as the set's card."""
        if not hasattr(self.kept, "save_to_disk"):
            raise DataError(
                f"save_to_disk: the kept rows are a {type(self.kept).__name__}, not a Hugging "
                "Face Dataset; write them yourself, and the card with out.card.save(PATH)"
            )
        self.kept.save_to_disk(os.fspath(path))
        self.card.save(path)

    def __repr__(self) -> str:
        r = self.result
        return (
            f"DatasetFilterResult(kept={len(r.kept)}, removed={len(r.removed)}, "
            f"bias {r.initial_bias:.3f} -> {r.final_bias:.3f}, stop={r.stop_reason!r}, "
            f"fingerprint={self.fingerprint!r})"
        )


def needs_text(features: Any) -> bool:
    """Whether ``features`` (a spec or a matrix) is computed from text; a bad spec, or a
    model that cannot load here, is a one-line error before any data is read."""
    if not isinstance(features, str):
        return False
    from aflite.features.build import check_feature_source

    return check_feature_source(features).needs_text


@checked_keywords()
def featurize(
    data: Any,
    *,
    text: str | list[str] | None = None,
    features: str = "ngrams",
    label: str | None = None,
    split: str | None = None,
    cache_dir: str | None = None,
    device: str = "cpu",
    seed: int = 0,
) -> np.ndarray:
    """The feature matrix Phi of ``data``'s text field(s): ``"ngrams"`` (TF-IDF uni+bigrams,
    one vocabulary per field), ``"sentence-transformers:MODEL"`` (pairs as [u, v, |u-v|, u*v])
    or any other registered feature kind (see ``aflite filter --help``). ``text`` left out is
    the only text column besides ``label``.

    >>> import aflite
    >>> rows = [{"text": t, "label": i % 2} for i, t in enumerate(["a cat", "a dog"] * 20)]
    >>> aflite.featurize(rows, text="text").shape  # a, cat, dog, a cat, a dog
    (40, 5)
    """
    needs_text(features)  # a bad spec or a missing extra, before the data is read
    data_ = read_labelled(data, label=label, text=text, id=NO_ID, split=split)
    return text_features(data_, features, cache_dir=cache_dir, device=device, seed=seed)


def text_features(data: LabelledData, features: str, **kw: Any) -> np.ndarray:
    """Phi of ``data``'s text fields for the feature spec ``features``."""
    from aflite.features.build import build_features, parse_feature_spec

    spec = parse_feature_spec(features)
    x, _ = build_features(spec, data.texts or {}, n_rows=len(data), **kw)
    return np.asarray(x)


def field_features(
    data: LabelledData, fields: list[str], features: Any, name: str, **kw: Any
) -> np.ndarray:
    """Phi of ``data``'s text ``fields`` (``features``, a feature spec) or a given (N, d)
    matrix, checked (``name``: the keyword that gave it)."""
    if isinstance(features, str):
        if data.from_file:
            kw["fingerprint"] = data.table.fingerprint()
        read = data.texts or {}
        texts = {f: read[f] if f in read else data.table.text_column(f) for f in fields}
        return text_features(replace(data, texts=texts), features, **kw)
    x = np.asarray(features)
    if x.ndim != 2 or x.shape[0] != len(data):
        raise DataError(f"{name}: expected an ({len(data)}, d) matrix, got shape {x.shape}")
    return x


def _filter_option_names() -> list[str]:
    from aflite.algorithm import FilterOptions

    return FilterOptions.names()


@checked_keywords(_filter_option_names)
def filter_dataset(
    data: Any,
    *,
    label: str,
    text: str | list[str] | None = None,
    id: str | None = None,  # noqa: A002 -- the column, named as users name it
    group: str | None = None,
    features: str | np.ndarray = "ngrams",
    split: str | None = None,
    input_format: str | None = None,
    seed: int = 0,
    check_seed: int | None = None,
    cache_dir: str | None = None,
    device: str = "auto",
    threads: int | None = None,
    progress: bool | None = False,
    keep_ids: Any = None,
    drop_ids: Any = None,
    drop_labels: str | int | list[str | int] = (),
    preset: str | None = None,
    choices: str | list[str] | None = None,
    context: str | list[str] | None = None,
    blank: str | None = None,
    answer_format: str | None = None,
    choice_context: str = "joint",
    options: Any = None,
    score_kept: bool = True,
    card_fields: Any = None,
    audits: str | list[str] | None = None,
    **filter_options: Any,
) -> DatasetFilterResult:
    """Filter ``data`` with AFLITE and return the kept and removed rows in its own type.

    ``data`` is a pandas DataFrame, a Hugging Face ``Dataset`` (or ``DatasetDict`` with
    ``split``), a list of dicts or a path. The data is read and checked as ``aflite filter``
    reads a file (:func:`aflite.io.labelled.read_labelled`), with the same errors. ``text``
    defaults to the only text column besides ``label``/``id``/``group``; ``id`` to a column
    named ``id`` (``"none"``: row numbers). ``features`` is a
    feature spec (``"ngrams"``, ``"sentence-transformers:MODEL"``, ...) or a precomputed
    (N, d) matrix. The filter's options are an :class:`aflite.FilterOptions` (``options``),
    or keywords of the same names (``target_size``, ``train_size``, ``threshold``,
    ``min_bias``, ...), or both; they start from the same defaults as ``aflite filter`` (the
    ``practical`` preset), or from ``preset`` (``"paper"``: Algorithm 1 as published; see
    :data:`aflite.PRESETS`); a bad value is a DataError naming the option.
    ``input_format`` reads a path as that format whatever its name; ``threads`` are the
    filter's worker threads (the result does not depend on them). ``keep_ids`` /
    ``drop_ids`` (ids, or a file with one id a line) apply a reviewer's
    decisions: kept ids are never removed, dropped ids are removed before filtering (phase -1,
    no score, ``review`` "drop" in ``scores``); so are the rows of the classes named in
    ``drop_labels`` (labels as text), which a placeholder label such as ``-`` needs: a label
    that looks like a mistake is an error until its rows are fixed or dropped.

    Multiple-choice items: ``choices`` names the field holding each item's list of choices,
    or one field per choice; ``context`` the fields they follow; ``blank`` the mark in the
    context each choice fills; ``label`` is the answer, read as ``answer_format`` (``index0``,
    ``index1``, ``letter``, ``text``; detected when None). Each choice is represented with
    its context (``choice_context="joint"``), apart from it (``"apart"``) or alone
    (``"none"``); a precomputed ``features`` array is (N, K, d), NaN rows for missing
    choices. An item is kept or removed whole; ``fields["items"]`` says how the answers were
    read and the chance level.

    ``card_fields`` (a mapping: ``{"licence": "cc-by-sa-4.0", "citation": "..."}``) go into
    the result's data set card (``card``), as ``aflite filter --card-field`` does.

    ``audits`` (``"pmi"``, ``"pmi,partial"`` or a list, as ``aflite filter --audits``) runs
    those bias audits on the rows filtered and on the kept rows, at one t:
    ``out.audits.before`` and ``out.audits.after``.

    >>> import aflite
    >>> rows = [{"text": ("nobody " if i % 3 == 0 else "") + f"w{i % 7} x{i % 5}",
    ...          "label": int(i % 3 == 0)} for i in range(300)]
    >>> out = aflite.filter_dataset(rows, label="label", target_size=200, seed=0)
    >>> len(out.kept) + len(out.removed)
    300
    """
    given = dict(locals())  # this call's arguments by name, before any other local
    opts = _filter_options(options, preset, filter_options)
    # the command line's checks of the item options, on this call's arguments
    fields = data_fields(given)
    if fields.choices is not None:
        refuse_for_items({"balance": opts.balance}, NOT_FOR_ITEMS)
    elif asks_for_items(opts.model):
        raise DataError(
            f"model='{opts.model}' fits multiple-choice items: name their choices with choices="
        )
    names = _audit_names(audits, items=fields.choices is not None)
    needs_text(features)  # a bad spec or a missing extra, before the data is read
    card = to_card_fields(card_fields, "card_fields")
    # the seeds as the command line checks them, before the data is read or Phi built
    from aflite._internal import checks

    checks.seed(seed, "seed")
    if check_seed is not None:
        checks.seed(check_seed, "check_seed")
        if check_seed == seed:
            raise ConfigError("check_seed", f"is the run's own seed {seed}: name another")
    run = FilterRun(
        data,
        fields,
        opts,
        features=features,
        id=id,
        group=group,
        split=split,
        input_format=input_format,
        choice_context=choice_context,
        drop_labels=tuple(drop_names(drop_labels) or ()),
        keep_ids=keep_ids,
        drop_ids=drop_ids,
        seed=seed,
        check_seed=check_seed,
        device=device,
        # Phi is built on the CPU unless a device is named
        embed_device="cpu" if device == "auto" else None,
        threads=threads,
        cache_dir=cache_dir,
        card_fields=card,
        audits=names,
    )
    plan = prepare(run, note=lambda line: warnings.warn(line, LabelWarning, stacklevel=3))
    result = filter_rows(run, plan, represent(run, plan), progress=progress, score_kept=score_kept)
    from aflite.api.provenance import make_card

    made = make_card(run, plan, result)
    data_, decisions = plan.data, plan.decisions
    audited = None
    if names:
        from aflite.audits.before_after import audit_filtered

        kept_rows = plan.rest[result.kept]  # the result's positions index the rows filtered
        audited = audit_filtered(data_, plan.rest, kept_rows, audits=names, seed=seed)
    if len(plan.rest) != len(data_):  # rows dropped by review or set aside for a warm-up model
        result = result.with_dropped(plan.rest, plan.dropped, len(data_))
    ids = data_.ids
    frame = _scores_frame(result, ids, data_.label_values, plan.warm_rows)
    if decisions is not None:
        review = np.full(len(data_), None, dtype=object)
        review[decisions.protected], review[decisions.dropped] = "keep", "drop"
        frame["review"] = review
    fields_used = data_.fields.as_dict()
    if data_.choices is not None:
        fields_used["items"] = data_.choices.as_dict()
    own = _frame if isinstance(data, (str, os.PathLike)) else (lambda rows: rows)
    return DatasetFilterResult(
        kept=own(data_.subset(result.kept)),
        removed=own(data_.subset(result.removed)),
        scores=frame,
        result=result,
        fields=fields_used,
        fingerprint=result.fingerprint(ids),
        card=made,
        audits=audited,
    )


def _audit_names(audits: Any, *, items: bool) -> tuple[str, ...]:
    """The audits named (as ``aflite filter --audits`` takes them), each registered and of
    the data's kind, checked before the data is read."""
    from aflite.audits.registry import wrong_kind
    from aflite.config import FilterConfig

    if audits is None:
        return ()
    names = FilterConfig.check_fields({"audits": audits})["audits"]
    why = wrong_kind(names, items) if names else None
    if why is not None:
        raise ConfigError("audits", why)
    return tuple(names)


def _frame(rows: Any) -> Any:
    """A file's rows as a DataFrame, as the other inputs' come back in a table type."""
    import pandas as pd

    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))


def item_features(data: LabelledData, features: Any, context: str, **kw: Any) -> np.ndarray:
    """(N, K, d) features of ``data``'s multiple-choice items: from a feature spec (each
    choice seen with its context as ``context`` says), or a given array, checked."""
    from aflite.features.build import parse_feature_spec
    from aflite.features.choices import choice_features

    items = data.choices
    assert items is not None
    if isinstance(features, str):
        device = "cpu" if kw["device"] == "auto" else kw["device"]
        spec = parse_feature_spec(features)
        return choice_features(spec, items, context=context, seed=kw["seed"], device=device)
    from aflite.features.choices import items_array

    return items_array(features, items, "features")


def _filter_options(options: Any, preset: str | None, given: dict[str, Any]) -> Any:
    """The run's :class:`aflite.FilterOptions`: ``options`` (else ``preset``'s, else the
    command line's defaults) with the ``given`` keywords; a misspelt keyword is a TypeError
    that points at the option or argument meant."""
    from aflite.algorithm import PRESETS, FilterOptions

    names = FilterOptions.names()
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise misspelt("filter_dataset", unknown, [*names, *named_arguments(filter_dataset)])
    if options is not None and preset is not None:
        raise TypeError("filter_dataset(): give options= or preset=, not both")
    if preset is not None and not isinstance(preset, str):
        raise TypeError(
            "filter_dataset(): preset= takes a preset's name; an options object goes to options="
        )
    if options is not None and type(options) is not FilterOptions:
        # a command's config holds where its data is and more, which this call takes apart
        raise TypeError(
            f"filter_dataset(): options= takes an aflite.FilterOptions, got "
            f"{type(options).__name__}; run a whole config with aflite.jobs.run_filter_job"
        )
    if preset is not None:
        config_preset(preset)  # an unknown name: a one-line error with a did-you-mean
    base = options if options is not None else PRESETS[preset or "practical"]
    return FilterOptions.of(base, **given)


def _scores_frame(result: Any, ids: list[Any], labels: np.ndarray, warm_rows: np.ndarray) -> Any:
    import pandas as pd

    n = len(labels)
    removal = np.full(n, np.nan)
    final = np.full(n, np.nan)
    phase = pd.array([pd.NA] * n, dtype="Int64")
    split = np.full(n, "kept", dtype=object)
    removal[result.removed] = result.removed_score
    final[result.kept] = result.kept_scores
    phase[result.removed] = result.removed_phase
    phase[result.removed[result.removed_phase < 0]] = pd.NA  # dropped by review
    split[result.removed] = "removed"
    split[warm_rows] = "warmup"  # a feature kind learned on them (the image CNN)
    return pd.DataFrame(
        {
            "id": ids,
            "label": labels,
            "split": split,
            "score": result.scores(),
            "removal_score": removal,
            "final_score": final,
            "phase_removed": phase,
        }
    )
