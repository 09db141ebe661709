"""Audits before and after filtering, measured alike: the sets at one t, and beside the smaller
set a random subset of the larger of the same size (its control), because nearest-neighbour
distances and out-of-sample estimates move with the number of rows alone.

:func:`audit_before_after` runs registered audits on the two sets (``aflite filter --audits``,
``aflite audit --compare``); :func:`bias_with_control` measures the filter's own
representation bias on a control of the kept size (the report, ``aflite experiment compare``);
:func:`measure_filter` is what a filter run's report measures, both in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aflite.algorithm import FilterResult
from aflite.audits.base import AuditResult
from aflite.audits.options import AuditOptions

__all__ = [
    "sized_audits",
    "AuditSet",
    "BeforeAfter",
    "audit_before_after",
    "audit_filtered",
    "random_control",
    "bias_with_control",
    "FilterMeasures",
    "measure_filter",
]


def sized_audits(names: Sequence[str]) -> list[str]:
    """The audits among ``names`` whose figures move with the number of rows alone (declared
    ``sized`` in the audit registry): the ones a random control is run for."""
    from aflite.audits.registry import AUDITS

    return [a for a in names if AUDITS.lookup(a).sized]


@dataclass(frozen=True)
class AuditSet:
    """One set to audit: text fields, labels and, optionally, its representation (row-aligned;
    None: the audits that need one build n-grams of the texts)."""

    texts: dict[str, Sequence[str]]
    labels: np.ndarray
    features: np.ndarray | None = None
    choices: Any = None  # multiple-choice items (aflite.io.choices.Choices), row-aligned

    def subset(self, rows: np.ndarray) -> AuditSet:
        """The rows at ``rows``, in that order."""
        return AuditSet(
            {f: [v[i] for i in rows] for f, v in self.texts.items()},
            np.asarray(self.labels)[rows],
            None if self.features is None else self.features[rows],
            None if self.choices is None else self.choices.subset(rows),
        )

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class BeforeAfter:
    """What :func:`audit_before_after` measured: the results on each set (``after`` empty when
    there was no second set), on the control (empty when none ran), the control's rows of
    the first set, and the t the bias audit used for all of them."""

    before: list[AuditResult]
    after: list[AuditResult] = field(default_factory=list)
    control: list[AuditResult] = field(default_factory=list)
    control_rows: np.ndarray | None = None
    bias_train_size: int | None = None


def audit_before_after(
    before: AuditSet,
    after: AuditSet | None = None,
    *,
    audits: Sequence[str],
    options: AuditOptions | None = None,
    control: bool = True,
    before_tag: str = "before",
    after_tag: str = "kept",
    progress: Callable[[str], None] | None = None,
    **kwargs: Any,
) -> BeforeAfter:
    """Run ``audits`` on ``before`` and on ``after`` at one t, and with ``control`` the
    :func:`sized_audits` among them on a random subset of ``before`` the size of ``after``
    (when ``after`` is the smaller set).

    ``options`` (an :class:`~aflite.audits.AuditOptions`, or keywords of the same names) go
    to :func:`aflite.audits.run_audits` for every set. Its ``bias_train_size`` is t (a count,
    or a fraction of ``before``), by default resolved on the sizes of the sets
    (:func:`aflite.audits.baselines.bias_train_rows`); ``save_counts`` saves the identity
    counts of ``before``.
    """
    from aflite.audits.baselines import bias_train_rows
    from aflite.audits.run import run_audits

    opts = AuditOptions.of(options, **kwargs)
    audits = list(audits)
    sizes = [len(before)] + ([len(after)] if after is not None else [])
    t = opts.bias_train_size
    if "bias" in audits and (t is None or not isinstance(t, int)):
        t = bias_train_rows(sizes, t)
    # one t for every set; the counts of the first set only
    first_opts = AuditOptions.of(opts, bias_train_size=t)
    rest_opts = AuditOptions.of(first_opts, save_counts=None)

    # which sets are audited, decided before any audit runs: with a second, smaller set, a
    # control of its size for the sized audits among them
    sized = sized_audits(audits) if control and after is not None else []
    rows = None
    if sized and after is not None and len(after) < len(before):
        rows = random_control(len(before), len(after), seed=opts.seed)
    drawn = None if rows is None else before.subset(rows)

    def run(data: AuditSet, tag: str, chosen: list[str], o: AuditOptions) -> list[AuditResult]:
        return run_audits(
            data.texts,
            data.labels,
            options=o,
            audits=chosen,
            features=data.features,
            tag=tag,
            choices=data.choices,
            progress=progress,
        )

    if after is None:
        return BeforeAfter(run(before, before_tag, audits, first_opts), bias_train_size=t)
    first = run(before, before_tag, audits, first_opts)
    second = run(after, after_tag, audits, rest_opts)
    if rows is None or drawn is None:
        return BeforeAfter(first, second, bias_train_size=t)
    tag = f"random subset of {before_tag}, {len(rows)} rows"
    return BeforeAfter(first, second, run(drawn, tag, sized, rest_opts), rows, t)


def audit_filtered(
    data: Any, rest: np.ndarray, kept: np.ndarray, *, audits: Sequence[str], seed: int = 0
) -> BeforeAfter:
    """``audits`` on the rows a filter run filtered (``rest`` of ``data``, an
    :class:`~aflite.io.labelled.LabelledData` read with text fields) and on those it kept, at
    one t, for ``aflite filter --audits`` and ``filter_dataset(audits=...)`` alike. No control:
    the report measures one on Phi."""

    def of(rows: np.ndarray) -> AuditSet:
        items = None if data.choices is None else data.choices.subset(rows)
        return AuditSet(
            {f: [v[i] for i in rows] for f, v in data.texts.items()},
            data.labels[rows],
            choices=items,
        )

    return audit_before_after(of(rest), of(kept), audits=audits, control=False, seed=seed)


def random_control(n: int, size: int, *, seed: int = 0) -> np.ndarray:
    """Sorted positions of a random subset of ``size`` of ``n`` rows: the control a smaller
    (filtered) set is compared with, since distances and estimates move with size alone."""
    # a generator of its own, so the control does not shift the report's other draws
    rng = np.random.default_rng([seed, 0x5EED])
    return np.sort(rng.choice(n, size, replace=False))


def _family(name: Any) -> str:
    """A family usable by name for the control (results saved before the family was
    recorded, and families that need an instance, measure with the default, linear)."""
    from aflite.algorithm.models import MODELS

    if isinstance(name, str) and name in MODELS and not MODELS.lookup(name).needs_instance:
        return name
    return "linear"


def bias_with_control(
    x: np.ndarray,
    labels: np.ndarray,
    result: FilterResult,
    control: np.ndarray | None = None,
    *,
    groups: np.ndarray | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The representation bias before, of the kept rows and of a random subset of the kept
    size (``control``, rows of ``x``; drawn with :func:`random_control` when None), scored
    like the kept rows: the same t (a count), number of partitions, model family and
    partition design."""
    from aflite.algorithm import predictability_scores

    if control is None:
        control = random_control(len(labels), len(result.kept), seed=seed)

    t = int(result.params["train_size"])
    out: dict[str, Any] = {
        "train_size": t,
        "size": int(len(control)),
        "before": result.initial_bias,
        "kept": result.final_bias,
        "random": None,
    }
    if t >= len(control):
        out["note"] = f"t = {t} leaves none of the {len(control)} rows held out"
        return out
    ps = predictability_scores(
        np.ascontiguousarray(x[control], dtype=np.float32),
        labels[control],
        n_partitions=int(result.params["n_partitions"]),
        train_size=t,
        groups=None if groups is None else groups[control],
        seed=seed,
        device=str(result.params.get("device", "auto")),
        copy=False,  # a fresh subset: standardised where it is, not copied again
        model=_family(result.params.get("model_family")),
        partitions=str(result.params.get("partitions", "blocks")),
    )
    out["random"] = ps.representation_bias
    return out


