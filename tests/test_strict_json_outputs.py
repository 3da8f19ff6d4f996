"""Every file ``ragmeter eval`` writes parses with a strict JSON parser, whatever the values: a
metric that returns NaN, infinities, huge or tiny numbers, and rows whose ids and fields hold
hostile text. Strict: ``NaN``, ``Infinity`` and ``-Infinity`` are refused (they are not JSON)."""

from __future__ import annotations

import html
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragmeter import MetricResult, list_metrics, registry
from ragmeter.cli import main
from ragmeter.registry import MetricSpec, register

#: what a metric returns, by the row's metadata "v"
VALUES = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "max": 1.7976931348623157e308,
          "tiny": 5e-324, "negzero": -0.0, "half": 0.5}
WEIRD = 'q"</script><!--\u2028\x00\x1b[31m'


def _strict_loads(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


class _Hostile:
    def __init__(self, spec: MetricSpec, name: Any) -> None:
        self.spec, self.name, self.version = spec, str(name), "1"

    def evaluate(self, sample: Any) -> MetricResult:
        v = VALUES[sample.metadata["v"]]
        details = {"raw": v, "list": [math.nan, math.inf, -math.inf, 1e308], "big": 10**400, "text": WEIRD,
                   "nested": {"x": math.nan}}
        return MetricResult(name=self.name, score=v, reason=f"value {v} {WEIRD}", details=details,
                            version=self.version)

    async def aevaluate(self, sample: Any) -> MetricResult:
        return self.evaluate(sample)


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> None:
    list_metrics()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    box: list[MetricSpec] = []
    spec = MetricSpec(name="hostile", summary="", formula="", edge_cases=(), category="generation",
                      factory=lambda n, j, e: _Hostile(box[0], n), requires=("query",))
    box.append(spec)
    register(spec)


def _embedded_json(page: str) -> list[Any]:
    """Every JSON block the report embeds in ``<script type="application/json">`` elements."""
    blocks = re.findall(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert blocks, "the report embeds its data as JSON"
    return [_strict_loads(html.unescape(b) if b.lstrip().startswith("&") else b) for b in blocks]


def test_every_output_of_eval_is_strict_json_on_hostile_values(hostile, tmp_path: Path) -> None:
    rows = [{"id": f"{WEIRD}{k}", "query": WEIRD, "answer": WEIRD, "reference": "1e999",
             "metadata": {"v": k, "big": 10**300, "huge": 1.7976931348623157e308}} for k in VALUES]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "hostile", "-m", "token_f1", "-o", str(out),
                                    "--fail-under", "hostile=0.1", "--junit", str(tmp_path / "j.xml"),
                                    "--markdown", str(tmp_path / "s.md"), "--json"])
    assert res.exit_code in (0, 1, 3), res.output
    assert "Traceback" not in res.output
    lines = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")[:-1]  # \u2028 is no line end
    records = [_strict_loads(line) for line in lines]
    assert len(records) == len(VALUES)
    by_v = {r["id"][len(WEIRD):]: r["metrics"]["hostile"] for r in records}
    for k in ("nan", "inf", "-inf"):  # never a number: an error on that sample
        assert by_v[k]["score"] is None and by_v[k]["error"] is not None, by_v[k]
    assert by_v["max"]["score"] == 1.7976931348623157e308 and by_v["half"]["score"] == 0.5
    summary = _strict_loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["hostile"]["errors"] == 3 and summary["metrics"]["hostile"]["n"] == 4
    _strict_loads(res.stdout)  # --json: summary.json on stdout
    _embedded_json((out / "report.html").read_text(encoding="utf-8"))
    junit = (tmp_path / "j.xml").read_text(encoding="utf-8")
    ET.fromstring(junit)
    md = (tmp_path / "s.md").read_text(encoding="utf-8")
    for text in (junit, md):
        assert not re.search(r"\b(nan|NaN|Infinity)\b", text), text
