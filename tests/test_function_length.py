"""No function in ``src/ragmeter`` is longer than :data:`MAX_LINES` lines.

A function's length is counted with :mod:`ast` from its ``def`` line to its last line
(``end_lineno - lineno + 1``: comments and blank lines inside included, decorators not), less
its docstring: the rule is about code to read, and the one public entry documents every
parameter. Methods and nested functions count on their own (a nested function's lines count in
its parent too). Nothing is imported: the source is parsed.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ragmeter.names import parse_python

PKG = Path(__file__).resolve().parents[1] / "src" / "ragmeter"
MAX_LINES = 80

#: ``"path/under/ragmeter.py::qualname"`` of the functions allowed over the limit for now.
ALLOWED: frozenset[str] = frozenset()


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """``(qualname, def line, length in lines)`` of every function and method in ``source``."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                assert child.end_lineno is not None
                doc = 0
                first = child.body[0] if child.body else None
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str) and first.end_lineno is not None):
                    doc = first.end_lineno - first.lineno + 1
                out.append((name, child.lineno, child.end_lineno - child.lineno + 1 - doc))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(parse_python(source), "")
    return out


def long_functions(root: Path = PKG, limit: int = MAX_LINES) -> dict[str, int]:
    """``{"path::qualname": length}`` of the functions under ``root`` longer than ``limit`` lines."""
    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for name, _line, length in function_lengths(path.read_text(encoding="utf-8")):
            if length > limit:
                found[f"{rel}::{name}"] = length
    return found


def test_no_function_over_the_limit():
    over = {k: v for k, v in long_functions().items() if k not in ALLOWED}
    listing = "\n".join(f"  {k}: {v} lines" for k, v in sorted(over.items(), key=lambda kv: -kv[1]))
    assert not over, f"functions over {MAX_LINES} lines (split them into named helpers):\n{listing}"


def test_allow_list_has_no_stale_entry():
    # An allowed function that is now short enough (or gone) must leave the list, so the list
    # never hides a function that grows back.
    stale = sorted(ALLOWED - set(long_functions()))
    assert not stale, f"remove from ALLOWED (no longer over {MAX_LINES} lines): {stale}"


def test_lengths_are_counted_from_def_to_last_line_with_methods_and_nested_functions():
    body = "\n".join(f"    x{i} = {i}" for i in range(78))
    source = (
        "@decorator\n"
        "def f():\n"              # line 2: def .. docstring (not counted) .. 78 body lines = 79 lines
        '    """Doc\n\n    more doc."""\n'
        f"{body}\n"
        "class C:\n"
        "    async def m(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "\n"
        "        return inner\n"
    )
    got = {name: (line, length) for name, line, length in function_lengths(source)}
    assert got == {"f": (2, 79), "C.m": (85, 5), "C.m.inner": (86, 2)}


def test_a_function_one_line_over_the_limit_is_listed(tmp_path):
    lines = ["def short():", *["    pass"] * 79, "def long():", *["    pass"] * 80]
    (tmp_path / "mod.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert long_functions(tmp_path) == {"mod.py::long": 81}