@dataclass(frozen=True)
class FilterMeasures:
    """What :func:`measure_filter` measured on a filter run: the rows of a random subset of
    the kept size among those filtered (``control``) with the representation bias of the kept
    rows beside it (``bias``, :func:`bias_with_control`), both None when no row was removed;
    and the registered audits on the rows filtered and on the kept ones (``audits``, None
    when none ran)."""

    control: np.ndarray | None = None
    bias: dict[str, Any] | None = None
    audits: BeforeAfter | None = None


def measure_filter(
    x: np.ndarray,
    labels: np.ndarray,
    result: FilterResult,
    *,
    groups: np.ndarray | None = None,
    audited: AuditSet | None = None,
    audits: Sequence[str] = (),
    seed: int = 0,
) -> FilterMeasures:
    """A filter run's measures beside its own figures (the report's): the kept rows' bias
    beside a random control of their size (``x``, ``labels`` and ``groups``: the rows
    filtered, as the filter saw them), and ``audits`` on ``audited`` (the rows filtered, as
    the audits read them) and on its kept rows, at one t, without a control of their own."""
    control = bias = None
    if len(result.removed):
        control = random_control(len(labels), len(result.kept), seed=seed)
        bias = bias_with_control(x, labels, result, control, groups=groups, seed=seed)
    measured = None
    if audits and audited is not None:
        kept = audited.subset(np.asarray(result.kept, dtype=np.int64))
        measured = audit_before_after(audited, kept, audits=audits, control=False, seed=seed)
    return FilterMeasures(control, bias, measured)
