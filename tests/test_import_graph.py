"""The import graph of ``src/ragmeter`` has no cycle, at import time or at run time.

The graph is built from the source with :mod:`ast` (nothing is imported): an edge ``a -> b`` for
every ``import``/``from ... import`` in ``a`` that names module ``b`` of the package. Each import
has a kind:

- ``module``: runs when ``a`` is imported (the module body, ``try``/``if`` blocks, class bodies);
- ``function``: inside a function, runs when the function is first called (an optional heavy
  dependency imported lazily is one; an import of the package's own modules there is an edge like
  any other, since it runs as soon as the function does);
- ``typing``: under ``if TYPE_CHECKING:``, never runs; these edges are reported separately
  (``python tests/test_import_graph.py``) and are not held to the no-cycle rule.

``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so the target's parent
packages are edges too, except the importer's own parents when only implied (every package
imports its own children; that is not a cycle a change could break). A module that names its
parent (``from . import __version__``) has that edge.

A private name (``_x``, a module or an attribute) belongs to the package that holds it: only
modules inside that package import it (``from ragmeter.stats.paired import _bootstrap`` is
allowed in ``ragmeter.stats.*``, nowhere else; ``ragmeter._plugins`` belongs to all of ragmeter).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from ragmeter.names import parse_python

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "ragmeter"
RUNTIME = frozenset({"module", "function"})


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in (SRC / PKG).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
    return name == "TYPE_CHECKING"


def imports_of(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement of a module with its kind: ``module``, ``function`` or ``typing``."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def walk(body: Iterable[ast.stmt], kind: str) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append((node, kind))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(node.body, "typing" if kind == "typing" else "function")
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                walk(node.body, "typing")
                walk(node.orelse, kind)
            else:  # if/try/with/for/class bodies run with their parent
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    block = getattr(node, field, None)
                    if isinstance(block, list):
                        stmts = [s for b in block for s in (b.body if hasattr(b, "body") and not isinstance(
                            b, ast.stmt) else [b])]
                        walk(stmts, kind)

    walk(tree.body, "module")
    return found


def _imported_names(mod: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted names an import statement reaches (``ragmeter.x.y`` or ``ragmeter.x.y.name``)."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    if node.level:
        here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        base = here[: len(here) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    yield from (f"{prefix}.{a.name}" for a in node.names)


def import_graph(kinds: frozenset[str] = RUNTIME) -> dict[str, set[str]]:
    """``{module: {modules of the package it imports}}`` through imports of the given kinds."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        own = {".".join(mod.split(".")[:k]) for k in range(1, mod.count(".") + 2)}
        for node, kind in imports_of(parse_python(path.read_text(encoding="utf-8"))):
            if kind not in kinds:
                continue
            for t in _imported_names(mod, path, node):
                while t and t not in mods and "." in t:  # a non-module attribute: its module
                    t = t.rsplit(".", 1)[0]
                if t not in mods:
                    continue
                parts = t.split(".")
                for k in range(1, len(parts) + 1):  # the target and its parent packages
                    dep = ".".join(parts[:k])
                    if dep in mods and (dep == t or dep not in own) and dep != mod:
                        graph[mod].add(dep)
    return graph


def private_imports() -> list[str]:
    """``importer: name`` for every private name imported from outside the package that holds it."""
    mods = _modules()
    bad: list[str] = []
    for mod, path in mods.items():
        for node, _kind in imports_of(parse_python(path.read_text(encoding="utf-8"))):
            for name in _imported_names(mod, path, node):
                parts = name.split(".")
                if parts[0] != PKG:
                    continue
                first = next((i for i, p in enumerate(parts) if p.startswith("_")
                              and not (p.startswith("__") and p.endswith("__"))), None)
                if first is None:
                    continue
                owner = ".".join(parts[:first])
                if owner in mods and mods[owner].name != "__init__.py":  # a private name of a module
                    owner = owner.rsplit(".", 1)[0]
                if mod != owner and not mod.startswith(owner + "."):
                    bad.append(f"{mod}: {name}")
    return sorted(set(bad))


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


def _describe(cycles: list[list[str]]) -> str:
    return "\n".join(f"{len(c)} modules: {', '.join(c)}" for c in cycles)


def test_the_checker_sees_known_imports() -> None:
    # the checker itself can fail: it must see imports we know are there, of each kind
    g = import_graph(frozenset({"module"}))
    assert "ragmeter.types" in g["ragmeter.evaluator"]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []
    tree = parse_python(
        "import a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\n"
        "def f():\n    import d\n    if TYPE_CHECKING:\n        import e\n"
        "class K:\n    import g\n    def m(self):\n        try:\n            import h\n"
        "        except ImportError:\n            import i\n")
    kinds = {n.names[0].name: kind for n, kind in imports_of(tree)}  # type: ignore[union-attr]
    assert kinds == {"a": "module", "b": "typing", "c": "module", "d": "function", "e": "typing",
                     "g": "module", "h": "function", "i": "function"}


def test_no_import_cycle_at_import_time() -> None:
    cycles = find_cycles(import_graph(frozenset({"module"})))
    assert not cycles, "import cycles (strongly connected components):\n" + _describe(cycles)


def test_no_import_cycle_at_run_time() -> None:
    # imports inside functions count: a cycle hidden in a function is still a cycle
    cycles = find_cycles(import_graph(RUNTIME))
    assert not cycles, "import cycles through imports inside functions:\n" + _describe(cycles)


def test_no_private_name_imported_across_packages() -> None:
    bad = private_imports()
    assert not bad, "private names imported from outside their package:\n" + "\n".join(bad)


if __name__ == "__main__":  # python tests/test_import_graph.py: the cycles at each level
    for title, kinds in (("import time", frozenset({"module"})), ("run time", RUNTIME),
                         ("with TYPE_CHECKING imports", RUNTIME | {"typing"})):
        print(f"## {title}")
        for c in find_cycles(import_graph(kinds)):
            print(len(c), c)
    print("## private names across packages")
    print("\n".join(private_imports()))
