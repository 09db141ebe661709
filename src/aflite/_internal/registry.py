"""The one shape of every plug-in registry: model families, feature kinds, data formats,
audits, per-example scorers, evaluators, exporters and stress tests.

A :class:`Registry` maps names (and aliases) to :class:`Entry` records, in registration order.
``registry.register(name, ...)`` is the decorator a plug-in uses; ``registry.lookup(name)``
is the one way a name given by a user is found, and the one error for a name that is not
there: a one-line :class:`~aflite.errors.DataError` with the names there are and the closest.
A registry reads like a read-only mapping (``name in r``, ``r[name]``, ``list(r)``).

The built-in entries of every registry are listed in :mod:`aflite.plugins` and imported on
the first read of the registry; they rank before any plug-in, in the order listed there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from aflite._internal.text import did_you_mean
from aflite.errors import DataError

__all__ = ["Entry", "Registry", "set_builtins_loader", "unknown_message"]

# kind -> names of the modules that registered its built-ins, after importing them; set by
# the aflite package to aflite.plugins.load_builtins (this layer imports nothing above it)
_builtins_loader: Callable[[str], Sequence[str]] | None = None


def set_builtins_loader(loader: Callable[[str], Sequence[str]]) -> None:
    """Set what a registry calls on its first read to register its kind's built-ins."""
    global _builtins_loader
    _builtins_loader = loader


def unknown_message(
    what: str,
    name: Any,
    usages: Sequence[str],
    names: Sequence[str] | None = None,
    *,
    flag: str | None = None,
    shown: str | None = None,
) -> str:
    """The one message for a name a registry does not hold: the entries there are (as
    ``usages``) and the closest of ``names`` (default: the usages). A function, so a check
    that knows the names without loading the registry says the same."""
    choices = ", ".join(usages) or "none registered"
    hint = did_you_mean(str(name), list(usages if names is None else names))
    head = f"{flag}: " if flag else ""
    return f"{head}unknown {what} '{shown or name}' (choose from {choices}{hint})"


@dataclass(frozen=True)
class Entry:
    """One registered plug-in: its name, the registered object (``target``), a one-line
    ``description``, other names it answers to, and the options it declares with their
    defaults. Each kind of registry adds the properties its callers read."""

    name: str
    target: Any
    description: str = ""
    aliases: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def usage(self) -> str:
        """How help and errors show the entry (a kind taking an argument overrides it)."""
        return self.name


E = TypeVar("E", bound=Entry)


class Registry(Mapping[str, E], Generic[E]):
    """Names -> entries of one kind of plug-in.

    ``kind`` is the key of the built-ins in :mod:`aflite.plugins`; ``what`` is how errors
    name an entry (``"model family"`` -> ``unknown model family 'x'``); ``entry`` the record
    class (a subclass of :class:`Entry` with the kind's properties); ``on_register(entry)``
    runs after each registration (e.g. to stamp the name on a registered class).
    """

    def __init__(
        self,
        kind: str,
        *,
        what: str | None = None,
        entry: type[E] = Entry,  # type: ignore[assignment]
        on_register: Callable[[E], None] | None = None,
    ) -> None:
        self.kind = kind
        self.what = what or kind
        self.entry_type = entry
        self._on_register = on_register
        self._entries: dict[str, E] = {}
        self._aliases: dict[str, str] = {}
        self._state = "empty"  # -> "loading" -> "loaded"

    # -- registering -------------------------------------------------------------------

    def register(
        self,
        name: str,
        *,
        aliases: Sequence[str] = (),
        description: str = "",
        options: Mapping[str, Any] | None = None,
        **properties: Any,
    ) -> Callable[[Any], Any]:
        """Decorator: register the decorated function or class under ``name``.

        ``aliases`` are other names for it; ``description`` one line for help; ``options``
        the keyword options it reads, with their defaults; ``properties`` the fields the
        kind's entry declares. Registering a name again replaces the earlier entry, which
        then ranks as the latest. The decorated object is returned unchanged."""

        def deco(target: Any) -> Any:
            self.add(
                self.entry_type(
                    name=name,
                    target=target,
                    description=description,
                    aliases=tuple(aliases),
                    options=dict(options or {}),
                    **properties,
                )
            )
            return target

        return deco

    def add(self, entry: E) -> E:
        """Register a ready-made entry (what :meth:`register` does for a decorated object)."""
        self.unregister(entry.name)
        self._entries[entry.name] = entry
        for alias in entry.aliases:
            self._aliases[alias] = entry.name
        if self._on_register is not None:
            self._on_register(entry)
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` and its aliases (nothing happens when it is not registered)."""
        entry = self._entries.pop(name, None)
        if entry is not None:
            for alias in entry.aliases:
                if self._aliases.get(alias) == name:
                    del self._aliases[alias]

    # -- reading -----------------------------------------------------------------------

    def _load_builtins(self) -> None:
        if self._state != "empty":
            return
        self._state = "loading"
        try:
            modules = _builtins_loader(self.kind) if _builtins_loader is not None else ()
        except BaseException:
            self._state = "empty"
            raise
        self._state = "loaded"
        # built-ins first, in the order aflite.plugins lists their modules, whatever imported
        # them first; then everything else in registration order
        rank = {m: i for i, m in enumerate(modules)}

        def key(entry: E) -> int:
            return rank.get(getattr(entry.target, "__module__", None), len(rank))

        self._entries = {e.name: e for e in sorted(self._entries.values(), key=key)}

    def canonical(self, name: str) -> str | None:
        """``name``, or the name an alias stands for; None when neither is registered."""
        self._load_builtins()
        if name in self._entries:
            return name
        return self._aliases.get(name)

    def lookup(self, name: str, *, flag: str | None = None, shown: str | None = None) -> E:
        """The entry for ``name`` (or an alias), else a one-line DataError naming ``flag``
        (``--features: unknown ...``), the value as the user wrote it (``shown``), the names
        there are and the closest one."""
        key = self.canonical(name) if isinstance(name, str) else None
        if key is not None:
            return self._entries[key]
        raise DataError(self.unknown(name, flag=flag, shown=shown))

    def unknown(self, name: Any, *, flag: str | None = None, shown: str | None = None) -> str:
        """The message for a name that is not registered."""
        self._load_builtins()
        return unknown_message(
            self.what,
            name,
            self.usages(),
            list(self._entries) + list(self._aliases),
            flag=flag,
            shown=shown,
        )

    def names(self) -> list[str]:
        """The registered names, in registration order (aliases left out)."""
        self._load_builtins()
        return list(self._entries)

    def usages(self) -> list[str]:
        """How help shows each entry (``precomputed:FILE``), in registration order."""
        return [e.usage for e in self.values()]

    def help(self) -> str:
        """One line per entry: ``name: description`` (the name alone without one)."""
        return "\n".join(
            f"{e.usage}: {e.description}" if e.description else e.usage for e in self.values()
        )

    def __getitem__(self, name: str) -> E:
        key = self.canonical(name)
        if key is None:
            raise KeyError(name)
        return self._entries[key]

    def __iter__(self) -> Iterator[str]:
        self._load_builtins()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load_builtins()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) is not None

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self)})"  # the built-ins loaded first
