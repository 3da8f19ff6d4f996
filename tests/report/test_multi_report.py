"""The report of three runs compared (``ragmeter report A B C``), on values counted by hand.

Three runs of 7 samples on ``mrr``: A scores 0.1, 0.2, ..., 0.7 (mean 0.4); B is A + 0.1 on every
sample (mean 0.5); C is A + 0.2 (mean 0.6), so C is best. Every pair's 7 differences are equal and
positive, so the exact sign-flip test's two-sided p is 2 / 2^7 = 0.015625 for each of the 3 pairs;
Holm over the 3: 3 x 0.015625 = 0.046875 for the smallest, and the others are raised to it
(monotone), all below 0.05: B better than A, C better than A, C better than B.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.report import build_report
from ragmeter.report._data import load_run
from ragmeter.report._multi import pairwise_tests
from ragmeter.results import RunWriter
from ragmeter.types import MetricResult


def _run(path: Path, shift: float) -> Path:
    w = RunWriter(["mrr"], out_dir=path)
    for i in range(7):
        w.add(f"q{i}", {"mrr": MetricResult(name="mrr", score=round(0.1 * (i + 1) + shift, 6), version="1")})
    w.finish({"ragmeter_version": "0.1.0"})
    return path


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("multi")
    return [_run(tmp / "A", 0.0), _run(tmp / "B", 0.1), _run(tmp / "C", 0.2)]


def test_pairwise_tests_by_hand(three: list[Path]) -> None:
    runs = [load_run(p).to_result() for p in three]
    rows = pairwise_tests(runs, ["A", "B", "C"], ["mrr"])
    assert [(r["a"], r["b"]) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [r["diff"] for r in rows] == pytest.approx([0.1, 0.2, 0.1])
    assert [r["p_value"] for r in rows] == pytest.approx([0.015625] * 3)
    assert [r["p_adjusted"] for r in rows] == pytest.approx([0.046875] * 3)
    assert [r["verdict"] for r in rows] == ["B better", "C better", "C better"]


def test_three_run_page(three: list[Path]) -> None:
    page = build_report(three[2], compare_with=three[:2], diagnose=False)
    section = page[page.index('<section id="multi-comparison">'):]
    section = section[:section.index("</section>")]
    text = html.unescape(re.sub(r"<[^>]+>", " ", section))
    assert "Comparison of 3 runs" in text
    means = re.search(r"<tr><th scope=\"row\">mrr</th>(.*?)</tr>", section).group(1)  # type: ignore[union-attr]
    cells = re.findall(r"<td[^>]*>(\d\.\d+)", means)
    assert cells == ["0.400", "0.500", "0.600"]
    assert means.count('class="good"') == 1 and '<td class="good">0.600' in means
    assert re.search(r'<td class="best">C</td>', means)
    assert text.count("0.0469") == 3 and text.count("0.0156") == 3  # p adjusted, p raw
    assert "B − A" in text and "C − A" in text and "C − B" in text
    assert "<title>ragmeter: A vs B vs C</title>" in page


def test_cli_report_takes_three_runs(three: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", *map(str, three), "-o", str(out), "--no-diagnose"])
    assert res.exit_code == 0, res.output
    assert 'id="multi-comparison"' in out.read_text(encoding="utf-8")
