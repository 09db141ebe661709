"""Coercions and checks shared by the config fields; each raises a ConfigError naming the
field it is given."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any

from aflite._internal.options import ConfigError, option, show

# scikit-learn's random_state (the audits' folds, the n-gram SVD) takes at most 2**32 - 1; a
# larger seed would pass here and fail after the filter, with the outputs half written
MAX_SEED = 2**32 - 1

_OFF = ("off", "none")


def to_size(value: Any, name: str) -> Any:
    """'5000' -> 5000 rows; '0.3' -> a fraction; numbers pass through to :func:`size`."""
    if not isinstance(value, str):
        return value
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        raise ConfigError(name, f"must be a row count or a fraction, got '{value}'") from None


def size(value: Any, name: str) -> None:
    """A row count (an int >= 1) or a fraction in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConfigError(name, f"must be a row count or a fraction in (0, 1), got {show(value)}")
    if isinstance(value, Integral):
        if value < 1:
            raise ConfigError(name, f"must be at least 1 row, got {show(value)}")
        return
    if not 0.0 < float(value) < 1.0:
        raise ConfigError(name, f"as a fraction must be in (0, 1), got {show(value)}")


def to_margin(value: Any, name: str) -> Any:
    """'off' (or 'none') -> None; '0.02' -> 0.02."""
    if not isinstance(value, str):
        return value
    if value.strip().lower() in _OFF:
        return None
    try:
        return float(value)
    except ValueError:
        raise ConfigError(name, f"must be a margin such as 0.02, or 'off', got '{value}'") from None


def to_number(value: Any, name: str) -> Any:
    """'0.7' (a file's string) -> 0.7; other values pass through to their check."""
    if not isinstance(value, str):
        return value
    try:
        return float(value)
    except ValueError:
        raise ConfigError(name, f"must be a number, got '{value}'") from None


def margin(value: Any, name: str) -> None:
    if value is not None:
        unit(value, name, what="must be a margin in [0, 1] or off")


def unit(value: Any, name: str, *, what: str = "must be in [0, 1]") -> None:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 <= float(value) <= 1.0:
        raise ConfigError(name, f"{what}, got {show(value)}")  # NaN fails too


def open_unit(value: Any, name: str) -> None:
    """None, or a fraction in (0, 1)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < value < 1.0:
        raise ConfigError(name, f"must be in (0, 1), got {show(value)}")


def positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ConfigError(name, f"must be a positive whole number, got {show(value)}")


def optional_positive_int(value: Any, name: str) -> None:
    if value is not None:
        positive_int(value, name)


def to_int(value: Any, name: str) -> Any:
    """'7' (the command line's or a file's string) -> 7; other values pass to their check."""
    if not isinstance(value, str):
        return value
    try:
        return int(value.strip())
    except ValueError:
        raise ConfigError(name, f"must be a whole number, got '{value}'") from None


def to_auto_int(value: Any, name: str) -> Any:
    """'auto' stays; '512' -> 512."""
    if not isinstance(value, str):
        return value
    word = value.strip().lower()
    if word == "auto":
        return "auto"
    try:
        return int(word)
    except ValueError:
        raise ConfigError(name, f"must be a whole number or 'auto', got '{value}'") from None


def positive_int_or_auto(value: Any, name: str) -> None:
    if value != "auto" and (
        isinstance(value, bool) or not isinstance(value, Integral) or value < 1
    ):
        raise ConfigError(name, f"must be a positive whole number or auto, got {show(value)}")


def seed(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral) or not 0 <= value <= MAX_SEED:
        raise ConfigError(name, f"must be a whole number in [0, {MAX_SEED}], got {show(value)}")


def boolean(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise ConfigError(name, f"must be true or false, got {show(value)}")


def text(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise ConfigError(name, f"must be a string, got {show(value)}")


def optional_text(value: Any, name: str) -> None:
    if value is not None:
        text(value, name)


def to_path(value: Any, name: str) -> Any:
    """A path given as a ``pathlib.Path`` (or any os.PathLike) as its text."""
    import os

    return os.fspath(value) if isinstance(value, os.PathLike) else value


def to_names(value: Any, name: str) -> tuple[str, ...]:
    """'a, b' or ['a', 'b'] -> ('a', 'b'); None or '' -> ()."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(f.strip() for f in value.split(",") if f.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(name, f"must be comma-separated names, got {show(value)}")


