"""The registry of feature kinds: the ``KIND`` of ``--features KIND[:ARG]``.

A kind is a builder ``build(spec, texts, *, n_rows, ids, fingerprint, cache_dir, device, seed,
progress, encode) -> (matrix, from_cache)`` registered with :func:`register_feature_kind`;
what a job or an experiment does differently for a kind is a property or a hook of its entry
(:class:`FeatureKind`), never a test of its name. The built-in kinds are in
:mod:`aflite.features.kinds`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aflite._internal.registry import Entry, Registry

__all__ = ["FeatureKind", "FEATURE_KINDS", "features_help", "register_feature_kind"]


@dataclass(frozen=True)
class FeatureKind(Entry):
    """A registered kind: its builder (``target``) and what it needs from a job.

    ``check_arg(spec, arg)`` raises a DataError for a bad argument before anything is
    computed; ``check_source(arg)`` one where what the argument names cannot be had on this
    machine (a model found nowhere it could load from), quickly and importing nothing heavy,
    run where this machine computes Phi (not where Ray workers do); ``usage`` is how errors name the kind (``precomputed:FILE``), ``syntax`` how
    ``--help`` shows it. Hooks, each None where the kind has none:

    - ``learn(images, codes, warm_rows, rest, *, seed, device, progress) -> Phi``: Phi is
      learned on a job's warm-up rows (the image CNN), which default to
      ``default_warmup_fraction`` of the rows;
    - ``finetune(spec, texts, codes, warm_rows, *, seed, device) -> encode``: the kind's
      encoder can be fine-tuned on the warm-up rows (``--warmup-finetune``); ``encode(texts)``
      embeds a set's text fields with the fine-tuned encoder;
    - ``fit(spec, texts, seed) -> transformer``: Phi is fitted on a training set (a
      vocabulary) and applied to other sets with ``transformer.transform(texts)``;
    - ``choices(spec, items, *, context, seed, device, progress, encode) -> (N, K, d)``: the
      kind represents each choice of multiple-choice items (:mod:`aflite.features.choices`).

    ``by_id``: rows are matched to Phi by id (a set needs ids; equal texts may differ).
    ``describe(spec) -> dict``: what decides Phi besides the spec's text, for a data set
    card (the n-gram settings a spec leaves out, an encoder's content and library version),
    plain values only; None: the spec says it all.
    """

    needs_text: bool = False
    needs_arg: bool = False
    needs_images: bool = False
    check_arg: Callable[[str, str], None] | None = None
    check_source: Callable[[str], None] | None = None
    usage: str = ""  # type: ignore[assignment]
    syntax: str = ""
    learn: Callable[..., Any] | None = None
    default_warmup_fraction: float | None = None
    finetune: Callable[..., Any] | None = None
    fit: Callable[..., Any] | None = None
    choices: Callable[..., Any] | None = None
    by_id: bool = False
    describe: Callable[[Any], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "usage", self.usage or self.name)
        object.__setattr__(self, "syntax", self.syntax or self.usage)


FEATURE_KINDS: Registry[FeatureKind] = Registry("feature kind", what="features", entry=FeatureKind)
register_feature_kind = FEATURE_KINDS.register
"""Register a builder under a name (``@register_feature_kind("name", needs_text=True)``);
the keywords are the fields of :class:`FeatureKind`, plus ``aliases`` and ``description``."""


def features_help() -> str:
    """The ``--features`` help line: every registered kind's syntax."""
    return " | ".join(k.syntax for k in FEATURE_KINDS.values()) + "."
