"""The import graph of src/aflite, read from the source with ast (every import statement,
those inside functions and under TYPE_CHECKING too): no circles between modules, no layer
importing back up, no private module or name reached from outside what owns it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "aflite"

# Circles the code is allowed to have, each exactly as found: a circle that shrinks or goes
# must be updated or removed here, so the list cannot go stale. None now: every module of
# src/aflite is in no circle.
KNOWN_CIRCLES: list[set[str]] = []


def _modules(src: Path = SRC) -> dict[str, Path]:
    out = {}
    for p in src.rglob("*.py"):
        parts = list(p.relative_to(src.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The aflite modules ``name`` imports (a name imported from a package counts as its
    submodule when there is one). A package's own __init__ is not counted for its modules when
    they import its submodules, but is when they read a name its __init__ defines (``from
    aflite.config import FilterConfig`` inside aflite.config: a circle with that __init__)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        # ``import aflite`` inside aflite is the package's face, an edge like any other;
        # ``from aflite import jobs`` names a submodule, which is the edge
        plain = isinstance(node, ast.Import)
        if plain:
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
            defined = [t for t in targets[1:] if t not in known and base in known]
            if base != name and name.startswith(base + ".") and defined:
                found.add(base)
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and (plain or not name.startswith(t + ".")):
                found.add(t)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_circle_finder_finds_a_planted_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(g) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions_and_type_checking(graph):
    # lazy and TYPE_CHECKING imports are edges too (a circle through them is still a circle)
    assert "aflite.reports.html" in graph["aflite.jobs.outputs"]
    assert "aflite.audits.run" in graph["aflite.audits.before_after"]


def test_the_graph_counts_an_import_of_the_package_itself(graph, tmp_path):
    # importing a submodule of one's own package is no edge to the package; importing the
    # package's face, or a name from it, is
    assert "aflite.config" not in graph["aflite.config.filter"]
    for line in ("import aflite\n", "from aflite import __version__\n"):
        (tmp_path / "x.py").write_text(line)
        assert _imports("aflite.jobs.x", tmp_path / "x.py", {"aflite", "aflite.jobs"}) == {"aflite"}


def test_nothing_inside_imports_the_packages_face(graph):
    # ``import aflite`` from inside reaches every layer (the face gathers the API, which
    # gathers the audits, ...): code inside imports the module that owns a name
    assert sorted(m for m, targets in graph.items() if "aflite" in targets) == []


def test_no_import_circles_but_the_known_ones(graph):
    found = circles(graph)
    for comp in found:
        assert comp in KNOWN_CIRCLES, f"import circle: {sorted(comp)}"
    for known in KNOWN_CIRCLES:
        assert known in found, f"no longer a circle, remove it from KNOWN_CIRCLES: {sorted(known)}"


def test_reports_do_not_import_jobs(graph):
    # a report is drawn from the data it is given, not from how a job is configured
    up = {(m, t) for m, ts in graph.items() if m.startswith("aflite.reports") for t in ts
          if t.startswith(("aflite.jobs", "aflite.cli"))}  # fmt: skip
    assert not up


def test_the_command_line_parses_calls_a_job_and_prints(graph):
    # cli/ reads the options (config), runs one job (jobs) and prints what it returns (the
    # terminal printer); the work itself is never done there
    allowed = ("aflite.cli", "aflite.config", "aflite.jobs", "aflite.reports.terminal",
               "aflite.errors", "aflite._internal")  # fmt: skip
    wrong = [f"{m} -> {t}" for m, targets in graph.items() if m.startswith("aflite.cli")
             for t in targets if not t.startswith(allowed)]  # fmt: skip
    assert not wrong, "the command line does work itself: " + "; ".join(sorted(wrong))


def test_no_private_audit_modules_outside_audits(graph):
    reached = {(m, t) for m, ts in graph.items() if not m.startswith("aflite.audits")
               for t in ts if t.startswith("aflite.audits._")}  # fmt: skip
    assert not reached


def private_imports(src: Path = SRC) -> list[tuple[str, str]]:
    """``(importer, name)`` for each import of a private name (a module or an attribute whose
    name starts with ``_``) from outside what owns it: ``aflite.pkg._mod`` belongs to
    ``aflite.pkg`` and everything in it (so ``aflite._internal`` to all of aflite), ``_name``
    of a module to that module alone."""
    out = []
    for name, path in _modules(src).items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                parts = t.split(".")
                if parts[0] != "aflite":
                    continue
                for i, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__"):
                        owner = ".".join(parts[:i])
                        if name != owner and not name.startswith(owner + "."):
                            out.append((name, t))
                        break
    return sorted(set(out))


def test_the_private_import_finder_knows_who_owns_what(tmp_path):
    files = {
        "__init__.py": "",
        "_internal/__init__.py": "",
        "_internal/x.py": "def g(): ...\n",
        "a/__init__.py": "",
        "a/_p.py": "def f(): ...\n",
        # its own package's private module, the shared private package: allowed
        "a/m.py": "from aflite.a._p import f\nfrom aflite._internal.x import g\ndef _h(): ...\n",
        "a/n.py": "from . import _p\nfrom .m import _h\n",  # another module's _h: not allowed
        "b.py": "import aflite.a._p\nfrom aflite.a.m import f\n",  # outside aflite.a
    }
    for name, text in files.items():
        (tmp_path / "aflite" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "aflite" / name).write_text(text)
    assert private_imports(tmp_path / "aflite") == [
        ("aflite.a.n", "aflite.a.m._h"),
        ("aflite.b", "aflite.a._p"),
    ]


def test_no_private_names_imported_from_other_modules():
    # a name used by other modules is public in the module that owns it (a docstring, a
    # stable name); aflite._internal is the one private package all of aflite shares
    assert private_imports() == []


# The layers of docs/architecture.md, top first: a package imports only from its own layer's
# packages it is allowed to (SIDEWAYS) and from the layers below it.
LAYERS = [
    {"__main__"},
    {"cli"},
    {"jobs"},
    {"api", "experiments", "config"},
    {"distributed", "reports", "exports", "training"},
    {"audits"},
    {"scoring", "features"},
    {"io", "data"},
    {"algorithm"},
    {"_internal"},
    {"errors", "types"},
]
SIDEWAYS = {("config", "experiments"), ("api", "config"),
            ("exports", "reports")}  # fmt: skip
# the package's own entry module and the built-in list sit above everything they gather;
# types.py names algorithm classes for type checkers only (tests/test_loop.py checks that)
TOP = {"aflite", "aflite.plugins"}


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_every_package_imports_only_from_its_layer_or_below(graph):
    rank = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
    wrong = []
    for module, targets in graph.items():
        if module in TOP or module == "aflite.types":
            continue
        here = _package(module)
        for t in targets:
            there = _package(t)
            if t in TOP or there == here or rank[there] > rank[here]:
                continue
            if (here, there) not in SIDEWAYS:
                wrong.append(f"{module} -> {t}")
    assert not wrong, "imports back up the layers: " + "; ".join(sorted(wrong))


def test_what_plug_in_authors_are_told_to_use_is_public():
    import re

    import aflite.distributed
    import aflite.io
    from aflite._internal.atomic import atomic_path
    from aflite._internal.backends import register_backend

    assert aflite.distributed.register_backend is register_backend
    assert aflite.io.atomic_path is atomic_path
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    extending = doc.split("## Extending", 1)[1].split("\n## ", 1)[0]
    # a decorator or helper to import is named by its public place, never aflite._internal
    told = re.findall(r"`@?(aflite\._internal[\w.]*|_internal\.[\w.]+)`", extending)
    assert told == [], told
