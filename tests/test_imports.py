"""The import graph of src/aflite, read from the source with ast (every import statement,
those inside functions and under TYPE_CHECKING too): no circles between modules, no layer
importing back up, no private module of a package reached from outside it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "aflite"

# Circles other parts of the code still have; each must only shrink. A circle found must lie
# within one of these; empty this list as they are broken.
KNOWN_CIRCLES: list[set[str]] = [
    {
        "aflite.experiments.compare",
        "aflite.experiments.evaluators",
        "aflite.experiments.finetune_eval",
        "aflite.experiments.ood",
        "aflite.experiments.represent",
    },
    {"aflite.jobs.checks", "aflite.jobs.config", "aflite.jobs.fields"},
]
# packages held to the strict rule: in no circle at all
STRICT = ("aflite.audits", "aflite.reports", "aflite.exports")


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = list(p.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The aflite modules ``name`` imports (a name imported from a package counts as its
    submodule when there is one; a package's own __init__ is not counted for its modules)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and not name.startswith(t + "."):
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


def test_no_new_import_circles(graph):
    for comp in circles(graph):
        assert any(comp <= known for known in KNOWN_CIRCLES), f"import circle: {sorted(comp)}"


def test_strict_packages_are_in_no_circle(graph):
    for comp in circles(graph):
        strict = [m for m in comp if m.startswith(STRICT)]
        assert not strict, f"import circle through {sorted(comp)}"


def test_reports_do_not_import_jobs(graph):
    # a report is drawn from the data it is given, not from how a job is configured
    up = {(m, t) for m, ts in graph.items() if m.startswith("aflite.reports") for t in ts
          if t.startswith(("aflite.jobs", "aflite.cli"))}  # fmt: skip
    assert not up


def test_no_private_audit_modules_outside_audits(graph):
    reached = {(m, t) for m, ts in graph.items() if not m.startswith("aflite.audits")
               for t in ts if t.startswith("aflite.audits._")}  # fmt: skip
    assert not reached
