"""The worked examples of the docs run: every ``>>>`` example in README.md and docs/**/*.md is a
doctest, run in a fresh process per file (an example may register a metric) and compared with the
output the page shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if ">>> " in p.read_text("utf-8"))

RUN = """
import doctest, re, sys
text = re.sub(r"^```.*$", "", open(sys.argv[1], encoding="utf-8").read(), flags=re.M)  # a fence ends an example
test = doctest.DocTestParser().get_doctest(text, {"__name__": "__doc_example__"}, sys.argv[1], sys.argv[1], 0)
runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
runner.run(test)
result = runner.summarize(verbose=False)
sys.exit(1 if result.failed or not result.attempted else 0)
"""


def test_the_docs_hold_worked_examples():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"docs/generation.md", "docs/howto/python-metric.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_worked_example_runs_as_shown(page, tmp_path):
    proc = subprocess.run([sys.executable, "-c", RUN, str(page)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
