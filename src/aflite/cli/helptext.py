"""Help screens without type tags: no ``<str>`` or ``<bool>`` beside options and arguments,
flags as ``--x / --no-x`` pairs without a ``[default: no-x]``, and a value name (the option's
metavar, or TEXT / INTEGER / FLOAT) where an option takes one."""

from __future__ import annotations

import functools
from typing import Any

from typer.core import TyperArgument, TyperGroup

__all__ = ["AfliteGroup"]

_VALUE_NAMES = {str: "TEXT", int: "INTEGER", float: "FLOAT"}


def _no_type(*args: Any, **kwargs: Any) -> None:
    return None


def _usage_pieces(p: Any, ctx: Any) -> list[str]:
    """An argument on the usage line as click writes it, ``INPUT`` or ``[INPUT]`` when it
    may be left out (typer wraps a required one in braces, ``{INPUT}``)."""
    name = p.metavar or p.name.upper()
    if not p.required:
        name = f"[{name}]"
    return [name + ("..." if p.nargs != 1 else "")]


def _tidy(params: list[Any]) -> list[Any]:
    for p in params:
        if getattr(p, "_aflite_tidy", False):
            continue
        if isinstance(p, TyperArgument):
            # typer shows an argument's type even when it has a metavar
            p.display_type_rich = _no_type
            if p.metavar is None:
                p.metavar = p.name.upper()
            p.get_usage_pieces = functools.partial(_usage_pieces, p)
        elif getattr(p, "is_flag", False):
            if p.metavar is None:
                p.metavar = ""
            if p.default is False:
                p.show_default = False
        elif p.metavar is None:
            annotation = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            p.metavar = _VALUE_NAMES.get(annotation, "VALUE")
        p._aflite_tidy = True
    return params


# --text-fields where the command needs them named (it picks no text column by itself)
TEXT_FIELDS_NAMED = (
    "Comma-separated text fields, e.g. premise,hypothesis (required, but for multiple-choice "
    "items)."
)


class AfliteGroup(TyperGroup):
    """A command group whose help screens, and those of its commands, show no type tags."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _tidy(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and not isinstance(cmd, AfliteGroup):
            # a command's --help option is made on first use, so tidy through get_params
            _tidy(cmd.get_params(ctx))
        return cmd
