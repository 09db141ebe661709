"""Lazy package exports: ``from aflite import FilterResult`` imports torch only then, so that
``import aflite`` and ``aflite --help`` stay fast; and the deprecation path of a name or a
module that moved: the old place still gives it, with a DeprecationWarning naming the new."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports", "moved_modules"]


def lazy_exports(
    package: str,
    exports: dict[str, str],
    *,
    deprecated: Mapping[str, str | tuple[Callable[[], Any], str]] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module-level ``__getattr__`` and ``__dir__`` for ``package``.

    ``exports`` maps a public name to the module defining it, or to ``"module:attribute"``
    when the public name differs. The first access imports that module and caches the value
    on the package, so later accesses cost nothing. ``deprecated`` maps names that used to
    live here the same way, or to ``(make, instead)``: a function giving the value and what
    to use instead; each access gives the value with a DeprecationWarning naming its new
    place (never cached, so every use warns).
    """
    deprecated = dict(deprecated or {})

    def __getattr__(name: str) -> Any:
        if name in deprecated:
            old = deprecated[name]
            if isinstance(old, tuple):
                make, instead = old
            else:
                module, _, attribute = old.partition(":")
                instead = f"{module}.{attribute or name}"

                def make() -> Any:
                    return getattr(importlib.import_module(module), attribute or name)

            warnings.warn(
                f"{package}.{name} is deprecated; use {instead}", DeprecationWarning, stacklevel=2
            )
            return make()
        try:
            target = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module, _, attribute = target.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path and loads what holds its code now (see :func:`moved_modules`)."""

    def __init__(self, table: Mapping[str, str | Mapping[str, str]]) -> None:
        self.table = dict(table)
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.table:
            return None
        names = not isinstance(self.table[fullname], str)
        return importlib.util.spec_from_loader(fullname, self, is_package=names)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = self.table[spec.name]
        if isinstance(new, str):
            warnings.warn(f"{spec.name} is deprecated; use {new}", DeprecationWarning, stacklevel=2)
            module = importlib.import_module(new)
            self._specs[spec.name] = module.__spec__
            return module
        homes = sorted({m.partition(":")[0] for m in new.values()})
        warnings.warn(
            f"{spec.name} is deprecated; its names moved to {', '.join(homes)}",
            DeprecationWarning,
            stacklevel=2,
        )
        module = types.ModuleType(spec.name, f"Deprecated: the names of {spec.name}.")
        module.__path__ = []  # an old package: its old submodules are found by this finder
        module.__getattr__, module.__dir__ = lazy_exports(spec.name, dict(new))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import system stamped the old path's spec on the module: it keeps its own
        spec = self._specs.pop(module.__spec__.name, None) if module.__spec__ else None
        if spec is not None:
            module.__spec__ = spec


def moved_modules(table: Mapping[str, str | Mapping[str, str]]) -> None:
    """Keep old module paths importable after their code moved. ``table`` maps an old dotted
    path to the module that holds its code now (importing the old path gives that module), or,
    for a module whose names went to several modules, to its names, each mapped to the module
    that holds it now. Each first import of an old path warns with a DeprecationWarning naming
    the new one."""
    sys.meta_path.append(_MovedModules(table))
