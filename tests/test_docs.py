"""docs/metrics.md and the measure table of docs/trec.md are generated from the registry, docs/cli.md from
the commands' help: docs/cli.md must be what they generate now, and for the registry pages every section
and every row they hold must be what the registry generates now (a metric registered after the files were
generated may be absent from the reference, and its trec_eval measure may read ``-`` in the table)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ragmeter import list_metrics
from ragmeter.docs import main, render, render_cli, render_trec_table, trec_table_in, with_trec_table

DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
TREC_DOC = DOC.parent / "trec.md"
SECTION = re.compile(r"^### `([^`]+)`$", re.MULTILINE)


def test_metrics_reference_is_up_to_date():
    assert DOC.exists(), "run: python -m ragmeter.docs"
    text = DOC.read_text(encoding="utf-8")
    documented = SECTION.findall(text)
    registered = {s.name for s in list_metrics()}
    assert set(documented) <= registered, "docs/metrics.md documents a metric that is not registered"
    assert len(documented) >= 9
    assert text == render(documented), "docs/metrics.md is stale: run python -m ragmeter.docs"


def test_cli_reference_is_up_to_date():
    # rendered in a fresh process: other tests add options and backends to the CLI in this one
    text = (DOC.parent / "cli.md").read_text(encoding="utf-8")
    fresh = subprocess.run([sys.executable, "-c", "import sys; from ragmeter.docs import render_cli; "
                            "sys.stdout.write(render_cli())"], capture_output=True, text=True, check=True, timeout=120)
    assert text == fresh.stdout, "docs/cli.md is stale: run python -m ragmeter.docs"
    assert render_cli().startswith("# Command-line reference")
    for name in ("eval", "judge-check", "compare", "calibrate", "diagnose", "fuse", "report", "trec", "metrics"):
        assert f"## `ragmeter {name}`" in text and f"Usage: ragmeter {name} [OPTIONS]" in text


def test_reference_names_every_metric():
    text = render()
    assert SECTION.findall(text) == [s.name for s in list_metrics()]
    for spec in list_metrics():
        assert f"### `{spec.name}`" in text


def test_partial_reference_keeps_registry_order_and_drops_empty_categories():
    text = render(["mrr", "map"])
    assert SECTION.findall(text) == ["map", "mrr"]
    assert "## Retrieval metrics" in text and "## Generation metrics" not in text


def _stale_trec_rows(text: str) -> list[str]:
    """The rows of the measure table in ``text`` that differ from what the registry generates."""
    table, named = trec_table_in(text)
    want = render_trec_table(named).splitlines()
    have = table.splitlines()
    return [h for h, w in zip(have, want, strict=False) if h != w] + (["(row count)"] if len(have) != len(want) else [])


def test_trec_measure_table_is_up_to_date():
    text = TREC_DOC.read_text(encoding="utf-8")
    assert _stale_trec_rows(text) == [], "docs/trec.md's measure table is stale: run python -m ragmeter.docs"
    table, named = trec_table_in(text)
    assert len(table.splitlines()) == 2 + 39  # header, rule, one row per trec_eval measure
    assert {"map", "recip_rank", "P", "ndcg_cut", "bpref"} <= named


def test_a_stale_trec_table_is_caught():
    text = TREC_DOC.read_text(encoding="utf-8")
    wrong_metric = text.replace("| mean | `mrr` |", "| mean | `hit_rate` |")
    assert wrong_metric != text and _stale_trec_rows(wrong_metric) == [
        "| `recip_rank` | 1 / rank of the first relevant document; 0 when none | - | mean | `hit_rate` |"]
    wrong_formula = text.replace("| relevant in the top k / k |", "| relevant in the top k / R |")
    assert wrong_formula != text and len(_stale_trec_rows(wrong_formula)) == 1
    dropped = text.replace("| `set_map` | rr² / (ret · R) | - | mean | - |\n", "")
    assert dropped != text and _stale_trec_rows(dropped)


def test_a_trec_measure_of_a_metric_added_since_may_read_dash():
    # the table written before r_precision existed: its row had no ragmeter name; that is not stale
    text = TREC_DOC.read_text(encoding="utf-8")
    before = text.replace("| mean | `r_precision` |", "| mean | - |")
    assert before != text and _stale_trec_rows(before) == []


def test_trec_table_names_every_registered_trec_name():
    rows = {line.split(" | ")[0].strip("| `"): line for line in render_trec_table().splitlines()[2:]}
    specs = [s for s in list_metrics() if s.trec_name]
    assert len(specs) >= 7
    for spec in specs:
        assert f"`{spec.name}" in rows[spec.trec_name].rsplit(" | ", 1)[1], spec.name


def test_main_regenerates_the_table_and_keeps_the_text_around_it(tmp_path):
    text = TREC_DOC.read_text(encoding="utf-8")
    stale = text.replace("| mean | `mrr` |", "| mean | `hit_rate` |").replace(
        "| `unj` | documents in the top k without a judgement / k |", "| `unj` | edited by hand |")
    (tmp_path / "trec.md").write_text(stale, encoding="utf-8")
    assert main([str(tmp_path / "metrics.md")]) == 0
    assert (tmp_path / "trec.md").read_text(encoding="utf-8") == with_trec_table(text) == text
    assert (tmp_path / "metrics.md").read_text(encoding="utf-8") == render()


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_of_the_docs_reaches_a_file():
    root = DOC.parents[1]
    pages = [root / "README.md", root / "bench" / "results" / "README.md", *sorted(DOC.parent.rglob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(root)}: {target}")
    assert broken == [], "links to no file:\n" + "\n".join(broken)
