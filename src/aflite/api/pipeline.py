"""The one filter pipeline: the rows read and checked, a reviewer's decisions, the sizes,
Phi, and the filter, for :func:`aflite.filter_dataset` and for ``aflite filter``'s job alike.

Each door checks its own arguments (:class:`~aflite.config.FilterConfig` for a job, the
keywords for the API) and hands the run over as one :class:`FilterRun`; the steps are
:func:`read_rows` then :func:`plan_rows` (together :func:`prepare`), :func:`represent` and
:func:`filter_rows`. A job adds only the output folder, the checkpoint, the outputs and the
report around them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from aflite._internal.options import ConfigError, flag
from aflite.algorithm import FilterOptions
from aflite.config.fields import DataFields
from aflite.errors import DataError
from aflite.features.build import FeatureSpec, parse_feature_spec
from aflite.io.decisions import Decisions, resolve_decisions, split_warmup
from aflite.io.label_check import check_dropped_labels
from aflite.io.labelled import LabelledData, read_labelled

__all__ = [
    "FilterPlan",
    "FilterRun",
    "filter_rows",
    "prepare",
    "ray_encoder",
    "read_rows",
    "represent",
]


@dataclass(frozen=True)
class FilterRun:
    """One filtering run as a door hands it over, every value checked by that door: the
    rows (``data``: a path, a table or data in memory) and how to read them, a reviewer's
    decisions, the representation (a feature spec or a given matrix), the filter's
    ``options`` and where it runs.

    ``cli``: the command line's run, whose messages name options as flags and which filters
    the labels as text, as its summaries count them (the API filters them as given: kept
    apart so that neither door's numbers move)."""

    data: Any
    fields: DataFields
    options: FilterOptions
    features: Any = "ngrams"
    id: str | None = None
    group: str | None = None
    split: str | None = None
    input_format: str | None = None
    choice_context: str = "joint"
    drop_labels: tuple[str, ...] = ()
    keep_ids: Any = None
    drop_ids: Any = None
    warmup_fraction: float | None = None
    warmup_finetune: bool = False
    by: str | None = None
    seed: int = 0
    check_seed: int | None = None  # a second seed whose removed set is compared
    device: str = "auto"
    embed_device: str | None = None  # where Phi is built, if not on ``device``
    threads: int | None = None
    cache_dir: str | None = None
    backend: str | None = None
    ray_address: str | None = None
    card_fields: tuple[tuple[str, str], ...] = ()  # the data set card's fields given
    audits: tuple[str, ...] = ()  # before-and-after audits, which read the text fields
    cli: bool = False

    @classmethod
    def of_config(cls, config: Any) -> FilterRun:
        """The run a :class:`~aflite.config.FilterConfig` describes: its own fields by the
        same names (the config is the input's fields and the filter's options too)."""
        from aflite.features.cache import default_cache_dir

        own = {f.name for f in dataclasses.fields(cls)} - {"data", "fields", "options", "cli"}
        given = {name: getattr(config, name) for name in own if hasattr(config, name)}
        given["cache_dir"] = config.cache_dir or str(default_cache_dir())
        return cls(data=config.input, fields=config, options=config, cli=True, **given)

    def error(self, name: str, why: str) -> DataError:
        """A bad size or option for this data, naming the option as this door does."""
        if self.cli:
            return DataError(ConfigError(name, why).render(cli=True))
        return ConfigError(name, why)

    def name(self, option: str) -> str:
        return flag(option) if self.cli else option

    def read_arguments(self) -> dict[str, Any]:
        """How :func:`aflite.io.labelled.read_labelled` reads the rows (of ``data``)."""
        spec = self.spec
        return self.fields.read_arguments() | {
            "id": self.id,
            "group": self.group,
            "split": self.split,
            "input_format": self.input_format,
            "need_text": spec is not None and spec.needs_text,
            "drop_labels": self.drop_labels,
            "images_for": spec.kind if spec is not None and spec.entry.needs_images else None,
            "keywords": not self.cli,
        }

    @cached_property
    def spec(self) -> FeatureSpec | None:
        """The feature spec, or None for a given matrix."""
        return parse_feature_spec(self.features) if isinstance(self.features, str) else None

    @cached_property
    def features_device(self) -> str | None:
        """Where Phi is built from the feature spec, decided once for the run (its card says
        where it was): ``embed_device``, else ``device`` resolved (``auto``: CUDA where
        there is one); None for a given matrix."""
        if self.spec is None:
            return None
        if self.embed_device:
            return self.embed_device
        from aflite._internal.device import resolve_device

        return str(resolve_device(self.device))


@dataclass
class FilterPlan:
    """What a run will filter, all checked before Phi is built: the rows read (``data``),
    those a warm-up model trains on (``warm_rows``), the rows to filter (``rest``), the
    target size as rows and a reviewer's ``decisions`` (masks over all input rows)."""

    data: LabelledData
    warm_rows: np.ndarray
    rest: np.ndarray
    target: int
    decisions: Decisions | None = None

    @property
    def dropped(self) -> np.ndarray:
        """Input rows removed by review before filtering."""
        if self.decisions is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.decisions.dropped)

    @property
    def protected(self) -> np.ndarray | None:
        """Mask over ``rest``: rows the filter must not remove."""
        if self.decisions is None or not self.decisions.protected.any():
            return None
        return self.decisions.protected[self.rest]


