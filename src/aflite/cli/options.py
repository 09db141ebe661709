"""Parsing of option values shared by the commands; a bad value is a one-line DataError."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from aflite.errors import DataError


def features_help() -> str:
    """``--features``: the registered feature kinds."""
    from aflite.features import kinds as _kinds  # noqa: F401  (registers the built-in kinds)
    from aflite.features.registry import features_help as _help

    return _help()


def input_help() -> str:
    """``INPUT``: the registered data formats."""
    from aflite.io import formats_help

    return formats_help() + "."


def format_names() -> list[str]:
    """The registered data formats, for ``--input-format``."""
    from aflite.io import FORMATS

    return list(FORMATS)


def audit_names() -> list[str]:
    """The registered audits, in the order they run."""
    from aflite.audits import AUDITS

    return list(AUDITS)


def evaluator_names() -> list[str]:
    """The compare evaluators that need no argument (the default set)."""
    from aflite.experiments.evaluators import default_evaluators

    return default_evaluators()


def parse_size(value: str, name: str) -> int | float:
    """'5000' -> 5000 rows; '0.3' -> a fraction."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        raise DataError(f"{name}: must be a row count or a fraction, got '{value}'") from None


def parse_min_bias(value: str) -> float | None:
    if value.strip().lower() in ("off", "none"):
        return None
    try:
        return float(value)
    except ValueError:
        raise DataError(
            f"--min-bias: must be a margin such as 0.02, or 'off', got '{value}'"
        ) from None


def parse_balance(value: str) -> str | None:
    if value not in ("none", "classes"):
        raise DataError(f"--balance: must be none or classes, got '{value}'")
    return None if value == "none" else value


def parse_fields(value: str | None) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()] if value else []


# --- the filter's options, declared once for every command that runs the filter --------------


def _filter_option_specs() -> list[tuple[str, Any, Any]]:
    """(parameter, type, typer.Option) for every option of the filter, with the defaults of
    :data:`aflite.defaults.FILTER_DEFAULTS`."""
    import typer

    from aflite.defaults import FILTER_DEFAULTS as D

    return [
        ("group_field", str | None, typer.Option(
            None, help="Rows sharing this field never straddle a split (e.g. premise).")),
        ("id_field", str | None, typer.Option(
            None, help="Field with row ids (finds rows in a precomputed:FILE with ids).")),
        ("features", str, typer.Option("ngrams", help=features_help())),
        ("target_size", str, typer.Option(
            str(D["target_size"]), help="n: rows to keep (count or fraction).")),
        ("n_partitions", int, typer.Option(
            D["n_partitions"], help="m: random partitions per phase.")),
        ("train_size", str, typer.Option(
            str(D["train_size"]), help="t: training rows per partition (count or fraction).")),
        ("slice_size", str, typer.Option(
            str(D["slice_size"]), help="k: rows removed per phase at most (count or fraction).")),
        ("threshold", float, typer.Option(
            D["threshold"], help="tau: minimum predictability for removal (the paper: 0.75).")),
        ("min_bias", str, typer.Option(
            str(D["min_bias"]), help="Stop when the representation bias is within this margin "
            "of chance; 'off' for Algorithm 1 as published.")),
        ("balance", str, typer.Option(
            "none", help="none | classes: remove from every class in proportion to its size.")),
        ("strategy", str, typer.Option(
            D["strategy"], help="slicing | greedy | sampling | single_shot.")),
        ("warmup_fraction", float | None, typer.Option(
            None, help="Train a warm-up model on this fraction; it gives Phi for the rest.")),
        ("warmup_finetune", bool, typer.Option(
            False, help="With a sentence-transformers model: fine-tune the encoder itself in "
            "warm-up.")),
        ("device", str, typer.Option("auto", help="auto | cpu | cuda.")),
        ("cache_dir", str | None, typer.Option(
            None, help="Embedding cache folder (default ~/.cache/aflite).")),
    ]  # fmt: skip


FILTER_OPTION_NAMES = tuple(name for name, _, _ in _filter_option_specs())


def parse_filter_options(raw: dict[str, Any]) -> dict[str, Any]:
    """Command-line values of the filter options as the Python API takes them (sizes as counts
    or fractions, ``min_bias`` None for 'off', the default cache folder); a bad value is a
    one-line DataError naming its flag."""
    from aflite.features.cache import default_cache_dir

    out = dict(raw)
    for key in ("target_size", "train_size", "slice_size"):
        out[key] = parse_size(str(raw[key]), "--" + key.replace("_", "-"))
    out["min_bias"] = parse_min_bias(str(raw["min_bias"]))
    out["balance"] = parse_balance(raw["balance"])
    if out.get("cache_dir") is None:
        out["cache_dir"] = str(default_cache_dir())
    return out


def with_filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the filter's options (:func:`_filter_option_specs`) to a typer command; the command
    receives them parsed, as one dict ``filter_options``."""
    specs = _filter_option_specs()
    sig = inspect.signature(command)
    own = [p for p in sig.parameters.values() if p.name != "filter_options"]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)
        for name, kind, info in specs
    ]
    clash = [p.name for p in added if p.name in sig.parameters]
    if clash:
        raise TypeError(f"{command.__name__} declares filter options itself: {clash}")

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        raw = {p.name: kwargs.pop(p.name) for p in added}
        return command(**kwargs, filter_options=parse_filter_options(raw))

    # typer reads the parameters from the signature and their types from the annotations
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + added
    )
    wrapper.__annotations__ = {
        **{k: v for k, v in command.__annotations__.items() if k != "filter_options"},
        **{p.name: p.annotation for p in added},
    }
    return wrapper
