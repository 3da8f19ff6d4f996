"""Metric names are values: ``ndcg@10``, ``recall@5``, ``mrr``, ``ndcg(gain=linear)@10``.

A name is parsed with :mod:`ast` (never ``eval``) into a :class:`MetricName`: a base name, keyword
parameters and an optional cutoff. ``str(MetricName)`` is the canonical form, which parses back
to an equal value. Parameter values are numbers, booleans or strings; a bare identifier is read
as a string, so ``ndcg(gain=linear)`` and ``ndcg(gain='linear')`` are the same name.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field
from typing import Any, cast

from .errors import InvalidParameterError

#: held around every ``ast.parse`` of ragmeter's: CPython 3.11 keeps the AST builder's recursion
#: count per interpreter, so two threads parsing at once can fail with a spurious ``SystemError``
#: ("AST constructor recursion depth mismatch", python/cpython#106905); the engines name metrics
#: from several threads
PARSE_LOCK = threading.Lock()
#: how many times :func:`parse_python` parses before a spurious recursion-depth error is raised: the
#: lock cannot cover the parses other code makes (Python 3.11's tracebacks parse the failing line)
PARSE_ATTEMPTS = 3


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)`` under :data:`PARSE_LOCK`, parsed again (up to
    :data:`PARSE_ATTEMPTS` times) when it fails with the spurious "AST constructor recursion depth
    mismatch" of a parse in another thread; any other error is raised at once."""
    with PARSE_LOCK:
        for _ in range(PARSE_ATTEMPTS - 1):
            try:
                return ast.parse(source, filename, mode)
            except SystemError as e:
                if "recursion depth mismatch" not in str(e):
                    raise
        return ast.parse(source, filename, mode)

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class MetricName:
    """A parsed metric name. ``params`` is kept sorted by key so equal names compare equal."""

    base: str
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    cutoff: int | None = None

    def __str__(self) -> str:
        out = self.base
        if self.params:
            out += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += f"@{self.cutoff}"
        return out

    @property
    def kwargs(self) -> dict[str, Any]:
        """The parameters as a dict."""
        return dict(self.params)


def _fmt(v: Any) -> str:
    if isinstance(v, str):
        return v if _IDENT.match(v) and v not in ("True", "False", "None") else repr(v)
    return repr(v)


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
    ):
        return -node.operand.value
    raise InvalidParameterError(
        f"metric name {text!r}: parameter values must be numbers or strings, got {ast.unparse(node)!r}"
    )


def parse_name(text: str) -> MetricName:
    """Parse ``text`` into a :class:`MetricName`.

    >>> str(parse_name("nDCG @ 10"))
    'ndcg@10'
    >>> parse_name("ndcg(gain='linear')@5") == parse_name("ndcg(gain=linear)@5")
    True

    Raises :class:`~ragmeter.errors.InvalidParameterError` for anything that is not of the form
    ``base``, ``base@k`` or ``base(key=value, ...)@k`` with a positive integer ``k``.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(f"expected a metric name such as 'ndcg@10', got {text!r}")
    try:
        tree = cast("ast.Expression", parse_python(text.strip(), mode="eval")).body
    except SyntaxError as exc:
        raise InvalidParameterError(
            f"cannot parse metric name {text!r}: expected 'name', 'name@k' or 'name(param=value)@k'"
        ) from exc
    cutoff: int | None = None
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.MatMult):
        k = tree.right
        if not (isinstance(k, ast.Constant) and isinstance(k.value, int) and not isinstance(k.value, bool)):
            raise InvalidParameterError(f"metric name {text!r}: the cutoff after '@' must be an integer")
        if k.value < 1:
            raise InvalidParameterError(f"metric name {text!r}: the cutoff must be >= 1, got {k.value}")
        cutoff = k.value
        tree = tree.left
    params: dict[str, Any] = {}
    if isinstance(tree, ast.Call):
        if tree.args:
            raise InvalidParameterError(
                f"metric name {text!r}: parameters must be named, e.g. ndcg(gain=linear)@10"
            )
        for kw in tree.keywords:
            if kw.arg is None:
                raise InvalidParameterError(f"metric name {text!r}: '**' is not allowed")
            params[kw.arg] = _literal(kw.value, text)
        tree = tree.func
    if not isinstance(tree, ast.Name):
        raise InvalidParameterError(f"cannot parse metric name {text!r}: expected an identifier first")
    return MetricName(tree.id.lower(), tuple(sorted(params.items())), cutoff)
