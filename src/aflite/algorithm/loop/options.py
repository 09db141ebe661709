"""The options of one filtering run, declared once: :class:`FilterOptions`, a frozen dataclass
whose fields carry their default, their constraint and their help, checked once when the
object is made (scikit-learn's ``_parameter_constraints``, kept beside each declaration) and
trusted everywhere inside. :func:`aflite.filter` takes one (``options=``) or builds it from
keywords of the same names; the command line's :class:`aflite.config.FilterConfig` is one.

The defaults are Algorithm 1 as published (Le Bras et al. 2020) on block partitions;
:data:`PRESETS` are instances of this one table:

- ``paper``: Algorithm 1 as published: tau 0.75, k = 500 rows a phase, no chance stop,
  independent uniform training parts, logistic regression with m = 64. Its removed sets
  overlap little from seed to seed (Jaccard 0.63 between seeds 0 and 1 on the bundled SNLI
  slice, hypothesis n-grams), and, its fits stopping at a tolerance, its kept set moves with
  the row order and the machine at predictions near zero margin: it is there to reproduce the
  paper, not to publish a set.
- ``practical``: the defaults of ``aflite filter`` and :func:`aflite.filter_dataset`. They
  were chosen on real data (the bundled SNLI slice, hypothesis-only n-grams, 3 classes; its
  binary entailment/contradiction subset; scikit-learn's digits, 10 classes) so that a run
  does real work without going below chance: ``threshold`` 0.6, because the paper's 0.75
  assumes strong (RoBERTa) features and a linear model trained on 10% of a few thousand rows
  scores most rows below it (the run stopped after one phase having removed 1-4%);
  ``slice_size`` 0.05 of the input, small enough that the chance stop fires within one slice
  of where the set becomes unpredictable; ``min_bias`` 0.02, stop once the representation bias
  is within two points of chance, since without it low thresholds keep removing until the kept
  rows are *anti*-correlated with the label, which is a new artifact, not a cleaner set.
  ``model`` ridge, the exact least-squares family (judged by what a probe can still learn
  from the kept rows it did as well as logistic regression or better at every shape
  measured, and kept one set under a shuffle where logistic regression did not; see
  docs/algorithm.md, "Model families") and ``n_partitions`` auto (512 with that family,
  whose partitions are cheap, up to 50,000 rows; fewer above): the same seed keeps the same rows on any machine, and two
  seeds keep most of the same rows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from aflite._internal import checks as c
from aflite._internal.options import Config, ConfigError, deferred_heavy_checks, option
from aflite.algorithm.loop.sizes import resolve_filter_sizes
from aflite.types import STRATEGIES, Balance, Size, Strategy

__all__ = ["FilterOptions", "PRESETS"]

_SIZE = {"coerce": c.to_size, "check": c.size, "cli_type": str, "metavar": "SIZE"}


def _model(value: Any, name: str) -> None:
    """A family's name must be registered (reading the registry imports the plug-in packages
    that add families: checked last, see ``heavy``); a model instance is checked when the
    run sets it up."""
    if value is None or isinstance(value, (bool, int, float)):
        raise ConfigError(name, f"must be a model family's name or a model, got {value!r}")
    if not isinstance(value, str):
        return  # a model object: its family takes it, or refuses it, when the run starts
    from aflite.algorithm.models import check_model_name
    from aflite.errors import DataError

    try:
        check_model_name(value)
    except DataError as e:
        raise c.flagged(name, e) from None


def _slice(value: Any, name: str) -> None:
    if value is not None:  # one slice down to the target: filtering by a given score only
        c.size(value, name)


def _balance(value: Any, name: str) -> None:
    if value not in (None, "classes"):
        from aflite._internal.options import show

        raise ConfigError(name, f"must be none or classes, got {show(value)}")


class _FamiliesHelp(str):
    """The help of ``model``: the registered families, each with its description, read from
    the registry when the help is shown (``str()``), so that importing the options reads no
    registry. ``kind`` marks a help made when shown, as the command line's registry lists."""

    kind = "models"

    def __new__(cls) -> _FamiliesHelp:
        return super().__new__(cls, "Model family the partitions train (the registered ones).")

    def __str__(self) -> str:
        from aflite.algorithm.models import MODELS

        families = "; ".join(
            f"{e.name}: {e.description}" if e.description else e.name for e in MODELS.values()
        )
        return f"Model family the partitions train. {families}; or one added with register_model."


