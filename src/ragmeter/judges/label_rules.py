"""Label rules of judge-check: which field of a labelled row's ``labels`` object a metric is judged against.

A rule is written ``FIELD`` or ``FIELD>=K`` (``ragmeter judge-check --label NAME=RULE``, or
``judge_check(..., labels={NAME: RULE})``):

- ``FIELD``: a boolean label, ``labels.FIELD`` is ``true`` / ``false`` (or ``1`` / ``0``); the
  metric's AUROC is taken against it (label 1 = the good side).
- ``FIELD>=K``: a graded label, ``labels.FIELD`` is a number; the binary label for the AUROC is
  ``value >= K``, and Spearman's rho of the score against the value is reported too (as
  correctness against its 1-5 ``correct`` grade).

A field name is letters, digits, ``_`` and ``-`` starting with a letter or ``_``; ``K`` is a
number. Anything else is an :class:`~ragmeter.errors.InvalidParameterError` naming the option and
showing the expected form. A labelled row whose field is missing, or holds a value the rule cannot
read (a string for a boolean rule, a non-number for a graded one), is an
:class:`~ragmeter.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, InvalidParameterError
from ..registry import canonical_name
from ..run_names import parse_name

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:>=\s*([-+]?(?:\d+\.?\d*|\.\d+)))?\s*$")
#: The expected form, as every parse error shows it.
FORM = "NAME=FIELD or NAME=FIELD>=K (e.g. politeness=polite, grounded_answer=correct>=4)"


def base_of(name: str) -> str:
    """The base metric of a name, lower-cased as the registry keys it
    (:func:`ragmeter.run_names.parse_name`): ``faithfulness(mode=direct)`` -> ``faithfulness``,
    ``nDCG@5`` -> ``ndcg``; a name that is not a metric name (``my metric``) is its own base, so it
    matches no metric's label rule or set."""
    parsed = parse_name(name.strip())
    return name.strip() if parsed is None else parsed[0]


@dataclass(frozen=True)
class LabelRule:
    """``labels.<field>`` as the label of a metric: boolean when ``at_least`` is None, else graded
    (binary label ``value >= at_least``; the value itself for Spearman's rho)."""

    field: str
    at_least: float | None = None

    @property
    def graded(self) -> bool:
        """True for a ``FIELD>=K`` rule."""
        return self.at_least is not None

    def __str__(self) -> str:
        return self.field if self.at_least is None else f"{self.field}>={self.at_least:g}"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be read by this rule, None when it can."""
        if self.graded:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return f"expected a number (graded rule {self}), got {value!r}"
        elif not isinstance(value, bool) and value not in (0, 1):
            return f"expected true or false (boolean rule {self}), got {value!r}"
        return None

    def binary(self, value: Any) -> int:
        """The 0/1 label of a (checked) value."""
        return int(value >= self.at_least) if self.at_least is not None else int(bool(value))


def parse_rule(text: Any, where: str = "--label") -> LabelRule:
    """A :class:`LabelRule` from ``FIELD`` or ``FIELD>=K`` (a LabelRule is returned as is).

    >>> parse_rule("correct>=4")
    LabelRule(field='correct', at_least=4.0)
    >>> str(parse_rule(" polite "))
    'polite'
    """
    if isinstance(text, LabelRule):
        return text
    m = _RULE.match(text) if isinstance(text, str) else None
    if m is None:
        raise InvalidParameterError(f"{where}: expected FIELD or FIELD>=K (a field of each row's 'labels' object, "
                                    f"K a number; {FORM}), got {text!r}")
    return LabelRule(m.group(1), None if m.group(2) is None else float(m.group(2)))


def parse_label_option(text: str) -> tuple[str, LabelRule]:
    """``(metric name, rule)`` of one ``--label NAME=RULE``; the name ends at the first ``=``
    outside parentheses, so ``faithfulness(mode=direct)=faithful`` works.

    >>> parse_label_option("faithfulness(mode=direct)=faithful")
    ('faithfulness(mode=direct)', LabelRule(field='faithful', at_least=None))
    """
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "=" and depth == 0:
            name, rule = text[:i].strip(), text[i + 1:]
            if name and rule.strip():
                return name, parse_rule(rule, f"--label {text!r}")
            break
    raise InvalidParameterError(f"--label: expected {FORM}, got {text!r}")


def resolve_rules(names: Sequence[str], labels: Mapping[str, Any] | None) -> dict[str, LabelRule]:
    """The rule per checked metric name from ``labels`` (metric name -> rule text or LabelRule):
    a key matches the name itself or, for a base name such as ``faithfulness``, every checked name
    with that base (``faithfulness(mode=direct)``); an exact key wins. A key matching no checked
    metric is an :class:`~ragmeter.errors.InvalidParameterError` (a misspelt name would otherwise be
    ignored)."""
    out: dict[str, LabelRule] = {}
    exact: set[str] = set()
    for key, text in (labels or {}).items():
        rule = parse_rule(text, f"labels[{key!r}]")
        canon = canonical_name(key)
        hits = [n for n in names if n == canon or base_of(n) == canon]
        if not hits:
            raise InvalidParameterError(f"labels: {key!r} is not among the checked metrics ({', '.join(names)}); "
                                        "add it to the metrics (--metrics)")
        for n in hits:
            if n == canon or n not in exact:
                out[n] = rule
            if n == canon:
                exact.add(n)
    return out


def row_lines(path: str | Path, n: int) -> list[int]:
    """The 1-based file line of each of the first ``n`` rows of a JSONL file (blank lines hold no
    row); the row number itself for other formats."""
    from ..io.readers import detect_format, open_binary

    if detect_format(str(path)) != "jsonl":
        return list(range(1, n + 1))
    lines: list[int] = []
    with open_binary(path) as fh:
        for i, raw in enumerate(fh, start=1):
            if len(lines) >= n:
                break
            if raw.strip():
                lines.append(i)
    return lines


def check_rule_labels(name: str, rule: LabelRule, path: str, labels: Sequence[Mapping[str, Any]],
                      lines: Sequence[int]) -> None:
    """Raise an :class:`~ragmeter.errors.InputError` naming the file, the line and the field at the
    first row whose ``labels`` lacks ``rule.field`` or holds a value the rule cannot read."""
    for lab, line in zip(labels, lines, strict=True):
        f = f"labels.{rule.field}"
        if rule.field not in lab:
            raise InputError(f"metric {name} needs {f} (its label rule: {rule}); present: "
                             f"{', '.join(sorted(lab)) or 'none'}", path=path, line=line, field=f)
        why = rule.problem(lab[rule.field])
        if why is not None:
            raise InputError(f"metric {name}: {why}", path=path, line=line, field=f)
