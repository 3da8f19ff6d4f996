"""judges/ knows no metric by name: what judge-check needs of a metric (label rule, unit, bundled
set, hard value, graded finals, position profile) is declared on the metric's spec
(:class:`ragmeter.registry.LabelCheck`), so a metric added elsewhere is checked the same way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import ragmeter.judges
from ragmeter import registry
from ragmeter.judges import check
from ragmeter.judges.label_rules import LabelRule
from ragmeter.names import parse_python
from ragmeter.registry import LabelCheck, MetricSpec, list_metrics, register

JUDGES = Path(ragmeter.judges.__file__).parent


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant of a module's code (docstrings left out: they may cite a metric)."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def _names_a_metric(text: str, names: set[str]) -> bool:
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*\))?\s*(@\d+)?\s*", text)
    return m is not None and m.group(1).lower() in names


def test_the_scan_finds_a_metric_name():
    names = {"faithfulness", "ndcg"}
    tree = parse_python('"""faithfulness in a docstring is fine"""\nX = "faithfulness(mode=direct)"\nY = "nDCG@5"\n'
                     'Z = "faithful"\n')
    found = [t for _, t in _code_strings(tree) if _names_a_metric(t, names)]
    assert found == ["faithfulness(mode=direct)", "nDCG@5"]


def test_no_module_of_judges_names_a_metric():
    names = {k.lower() for s in list_metrics() for k in (s.name, *s.aliases)}
    hits = [f"{path.relative_to(JUDGES)}:{line}: {text!r}" for path in sorted(JUDGES.rglob("*.py"))
            for line, text in _code_strings(parse_python(path.read_text(encoding="utf-8")))
            if _names_a_metric(text, names)]
    assert not hits, "judges/ names metrics (declare the fact on the metric's spec instead):\n" + "\n".join(hits)


@pytest.fixture
def probe_metric(monkeypatch):
    """A metric outside ragmeter's own, with its judge-check facts on its spec only."""
    list_metrics()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    spec = MetricSpec(
        name="probe_check", summary="probe", formula="1", edge_cases=(), category="generation",
        factory=lambda n, j, e: None, needs_judge=True, requires=("answer",),
        check=LabelCheck(label="good", at_least=3.0, data="judge_validation.jsonl",
                         hard=lambda d: d.get("hard"), positions=lambda d, lab: [(1.0, None), (0.0, 1.0)]))
    register(spec)
    return spec


def test_a_metric_declared_elsewhere_is_checked_by_its_spec(probe_metric):
    assert check.builtin_rule("probe_check") == LabelRule("good", 3.0)
    assert "probe_check" in check.bundled_sets() and "probe_check" not in check.default_metrics()
    assert check.hard_value("probe_check", {"hard": 0.25}) == 0.25
    records = [{"id": str(i), "metrics": {"probe_check": {"score": s, "error": None, "details": {"hard": h}}}}
               for i, (s, h) in enumerate([(0.9, 1.0), (0.2, 0.0), (0.6, 0.0)])]
    labels = [{"good": 5}, {"good": 1}, {"good": 4}]
    p = check.labelled_pairs("probe_check", records, labels)
    # by hand: labels good >= 3 -> [1, 0, 1]; hard values as given; graded pairs (score, good)
    assert p.labels == [1, 0, 1] and p.hard == [1.0, 0.0, 0.0] and p.graded == [(0.9, 5.0), (0.2, 1.0), (0.6, 4.0)]
    prof = check.position_profile(records, labels)["probe_check"]
    assert [(r["position"], r["n"], r["judged_yes"], r["human_yes"]) for r in prof] == [
        ("1", 3, 1.0, None), ("2", 3, 0.0, 1.0), ("3+", 0, None, None)]
    rows = {r["metric"]: r for r in check.separation(records, labels)}
    assert rows["probe_check"]["auroc"] == 1.0  # 0.9 and 0.6 above 0.2
    assert rows["probe_check [hard]"]["auroc"] == 0.75  # hard 1.0, 0.0 vs 0.0: (1 + 1/2) / 2
