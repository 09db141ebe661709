"""The Python API's keywords, checked as Python checks a call but said as the command line
says a misspelt option: ``filter_dataset(lable="label")`` names ``lable`` and the closest
name, where Python would only say that ``label`` is missing."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aflite._internal.text import did_you_mean

__all__ = ["checked_keywords", "misspelt", "named_arguments"]

F = TypeVar("F", bound=Callable[..., Any])


def named_arguments(fn: Callable[..., Any]) -> list[str]:
    """The arguments ``fn`` names (its ``*args`` / ``**options`` left out)."""
    kinds = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind not in kinds]


def misspelt(call: str, unknown: Sequence[str], known: Sequence[str]) -> TypeError:
    """``call() got unexpected option(s): a, b; did you mean 'x'?``, for the first of
    ``unknown`` among ``known``."""
    names = sorted(unknown)
    return TypeError(
        f"{call}() got unexpected option(s): {', '.join(names)}{did_you_mean(names[0], known)}"
    )


def checked_keywords(
    options: Callable[[], Sequence[str]] | None = None,
) -> Callable[[F], F]:
    """A decorator: the function's call, where Python would refuse it (a required keyword
    missing, an unknown one), names the keywords it does not know, with the closest of its
    arguments and ``options()`` (the names its ``**options`` take) first: a misspelt
    ``lable=`` is the mistake behind a missing ``label``."""

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        named = named_arguments(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                signature.bind(*args, **kwargs)
            except TypeError:
                known = [*named, *(options() if options is not None else ())]
                unknown = [k for k in kwargs if k not in known]
                if unknown:
                    raise misspelt(fn.__name__, unknown, known) from None
            return fn(*args, **kwargs)  # Python's own words for any other mistake

        return call  # type: ignore[return-value]

    return decorate
