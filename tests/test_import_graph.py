"""The import graph of ``src/ragmeter`` has no cycle.

The graph is built from the source with :mod:`ast` (nothing is imported): an edge ``a -> b`` for
every module-level ``import``/``from ... import`` in ``a`` that names module ``b`` of the package
(an import inside a function, or under ``if TYPE_CHECKING:``, runs later or never, so it is not an
edge). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so the target's parent
packages are edges too, except the importer's own parents when only implied (every package
imports its own children; that is not a cycle a change could break). A module that names its
parent (``from . import __version__``) has that edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "ragmeter"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in (SRC / PKG).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run at import time: the module body, descending into ``try``/``if``
    blocks (except ``if TYPE_CHECKING:``), never into functions or classes."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If):
                test = node.test
                name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
                if name != "TYPE_CHECKING":
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                    walk(block)

    walk(tree.body)
    return found


def import_graph() -> dict[str, set[str]]:
    """``{module: {modules of the package it imports at import time}}``."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names]
            for t in targets:
                while t and t not in mods and "." in t:  # import a.b.c of a non-module attribute
                    t = t.rsplit(".", 1)[0]
                if t not in mods:
                    continue
                own = {".".join(mod.split(".")[:k]) for k in range(1, mod.count(".") + 2)}
                parts = t.split(".")
                for k in range(1, len(parts) + 1):  # the target and its parent packages
                    dep = ".".join(parts[:k])
                    if dep in mods and (dep == t or dep not in own) and dep != mod:
                        graph[mod].add(dep)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_graph_sees_known_edges() -> None:
    # the checker itself can fail: it must see imports we know are there
    g = import_graph()
    assert "ragmeter.types" in g["ragmeter.evaluator"]
    assert "ragmeter.errors" in g["ragmeter.types"] or "ragmeter.errors" in g["ragmeter.evaluator"]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles (strongly connected components):\n" + "\n".join(
        f"{len(c)} modules: {', '.join(c)}" for c in cycles)


if __name__ == "__main__":  # print the cycles (python tests/test_import_graph.py)
    for c in find_cycles(import_graph()):
        print(len(c), c)
