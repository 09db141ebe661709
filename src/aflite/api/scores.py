"""Per-example scores on the data a user already holds: :func:`score_dataset`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aflite._internal.calls import checked_keywords, named_arguments
from aflite.api.dataset import field_features, needs_text
from aflite.errors import DataError
from aflite.io.labelled import LabelledData, read_labelled

__all__ = ["DatasetScores", "score_dataset"]


@dataclass(repr=False)
class DatasetScores:
    """What :func:`score_dataset` returns; unpacks as ``scores, correlation``.

    ``scores``: a DataFrame with ``id``, ``label`` (``answer`` for multiple-choice items) and
    one column per score, one row per input row in input order; ``correlation``: the Spearman rank correlation between the
    numeric score columns; ``result``: the array-level
    :class:`~aflite.scoring.ExampleScores` (folds, seconds, options); ``fields``: the
    columns used; ``texts``: the text fields' values (for reports).
    """

    scores: Any
    correlation: Any
    result: Any
    fields: dict[str, Any]
    texts: dict[str, list[str]]

    def __iter__(self) -> Iterator[Any]:
        yield self.scores
        yield self.correlation

    def __repr__(self) -> str:
        cols = [c for c in self.scores.columns if c not in ("id", "label", "answer")]
        return f"DatasetScores(rows={len(self.scores)}, scores={cols})"


def _scorer_option_names() -> list[str]:
    from aflite.scoring.run import scorer_option_names

    return scorer_option_names()


@checked_keywords(_scorer_option_names)
def score_dataset(
    data: Any,
    *,
    label: str,
    text: str | list[str] | None = None,
    id: str | None = None,  # noqa: A002 -- the column, named as users name it
    group: str | None = None,
    features: str | np.ndarray = "ngrams",
    scorers: Sequence[str] | str | None = None,
    partial_text: str | list[str] | None = None,
    partial_features: np.ndarray | None = None,
    dynamics: Any = None,
    probs: Any = None,
    partial_probs: Any = None,
    split: str | None = None,
    seed: int = 0,
    n_folds: int = 5,
    repeats: int = 1,
    cache_dir: str | None = None,
    device: str = "auto",
    choices: str | list[str] | None = None,
    context: str | list[str] | None = None,
    blank: str | None = None,
    answer_format: str | None = None,
    choice_context: str = "joint",
    **options: Any,
) -> DatasetScores:
    """Score every row of ``data`` with per-example difficulty and bias scores, all out of
    sample (see :func:`aflite.scoring.score_examples` for the scorers and ``options``).

    ``data``, ``label``, ``text``, ``id``, ``group``, ``features`` and ``split`` are as in
    :func:`aflite.filter_dataset`. ``partial_text`` names the field(s) of a partial input
    (e.g. ``"hypothesis"``), featurized like ``text``; or pass ``partial_features`` (an
    (N, d') matrix). ``dynamics`` is a folder of training dynamics in allenai/cartography's
    format (or a :class:`~aflite.scoring.TrainingDynamics`), matched to the rows by id,
    used instead of recording them. ``probs`` are out-of-fold class probabilities from your
    own model for ``pvi`` (p_x), ``partial_probs`` a partial-input model's for ``partial`` and
    ``pvi_partial``: a file (JSONL, CSV, Parquet, ...) with the ``id`` column and one column
    per class label or one list column (classes in sorted order), matched by id; or an
    (N, C) array in row order. Returns scores and their Spearman correlation.

    Multiple-choice items: ``choices``, ``context``, ``blank``, ``answer_format`` and
    ``choice_context`` as in :func:`aflite.filter_dataset`; each item is scored whole by the
    scorers for items (:func:`aflite.scoring.item_scorers`: ``predictability``, the share of
    choice-wise models that never trained on it and pick its right choice; ``pvi``, the bits
    the choice-wise model's out-of-fold probability of the right choice gains over the answer
    positions' frequencies), one row per item with ``id``, ``answer`` (as given) and the
    scores; ``fields["items"]`` says how the answers were read and the chance level. A
    scorer that cannot score items is refused before any work.

    >>> import aflite
    >>> rows = [{"text": ("nobody " if i % 3 == 0 else "") + f"w{i % 7} x{i % 5}",
    ...          "label": int(i % 3 == 0)} for i in range(300)]
    >>> scores, corr = aflite.score_dataset(rows, label="label", scorers=["pvi"], device="cpu")
    >>> bool(scores.loc[scores.label == 1, "pvi"].mean() > 1.0)
    True
    """
    given = dict(locals())  # this call's arguments by name, before any other local
    from aflite.config.fields import data_fields
    from aflite.config.score import check_item_inputs
    from aflite.scoring import resolve_scorers, score_examples, spearman
    from aflite.scoring.cartography import dynamics_for
    from aflite.scoring.probs import probabilities_for

    fields = data_fields(given)
    items = fields.choices is not None
    if items:
        check_item_inputs(
            {
                "partial_text": partial_text,
                "partial_features": partial_features,
                "dynamics": dynamics,
                "probs": probs,
                "partial_probs": partial_probs,
            }
        )
    # every option is checked before the (possibly long) featurizing
    names = resolve_scorers(
        scorers,
        has_partial=partial_text is not None
        or partial_features is not None
        or partial_probs is not None,
        items=items,
        n_folds=n_folds,
        repeats=repeats,
        options=options,
        arguments=named_arguments(score_dataset),
    )
    data_ = read_labelled(
        data,
        **fields.read_arguments(),
        id=id,
        group=group,
        split=split,
        need_text=needs_text(features),
    )
    if not items:  # an item holds every choice: any one item covers them
        from aflite.config.sizes import check_scorer_train_size

        check_scorer_train_size(names, options, data_.labels, data_.where)
    if items:
        return _score_items(
            data_,
            features,
            choice_context,
            scorers,
            seed=seed,
            n_folds=n_folds,
            repeats=repeats,
            device=device,
            **options,
        )
    ids, labels, codes = data_.ids, data_.label_values, data_.label_codes()
    fields = data_.fields.as_dict()
    td = dynamics_for(dynamics, ids)
    if partial_probs is not None and (partial_text is not None or partial_features is not None):
        raise DataError("give partial_probs or a partial input (partial_text, partial_features)")
    p_x = probabilities_for(probs, ids, np.unique(codes), "--probs")
    p_partial = probabilities_for(partial_probs, ids, np.unique(codes), "--partial-probs")
    kw = {"cache_dir": cache_dir, "device": "cpu" if device == "auto" else device, "seed": seed}
    x = field_features(data_, fields["text"], features, "features", ids=ids, **kw)
    partial = partial_features
    if partial_text is not None:
        if partial_features is not None:
            raise DataError("give partial_text or partial_features, not both")
        fields["partial"] = [partial_text] if isinstance(partial_text, str) else list(partial_text)
        spec = features if isinstance(features, str) else "ngrams"
        partial = field_features(data_, fields["partial"], spec, "partial_text", ids=ids, **kw)
    elif partial is not None:
        partial = field_features(data_, [], partial, "partial_features")
    groups = None if data_.groups is None else data_.groups.tolist()
    result = score_examples(
        x,
        codes,
        scorers=scorers,
        partial=partial,
        groups=groups,
        n_folds=n_folds,
        repeats=repeats,
        seed=seed,
        device=device,
        dynamics=td,
        probs=p_x,
        partial_probs=p_partial,
        **options,
    )
    frame = result.frame(ids=ids, labels=labels.tolist())
    shown = sorted({f for k in ("text", "partial") for f in fields.get(k, [])})
    texts = {f: data_.table.text_column(f) for f in shown}
    return DatasetScores(
        frame, spearman(frame.drop(columns=["id", "label"])), result, fields, texts
    )


def _score_items(
    data: LabelledData, features: Any, choice_context: str, scorers: Any, **kw: Any
) -> DatasetScores:
    """:func:`score_dataset` on multiple-choice items: one row per item."""
    from aflite.api.dataset import item_features
    from aflite.scoring import score_examples, spearman

    items = data.choices
    assert items is not None
    x = item_features(data, features, choice_context, device=kw["device"], seed=kw["seed"])
    groups = None if data.groups is None else data.groups.tolist()
    result = score_examples(x, items.answers, scorers=scorers, groups=groups, **kw)
    frame = result.frame(ids=data.ids, labels=list(data.label_values))
    frame = frame.rename(columns={"label": "answer"})
    fields = data.fields.as_dict() | {"items": items.as_dict() | {"note": items.note()}}
    texts = dict(data.texts or {})
    return DatasetScores(
        frame, spearman(frame.drop(columns=["id", "answer"])), result, fields, texts
    )