@dataclass(frozen=True, kw_only=True)
class FilterOptions(Config):
    """What a filtering run does (see :func:`aflite.filter` for each option at length), checked
    once when made: ``FilterOptions(threshold=75)`` is a ConfigError naming ``threshold``.
    ``dataclasses.replace`` makes a changed copy, checked again."""

    # a family's name, or a model object (ModelLike: named for type checkers only)
    model: str | Any = option(
        "linear",
        _FamiliesHelp(),
        metavar="NAME",
        check=_model,
        heavy=True,
        cli_type=str,
    )
    target_size: Size = option(0.5, "n: rows to keep (count or fraction).", **_SIZE)
    n_partitions: int | str = option(
        64,
        "m: random partitions per phase (auto: 512 with the exact family ridge, whose "
        "partitions are cheap, up to 50,000 rows, 256 up to 100,000, 128 up to 200,000, "
        "64 above, and fewer where parts hold more rows than d > 512 features; 64 with "
        "logistic regression).",
        metavar="M|auto",
        coerce=c.to_auto_int,
        check=c.positive_int_or_auto,
        cli_type=str,
    )
    train_size: Size = option(0.1, "t: training rows per partition (count or fraction).", **_SIZE)
    slice_size: Size | None = option(
        500,
        "k: rows removed per phase at most (count or fraction).",
        coerce=c.to_size,
        check=_slice,
        cli_type=str,
        metavar="SIZE",
    )
    threshold: float = option(
        0.75,
        "tau: minimum predictability for removal (the paper: 0.75).",
        metavar="TAU",
        coerce=c.to_number,
        check=c.unit,
    )
    min_bias: float | None = option(
        None,
        "Stop when the representation bias is within this margin of chance; 'off' for "
        "Algorithm 1 as published.",
        metavar="MARGIN|off",
        coerce=c.to_margin,
        check=c.margin,
        cli_type=str,
    )
    balance: Balance = option(
        None,
        "none | classes: remove from every class in proportion to its size.",
        metavar="none|classes",
        coerce=c.to_none("none"),
        cli_type=str,
        cli_default="none",
        check=_balance,
    )
    strategy: Strategy = option(
        "slicing",
        "slicing | greedy | sampling | single_shot.",
        metavar="NAME",
        check=c.choice(STRATEGIES),
        cli_type=str,
    )
    partitions: str = option(
        "blocks",
        "blocks: rows dealt into blocks, each classifier trains on whole blocks "
        "(fast); uniform: independent uniform training parts (Algorithm 1's wording).",
        metavar="blocks|uniform",
        check=c.choice(["blocks", "uniform"]),
    )

    def resolve(
        self, n_rows: int, n_classes: int | None, *, strategy: bool = True
    ) -> tuple[int, int, int]:
        """(target size n, train size t, slice size k) as row counts on ``n_rows`` rows of
        ``n_classes`` classes (None for items), checked against them (see
        :func:`aflite.algorithm.loop.sizes.resolve_filter_sizes`); with ``strategy`` a
        greedy run removes one row a phase (a ranking by a given score has no strategy)."""

        n, t, k = resolve_filter_sizes(
            n_rows,
            target_size=self.target_size,
            train_size=self.train_size,
            slice_size=1 if self.slice_size is None else self.slice_size,
            n_classes=n_classes,
        )
        if self.slice_size is None:
            k = n_rows - n
        return n, t, 1 if strategy and self.strategy == "greedy" else k

    def described(self) -> str:
        """These options in a few words, against the nearest of :func:`aflite.filter`'s
        defaults (Algorithm 1 as published) and the presets: what a result's printed line
        says, since the command line and :func:`aflite.filter_dataset` start from another
        set (``PRESETS['practical']``) than :func:`aflite.filter` does."""
        defaults = "Algorithm 1's defaults"
        own = {f.name: f.default for f in dataclasses.fields(FilterOptions)}
        bases = {defaults: own, **{f"PRESETS[{n!r}]": p.as_options() for n, p in PRESETS.items()}}
        mine = self.as_options()
        changes = {
            name: {k: v for k, v in mine.items() if base[k] != v} for name, base in bases.items()
        }
        name = min(changes, key=lambda n: len(changes[n]))  # the first of the nearest
        if name == defaults and not changes[name]:
            return f"{defaults}, not the command line's (PRESETS['practical'])"
        given = ", ".join(f"{k}={v!r}" for k, v in changes[name].items())
        return f"{name} with {given}" if given else name

    def changed_from(self, base: FilterOptions) -> dict[str, Any]:
        """The options whose values differ from ``base``'s (a preset's), by name."""
        mine, theirs = self.as_options(), base.as_options()
        return {k: v for k, v in mine.items() if theirs[k] != v}

    def as_options(self) -> dict[str, Any]:
        """The filtering options alone, by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(FilterOptions)}


def _presets() -> MappingProxyType[str, FilterOptions]:
    with deferred_heavy_checks():  # built-in family names: nothing to look up
        return MappingProxyType(
            {
                "paper": FilterOptions(partitions="uniform"),
                "practical": FilterOptions(
                    threshold=0.6,
                    slice_size=0.05,
                    min_bias=0.02,
                    model="ridge",
                    n_partitions="auto",
                ),
            }
        )


PRESETS = _presets()