def prepare(
    run: FilterRun, note: Callable[[str], None], *, data: LabelledData | None = None
) -> FilterPlan:
    """Read and check the rows (unless ``data`` holds them, read by :func:`read_rows`), split
    off the warm-up rows and a reviewer's dropped rows, and check every size against the rows
    left (a one-line error naming the option); nothing is computed yet. ``note`` gets the line
    naming classes of a few rows beside large ones, if any."""
    from aflite.config.sizes import target_rows

    if data is None:
        how = run.read_arguments()
        data = read_labelled(run.data, **how)
    if data.note is not None:
        note(data.note)
    check_dropped_labels(data, run.drop_labels, option=run.name("drop_labels"))
    if run.audits and not data.texts:
        raise run.error("audits", "the audits read text; name the text fields with {text}")
    where = run.data if isinstance(run.data, (str, os.PathLike)) else data.where
    labels, n_all = data.labels, len(data)
    warmup = run.warmup_fraction
    if warmup is None and run.spec is not None:
        warmup = run.spec.entry.default_warmup_fraction  # a kind learned on warm-up rows
    if warmup is not None:
        warm_rows, rest = split_warmup(n_all, warmup, seed=run.seed, groups=data.groups)
        if len(np.unique(labels[warm_rows])) < 2:
            raise DataError(f"{where}: the warm-up fraction holds fewer than two classes")
    else:
        warm_rows, rest = np.zeros(0, dtype=np.int64), np.arange(n_all)
    decisions = None
    if run.keep_ids is not None or run.drop_ids is not None or data.dropped is not None:
        if run.keep_ids is not None and run.by is not None:
            raise DataError("--keep-ids: protecting rows applies to AFLITE's phases, not to --by")
        decisions = resolve_decisions(
            data.ids,
            keep=run.keep_ids,
            drop=run.drop_ids,
            keep_name=run.name("keep_ids"),
            drop_name=run.name("drop_ids"),
        ).with_dropped_labels(data.dropped, run.drop_labels)
        # dropped rows leave before anything else, warm-up included; a row a reviewer keeps
        # is filtered (and kept), never set aside for a warm-up model
        kept = decisions.protected[warm_rows]
        rest = np.sort(np.r_[rest, warm_rows[kept & ~decisions.dropped[warm_rows]]])
        warm_rows = warm_rows[~decisions.dropped[warm_rows] & ~kept]
        rest = rest[~decisions.dropped[rest]]
    # an item holds every choice: any one item covers them
    n_classes = None if data.choices is not None else len(np.unique(labels[rest]))
    try:
        target = target_rows(run.options, len(rest), n_classes)
    except ConfigError as e:
        raise run.error(e.field, e.why) from None
    if n_classes is not None and n_classes < 2:
        raise DataError(f"{where}: fewer than two classes among the rows to filter")
    return FilterPlan(data, warm_rows, rest, target, decisions)