def to_none(*words: str) -> Callable[[Any, str], Any]:
    """A coercion that reads any of ``words`` (a string) as None."""

    def coerce(value: Any, name: str) -> Any:
        return None if isinstance(value, str) and value in words else value

    return coerce


def choice(choices: Sequence[Any] | Callable[[], Sequence[Any]]) -> Callable[[Any, str], None]:
    """A check that the value is one of ``choices`` (a callable: read when checked)."""

    def check(value: Any, name: str) -> None:
        names = list(choices() if callable(choices) else choices)
        if value in names:
            return
        from aflite._internal.text import did_you_mean

        shown = ", ".join(str(c) for c in names)
        hint = did_you_mean(str(value), [str(c) for c in names])
        raise ConfigError(name, f"unknown value {show(value)}: choose one of {shown}{hint}")

    return check


def registered(registry: Callable[[], Any]) -> Callable[[Any, str], None]:
    """A check that the value names an entry of a plug-in registry (read when checked), with
    the registry's one error: the names there are and the closest."""

    def check(value: Any, name: str) -> None:
        entries = registry()
        if isinstance(value, str) and value in entries:
            return
        raise ConfigError(name, entries.unknown(value))

    return check


def all_of(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """``check`` applied to each item of a tuple."""

    def each(values: Any, name: str) -> None:
        for v in values:
            check(v, name)

    return each


_CUDA = re.compile(r"cuda(:[0-9]+)?")
# what a machine that can run CUDA (NVIDIA's driver, WSL's GPU, ROCm) has
_GPU_PATHS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg", "/dev/kfd")


def _may_have_cuda() -> bool:
    """False only where CUDA surely is not there (macOS; Linux without a GPU driver), so that
    ``--device cuda`` is refused there without loading torch, which takes seconds."""
    if sys.platform == "darwin":
        return False
    if sys.platform.startswith("linux"):
        return any(os.path.exists(p) for p in _GPU_PATHS)
    return True


def device(value: Any, name: str) -> None:
    if value in (None, "auto", "cpu"):
        return  # no torch import for the common cases
    if isinstance(value, str) and _CUDA.fullmatch(value) and not _may_have_cuda():
        # torch's answer (resolve_device), without torch
        raise ConfigError(name, "device 'cuda' was requested but CUDA is not available here")
    from aflite._internal.device import resolve_device

    try:
        resolve_device(value)
    except ValueError as e:
        raise ConfigError(name, str(e)) from None


def flagged(name: str, e: Exception) -> ConfigError:
    """A ConfigError from a message that may already begin with ``--name: ``."""
    msg = str(e)
    from aflite._internal.options import flag

    prefix = flag(name) + ": "
    return ConfigError(name, msg[len(prefix) :] if msg.startswith(prefix) else msg)


def refuse_for_items(values: Any, names: Sequence[str]) -> None:
    """The first option of ``names`` set in ``values`` (name -> value; None, False and empty
    are unset) is a ConfigError: it only means something for rows with a class label."""
    for name in names:
        if values.get(name) not in (None, False, (), {}, []):
            raise ConfigError(name, "is not available for multiple-choice items")


def seed_option(help: str = "Random seed.") -> Any:  # noqa: A002 -- the command line's word
    """The random seed, as every command takes it (``help`` says what it seeds)."""
    return option(0, help, metavar="N", coerce=to_int, check=seed, cli_type=str)
