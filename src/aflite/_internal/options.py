"""The shape every config shares: frozen dataclasses whose fields carry their default, their
check and their help, validated once when the object is made.

A field is declared with :func:`option`; everything else (the command line's options, the
presets, ``--config`` files, the defaults the API documents) is read from those declarations,
so an option is added in one place. A bad value is a :class:`ConfigError` naming the field,
``train_size: ...`` from Python and ``--train-size: ...`` from the command line.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from aflite.errors import DataError

__all__ = [
    "ConfigError",
    "Config",
    "option",
    "flag",
    "config_fields",
    "show",
    "deferred_heavy_checks",
    "defaults_from",
]

C = TypeVar("C", bound="Config")

# while set, a config keeps its heavy checks for check_heavy() (the command line checks INPUT
# between the light checks and the heavy ones)
_DEFER_HEAVY: contextvars.ContextVar[bool] = contextvars.ContextVar("defer_heavy", default=False)


@contextlib.contextmanager
def deferred_heavy_checks() -> Iterator[None]:
    token = _DEFER_HEAVY.set(True)
    try:
        yield
    finally:
        _DEFER_HEAVY.reset(token)


# {other_field} in a message is another option, named in the caller's style
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


# fields declared with flags of their own (``option(flag=...)``): name -> flags. A name has
# the same flags in every config (``label`` is ``--label-field`` wherever it is an option)
_FLAGS: dict[str, tuple[str, ...]] = {}


def flag(name: str) -> str:
    """The command-line flag of a field: ``train_size`` -> ``--train-size``, ``label`` ->
    ``--label-field`` (its own), ``choices`` -> ``--choices-field / --choices-fields``."""
    own = _FLAGS.get(name)
    return " / ".join(own) if own else "--" + name.replace("_", "-")


def flag_names() -> dict[str, str]:
    """Each own flag as a name (``label_field``) -> the field it sets (``label``): how a file
    or an older run's summary may name an option."""
    return {f.lstrip("-").replace("-", "_"): name for name, fs in _FLAGS.items() for f in fs}


