"""docs/metrics.md is generated from the registry: every section it holds must be what the registry
generates for that metric now (a metric registered after the file was generated may be absent from it)."""

from __future__ import annotations

import re
from pathlib import Path

from ragmeter import list_metrics
from ragmeter.docs import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
SECTION = re.compile(r"^### `([^`]+)`$", re.MULTILINE)


def test_metrics_reference_is_up_to_date():
    assert DOC.exists(), "run: python -m ragmeter.docs"
    text = DOC.read_text(encoding="utf-8")
    documented = SECTION.findall(text)
    registered = {s.name for s in list_metrics()}
    assert set(documented) <= registered, "docs/metrics.md documents a metric that is not registered"
    assert len(documented) >= 9
    assert text == render(documented), "docs/metrics.md is stale: run python -m ragmeter.docs"


def test_reference_names_every_metric():
    text = render()
    assert SECTION.findall(text) == [s.name for s in list_metrics()]
    for spec in list_metrics():
        assert f"### `{spec.name}`" in text


def test_partial_reference_keeps_registry_order_and_drops_empty_categories():
    text = render(["mrr", "map"])
    assert SECTION.findall(text) == ["map", "mrr"]
    assert "## Retrieval metrics" in text and "## Generation metrics" not in text
