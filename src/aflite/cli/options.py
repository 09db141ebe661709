"""The commands' options, generated from the configs (:mod:`aflite.config`), and parsing of
the values the configs do not hold; a bad value is a one-line DataError naming its flag."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from aflite._internal.options import Config, ConfigError, config_fields, deferred_heavy_checks
from aflite.errors import DataError


def parse_fields(value: str | None) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()] if value else []


# --- options generated from a config ------------------------------------------------------------

_PRESET_HELP = (
    "Start from a named set of the filter's options: paper (Algorithm 1 as published: tau "
    "0.75, k 500 rows, no chance stop, uniform parts) or practical (the defaults shown here); "
    "options given explicitly override it."
)
_CONFIG_HELP = (
    "Read options from a TOML file (keys as the options' names, e.g. train_size = 0.2) or from "
    "a run's summary.json, to repeat that run; options given explicitly override it."
)


def _typer_param(
    f: Any, hints: dict[str, Any], default: Any, help_: str, required: bool = False
) -> inspect.Parameter:
    """The typer parameter of config field ``f`` (``required``: on this command)."""
    import typer

    from aflite.config.names import help_text

    meta = f.metadata
    kind = meta["cli_type"]
    annotation = hints[f.name] if kind is None else (kind if default is not None else kind | None)
    if kind is str and default is not None and not isinstance(default, str):
        default = str(default)  # a size shown as it is typed: 0.5
    help_ = help_text(help_)
    if meta["required"] or required:
        default = ...
    own = meta["flag"]
    decls = ([own] if isinstance(own, str) else list(own)) if own else []
    if meta["argument"]:
        info = typer.Argument(default, metavar=meta["metavar"], help=help_)
    elif annotation is bool:
        info = typer.Option(default, help=help_)
    else:
        info = typer.Option(default, *decls, metavar=meta["metavar"], help=help_)
    return inspect.Parameter(
        f.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation
    )


def _explicit(ctx: Any, name: str) -> bool:
    """Whether the user gave option ``name`` (not its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def build_config(cls: type[Config], *layers: dict[str, Any] | None, source: str = "") -> Any:
    """``cls.build(*layers)`` with every bad value named as its command-line flag. A local
    INPUT that is not there fails after the light checks and before the heavy ones (those
    that import torch-backed registries), so either comes at once (a Hugging Face name,
    ``hf:NAME``, is looked up when it is read)."""
    try:
        with deferred_heavy_checks():
            config = cls.build(*layers, source=source)
        given = getattr(config, "input", None)
        if isinstance(given, str) and not given.startswith("hf:") and not os.path.exists(given):
            raise DataError(f"{given}: no such file")
        config.check_heavy()
        return config
    except ConfigError as e:
        raise DataError(e.render(cli=True)) from None


def config_options(
    cls: type[Config],
    *,
    only: tuple[str, ...] | None = None,
    fixed: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
    helps: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
    presets: bool = False,
    config_file: bool = False,
    into: str = "config",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a typer command an option for every field of ``cls`` (or the fields in ``only``),
    with the field's default, metavar and help (``defaults`` / ``helps`` / ``required``
    change a command's own); the command receives the checked config as keyword ``into``.
    Decorators for two configs stack.

    ``fixed`` values are set under the options (the demo's data). With ``presets``,
    ``--preset NAME``; with ``config_file``, ``--config FILE``. Options the user gives
    override the config file, which overrides the preset. Without ``only`` the command gets a
    ``cls``; with it, a dict of the checked values of those fields.
    """
    import typing

    import typer

    hints = typing.get_type_hints(cls)
    fields = [f for f in config_fields(cls) if only is None or f.name in only]
    defaults, helps = defaults or {}, helps or {}
    added = [
        _typer_param(
            f,
            hints,
            defaults.get(f.name, f.metadata["cli_default"]),
            helps.get(f.name, f.metadata["help"]),
            f.name in required,
        )
        for f in fields
        if f.metadata["entries"] is None
    ]
    # a mapping field's keys, each an option of its own: {param: (field, key)}
    entry_of: dict[str, tuple[str, str]] = {}
    for f in fields:
        if f.metadata["entries"] is None:
            continue
        for key, (_default, help_) in f.metadata["entries"]().items():
            param = f"{f.name}__{key}"
            entry_of[param] = (f.name, key)
            added.append(
                inspect.Parameter(
                    param,
                    inspect.Parameter.KEYWORD_ONLY,
                    annotation=str | None,
                    default=typer.Option(
                        None,
                        "--" + key.replace("_", "-"),
                        metavar="VALUE",
                        help=help_,
                        show_default=False,
                    ),
                )
            )
    known = [n for n in cls.names() if n not in {f for f, _ in entry_of.values()}]
    known += [k for _, k in entry_of.values()]
    if config_file and any(p.default.default is ... for p in added):
        raise TypeError("a config file cannot give a required option")
    extra = []
    if presets:
        extra.append(
            inspect.Parameter(
                "preset",
                inspect.Parameter.KEYWORD_ONLY,
                annotation=str | None,
                default=typer.Option(None, metavar="NAME", help=_PRESET_HELP),
            )
        )
    if config_file:
        extra.append(
            inspect.Parameter(
                "config_file",
                inspect.Parameter.KEYWORD_ONLY,
                annotation=str | None,
                default=typer.Option(None, "--config", metavar="FILE", help=_CONFIG_HELP),
            )
        )
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(command)
        # a stacked config decorator's command takes the context too
        takes_ctx = "ctx" in sig.parameters
        own = [p for p in sig.parameters.values() if p.name not in (into, "ctx")]
        clash = [p.name for p in added + extra if p.name in sig.parameters]
        if clash:
            raise TypeError(f"{command.__name__} declares config options itself: {clash}")

        @functools.wraps(command)
        def wrapper(ctx: Any, **kwargs: Any) -> Any:
            given = {p.name: kwargs.pop(p.name) for p in added}
            if takes_ctx:
                kwargs["ctx"] = ctx
            explicit = {k: v for k, v in given.items() if _explicit(ctx, k)}
            for param, (field, key) in entry_of.items():
                given.pop(param)
                if param in explicit:
                    explicit.setdefault(field, {})[key] = explicit.pop(param)
            preset_name = kwargs.pop("preset", None)
            path = kwargs.pop("config_file", None)
            from_file: dict[str, Any] = {}
            if path is not None:
                from aflite.config import read_config_file

                from_file = read_config_file(path, known)
                for field, key in entry_of.values():
                    if key in from_file:
                        from_file.setdefault(field, {})[key] = from_file.pop(key)
                try:  # a bad value in the file is named as the file names it
                    cls.check_fields({k: v for k, v in from_file.items() if k != "preset"})
                except ConfigError as e:
                    raise DataError(f"{path}: {e.render(cli=False)}") from None
                for field in {f for f, _ in entry_of.values()}:
                    if field in explicit and field in from_file:
                        explicit[field] = {**from_file[field], **explicit[field]}
            # the command line's --preset over the file's
            preset_name = from_file.pop("preset", None) if preset_name is None else preset_name
            from_file.pop("preset", None)
            from aflite.config import preset

            layers = [fixed, preset(preset_name, flag="--preset")]
            if only is not None:
                base = {k: v for k, v in given.items() if k not in explicit}
                values = _check_each(cls, base, *layers, from_file, explicit)
                return command(**kwargs, **{into: values})
            if "input" in cls.names() and "input" not in explicit and "input" not in from_file:
                if not (fixed and "input" in fixed):
                    raise DataError(
                        f"Missing argument 'INPUT' (or --config FILE); see {ctx.command_path} "
                        "--help"
                    )
            cmd_defaults = {k: v for k, v in defaults.items() if k not in explicit}
            config = build_config(
                cls, cmd_defaults, *layers, from_file, explicit, source=path or ""
            )
            # what the options read as where the user named none: a note of the options given
            # names the file's and the command line's only
            unset = {k: v for layer in (defaults, *layers) for k, v in (layer or {}).items()}
            return command(**kwargs, **{into: config.unset_as(unset)})

        # typer reads the parameters from the signature and their types from the annotations
        wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[ctx_param]
            + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
            + added
            + extra
        )
        wrapper.__annotations__ = {
            **{k: v for k, v in command.__annotations__.items() if k != into},
            "ctx": typer.Context,
            **{p.name: p.annotation for p in added + extra},
        }
        return wrapper

    return decorate


def _check_each(cls: type[Config], *layers: dict[str, Any] | None) -> dict[str, Any]:
    """Some fields of ``cls``, each checked on its own, bad values named as flags."""
    values: dict[str, Any] = {}
    for layer in layers:
        values.update(layer or {})
    try:
        return cls.check_fields(values)
    except ConfigError as e:
        raise DataError(e.render(cli=True)) from None