def show(value: Any) -> str:
    """A value as the user most likely typed it: 75, not 75.0; strings quoted."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


class ConfigError(DataError):
    """A bad option value: ``field: why``. ``why`` may name other options as ``{field}``, so
    :meth:`render` can name every option as a flag for the command line."""

    __module__ = "aflite.config"  # where users import it from

    def __init__(self, field: str, why: str) -> None:
        self.field, self.why = field, why
        super().__init__(self.render(cli=False))

    def render(self, *, cli: bool) -> str:
        name = flag if cli else (lambda n: n)
        why = _PLACEHOLDER.sub(lambda m: name(m.group(1)), self.why)
        return f"{name(self.field)}: {why}"


def option(
    default: Any,
    help: str,  # noqa: A002 -- the word the command line uses
    *,
    metavar: str | None = None,
    coerce: Callable[[Any, str], Any] | None = None,
    check: Callable[[Any, str], None] | None = None,
    cli_type: Any = None,
    cli_default: Any = dataclasses.MISSING,
    argument: bool = False,
    required: bool = False,
    flag: str | tuple[str, ...] | None = None,
    result: bool = True,
    entries: Callable[[], dict[str, tuple[Any, str]]] | None = None,
    heavy: bool = False,
) -> Any:
    """A config field.

    ``coerce(value, name)`` turns what a file or the command line gives (``"0.3"``, ``"off"``,
    ``"a,b"``) into the field's value; ``check(value, name)`` raises a :class:`ConfigError`
    for a bad one. ``cli_type`` is the type the command line parses before ``coerce`` (str for
    sizes), ``cli_default`` what its help shows; ``argument`` makes it positional,
    ``required`` required on the command line, ``flag`` its flag other than ``--field-name`` (or
    flags: the first is the one messages name). ``result``
    False marks an option that cannot change a run's result (the output folder, the device):
    a checkpoint resumes across it. ``entries`` makes a mapping field whose keys
    are options of their own: ``entries()`` gives each key's default and help (the options
    the registered scorers declare), and each becomes a command-line option. ``heavy``: its
    check imports much (a registry of torch-backed plug-ins), so it runs after every other
    check: a mistake elsewhere is reported at once.
    """
    meta = {
        "help": help,
        "metavar": metavar,
        "coerce": coerce,
        "check": check,
        "cli_type": cli_type,
        "cli_default": default if cli_default is dataclasses.MISSING else cli_default,
        "argument": argument,
        "required": required,
        "flag": flag,
        "result": result,
        "entries": entries,
        "heavy": heavy,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("a config default must be immutable (a tuple, not a list)")
    return dataclasses.field(default=default, metadata=meta)


def config_fields(cls: type[Config] | Config) -> Iterator[dataclasses.Field]:
    """The declared options of a config class, in declaration order."""
    return iter(dataclasses.fields(cls))  # type: ignore[arg-type]


def defaults_from(values: Mapping[str, Any]) -> Callable[[type], type]:
    """A class decorator, put under ``@dataclass``: the inherited fields named in ``values``
    get these defaults, their checks and help unchanged (a command's config starts from a
    preset of the options it inherits). A help that showed the old default shows the new."""

    def apply(cls: type) -> type:
        import typing

        inherited = {}
        for base in reversed(cls.__mro__[1:]):
            if dataclasses.is_dataclass(base):
                hints = typing.get_type_hints(base)
                for f in dataclasses.fields(base):
                    inherited[f.name] = (f, hints[f.name])
        own = cls.__dict__.get("__annotations__", {})
        for name, value in values.items():
            f, hint = inherited[name]
            meta = dict(f.metadata)
            if meta["cli_default"] == f.default:
                meta["cli_default"] = value
            own[name] = hint
            setattr(cls, name, dataclasses.field(default=value, metadata=meta))
        cls.__annotations__ = own
        return cls

    return apply


@dataclasses.dataclass(frozen=True)
class Config:
    """Base of every config: coerce and check each field once, at construction.

    Use :meth:`build` to make one from loose values (a file, the command line, a preset);
    ``dataclasses.replace`` makes a changed copy, checked again.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, value in vars(cls).items():  # the fields as declared, before @dataclass
            own = value.metadata.get("flag") if isinstance(value, dataclasses.Field) else None
            if own:
                _FLAGS[name] = (own,) if isinstance(own, str) else tuple(own)

    def __post_init__(self) -> None:
        heavy = []
        for f in config_fields(self):
            value = getattr(self, f.name)
            coerce = f.metadata.get("coerce")
            if coerce is not None:
                value = coerce(value, f.name)
                object.__setattr__(self, f.name, value)
            check = f.metadata.get("check")
            if check is not None and f.metadata.get("heavy"):
                heavy.append((check, value, f.name))
            elif check is not None:
                check(value, f.name)
        self.check_together()
        if _DEFER_HEAVY.get():
            object.__setattr__(self, "_heavy", heavy)  # the caller runs them: check_heavy()
            return
        for check, value, name in heavy:
            check(value, name)

    def check_heavy(self) -> None:
        """The heavy checks a build under :func:`deferred_heavy_checks` left for later."""
        for check, value, name in self.__dict__.pop("_heavy", []):
            check(value, name)

    def check_together(self) -> None:
        """Checks that involve several fields; a subclass adds its own."""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in config_fields(cls)]

    @classmethod
    def build(cls: type[C], *layers: Mapping[str, Any] | None, source: str = "") -> C:
        """A config from ``layers`` of values (a preset, a file, explicit options), the later
        overriding the earlier; an unknown key is a ConfigError with a did-you-mean."""
        values: dict[str, Any] = {}
        known = cls.names()
        for layer in layers:
            for key, value in (layer or {}).items():
                if key not in known:
                    raise unknown_key(key, known, source)
                values[key] = value
        return cls(**values)

    @classmethod
    def of(cls: type[C], options: Config | None = None, **values: Any) -> C:
        """``options`` (or the defaults) with ``values`` set: options given as an object, as
        keywords of the same names, or both (the keywords win). A bigger config that extends
        this one (a command's) gives its fields of this one; ``options`` itself comes back
        when nothing changes. An unknown keyword is a TypeError with a did-you-mean."""
        names = cls.names()
        unknown = sorted(set(values) - set(names))
        if unknown:
            from aflite._internal.text import did_you_mean

            raise TypeError(
                f"unexpected option(s): {', '.join(unknown)}{did_you_mean(unknown[0], names)}"
            )
        if options is None:
            return cls(**values)
        if not isinstance(options, cls):
            article = "an" if cls.__name__[0] in "AEIOU" else "a"
            raise TypeError(
                f"options must be {article} {cls.__name__}, got {type(options).__name__}"
            )
        if type(options) is cls and not values:
            return options
        return cls(**({n: getattr(options, n) for n in names} | values))

    @classmethod
    def check_fields(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """Some of the fields, each coerced and checked on its own (for a caller that takes
        only part of a config); an unknown name is a ConfigError with a did-you-mean."""
        fields = {f.name: f for f in config_fields(cls)}
        out = {}
        for name, value in values.items():
            if name not in fields:
                raise unknown_key(name, list(fields))
            meta = fields[name].metadata
            if meta["coerce"] is not None:
                value = meta["coerce"](value, name)
            if meta["check"] is not None:
                meta["check"](value, name)
            out[name] = value
        return out

    def unset_as(self: C, values: Mapping[str, Any]) -> C:
        """This config, noting ``values``: what its options read as where the user named none
        (a preset's, a command's own defaults), so that a note of the options given names only
        those the user set. Not a field: neither saved nor compared, and a changed copy made
        with ``dataclasses.replace`` falls back to the defaults."""
        object.__setattr__(self, "_unset", dict(values))
        return self

    def unset_value(self, name: str) -> Any:
        """What option ``name`` reads as where the user named none (see :meth:`unset_as`):
        the preset's value, else the field's default."""
        unset = self.__dict__.get("_unset", {})
        if name in unset:
            return unset[name]
        return next(f.default for f in config_fields(self) if f.name == name)

    def as_dict(self) -> dict[str, Any]:
        """Every field, as plain values (tuples as lists) for JSON and TOML."""
        out = {}
        for f in config_fields(self):
            v = getattr(self, f.name)
            out[f.name] = (
                list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, Mapping) else v
            )
        return out


def unknown_key(key: str, known: list[str], source: str = "") -> DataError:
    from aflite._internal.text import did_you_mean

    where = f"{source}: " if source else ""
    return DataError(f"{where}unknown option '{key}'{did_you_mean(key, known)}")