def read_rows(run: FilterRun) -> LabelledData:
    """Read and check the rows (:func:`aflite.io.labelled.read_labelled`, as every entry point
    does): a missing id field is a column named ``id``, missing text fields (for text
    features) the only text column; every problem is a one-line DataError."""
    return read_labelled(run.data, **run.read_arguments())


def ray_encoder(address: str | None) -> Callable[..., np.ndarray]:
    """An ``encode`` callable for :func:`~aflite.features.build.build_features` that embeds
    with Ray Data (the features package itself knows nothing of Ray)."""
    from aflite import distributed

    def encode(texts, model, *, device, progress):
        return distributed.embed_with_ray(texts, model, address=address)

    return encode


def represent(run: FilterRun, plan: FilterPlan, *, progress: bool = False) -> Any:
    """Phi of the rows to filter (``plan.rest``): built from the feature spec (optionally
    through a warm-up model trained on the warm-up rows) and checked, or the given matrix."""
    data, rest, spec = plan.data, plan.rest, run.spec
    if spec is not None:
        from aflite.features.build import represent_rows

        # kinds that embed text call encode; the others ignore it
        encode = ray_encoder(run.ray_address) if run.backend == "ray" else None
        return represent_rows(
            spec,
            data,
            plan.warm_rows,
            rest,
            named=f"{run.name('features')} {run.features}",
            context=run.choice_context,
            finetune=run.warmup_finetune,
            seed=run.seed,
            device=run.features_device,
            cache_dir=run.cache_dir,
            progress=progress,
            encode=encode,
        )
    x = run.features
    if data.choices is not None:
        from aflite.features.choices import items_array

        x = items_array(x, data.choices, "features")
    elif not isinstance(x, np.ndarray) and hasattr(x, "tocsr"):
        from aflite.algorithm import check_features

        x = check_features(x)  # a scipy.sparse matrix as its rows, or refused by name
    else:
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[0] != len(data):
            raise DataError(f"features: expected an ({len(data)}, d) matrix, got shape {x.shape}")
    # a memory-mapped matrix is read in row chunks: only a selection of its rows is copied
    return x if len(rest) == len(data) else x[rest]


def filter_rows(
    run: FilterRun,
    plan: FilterPlan,
    phi: Any,
    *,
    progress: bool | None = False,
    checkpoint: Callable[[Any], None] | None = None,
    resume: Any = None,
    copy: bool = True,
    score_kept: bool = True,
) -> Any:
    """AFLITE's phases (or one pass by a per-example score, ``run.by``) over Phi of the rows
    to filter, on the run's backend; the result's positions index ``plan.rest``."""
    from aflite.algorithm import adversarial_filter

    data, rest = plan.data, plan.rest
    # the labels as text on the command line; multiple-choice items: the right choice's place
    text = run.cli and data.choices is None
    labels = (data.labels if text else data.label_codes())[rest]
    groups = None if data.groups is None else data.groups[rest]
    where = {"groups": groups, "seed": run.seed, "device": run.device, "threads": run.threads}
    if run.by is not None:
        from aflite.algorithm import FilterOptions
        from aflite.scoring import ByScorer

        # the bias between slices is measured as the predictability scorer's phase: the
        # algorithm's defaults (the options a --by run does not read, NOT_FOR_BY)
        by = {"model": FilterOptions.model, "partitions": FilterOptions.partitions}
        return adversarial_filter(
            phi, labels, options=run.options, ranker=ByScorer(run.by), progress=False,
            **by, **where,
        )  # fmt: skip
    from aflite._internal.backends import make_backend

    # a distributed backend by its registered name, as aflite.filter(backend=...) takes it
    backend = None if run.backend is None else make_backend(run.backend, run.ray_address)
    try:
        return adversarial_filter(
            phi,
            labels,
            options=run.options,
            progress=progress,
            checkpoint=checkpoint,
            resume=resume,
            backend=backend,
            copy=copy,
            protected=plan.protected,
            ids=[data.ids[i] for i in rest],
            score_kept=score_kept,
            check_seed=run.check_seed,
            **where,
        )
    finally:
        if backend is not None:
            backend.close()
