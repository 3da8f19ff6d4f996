"""docs/metrics.md is generated from the registry and must be up to date."""

from __future__ import annotations

from pathlib import Path

from ragmeter import list_metrics
from ragmeter.docs import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"


def test_metrics_reference_is_up_to_date():
    assert DOC.exists(), "run: python -m ragmeter.docs"
    assert DOC.read_text(encoding="utf-8") == render(), "docs/metrics.md is stale: run python -m ragmeter.docs"


def test_reference_names_every_metric():
    text = render()
    for spec in list_metrics():
        assert f"### `{spec.name}`" in text
