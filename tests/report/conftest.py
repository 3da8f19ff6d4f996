"""Fixtures for the report tests: run directories written with the real RunWriter, and a headless Chromium.

The browser is Debian's ``chromium`` driven by Playwright for Python (``pip install playwright``;
never ``playwright install``: it downloads a browser, which this machine cannot). When either is
missing the browser tests FAIL with the command that installs it: they are never skipped.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragmeter.results import RunWriter
from ragmeter.types import ErrorInfo, MetricResult

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
INSTALL_HINT = (
    "the report's browser tests need Debian's Chromium and Playwright for Python: run\n"
    "  apt-get update && apt-get install -y chromium chromium-driver\n"
    "  pip install playwright   # into the test virtualenv; do NOT run `playwright install`\n"
    "or point RAGMETER_CHROMIUM at a Chromium binary"
)

XSS_ANSWER = "Paris <script>window.__pwned = 1; document.title = 'pwned'</script>"
XSS_CONTEXT = 'Paris is the capital. <img src=x onerror="window.__pwned = 2; document.title = \'pwned\'">'
XSS_QUERY = "</script><script>window.__pwned = 3</script> capital of France?"
XSS_REASON = "<b>bold</b> \u2028 line separator <!-- comment"
N_SAMPLES = 150


def ndcg_score(i: int) -> float | None:
    """The ndcg@5 score of sample ``i`` in the rich run (None: undefined every 13th sample)."""
    return None if i % 13 == 5 else round((i * 37 % 101) / 100, 2)


def faith_score(i: int) -> float | None:
    """The faithfulness score of sample ``i`` (None: errored every 17th sample)."""
    return None if i % 17 == 3 else round((i * 53 % 97) / 96, 3)


def sample_id(i: int) -> str:
    """The id of sample ``i`` (sample 7 is the hostile one)."""
    return "xss" if i == 7 else f"s{i:03d}"


def write_rich_run(out: Path, *, shift: float = 0.0) -> tuple[Path, Path]:
    """A run of :data:`N_SAMPLES` samples with two metrics, errors, undefined scores, claims and XSS texts.

    Returns ``(run_dir, data_file)``. ``shift`` moves every ndcg@5 score (for a comparison run).
    """
    run_dir, data = out / "run", out / "data.jsonl"
    w = RunWriter(["ndcg@5", "faithfulness"], out_dir=run_dir)
    rows: list[dict[str, Any]] = []
    for i in range(N_SAMPLES):
        sid = sample_id(i)
        contexts = [{"id": f"{sid}-c{k}", "text": f"context {k} of {sid}"} for k in range(1, 4)]
        row: dict[str, Any] = {"id": sid, "query": f"question number {i}", "answer": f"answer {i}",
                               "contexts": contexts, "reference": f"reference {i}", "relevant": [f"{sid}-c2"]}
        if i == 7:
            row.update(query=XSS_QUERY, answer=XSS_ANSWER)
            contexts[1]["text"] = XSS_CONTEXT
        rows.append(row)
        n = ndcg_score(i)
        if n is not None:
            n = min(1.0, max(0.0, n + shift))
        ndcg = MetricResult(
            name="ndcg@5", score=n, version="1",
            reason="undefined: no labelled relevant chunks" if n is None else "relevant at rank(s) [2] of 3 retrieved",
            details={"relevance_from": "labels", "relevant_ranks": [2], "retrieved": 3,
                     "matched_by": [None, "id", None]},
        )
        f = faith_score(i)
        if f is None:
            faith = MetricResult(name="faithfulness", score=None, version="2", reason="error: judge timed out",
                                 error=ErrorInfo(type="JudgeTimeout", message="no answer within 30 s"))
        else:
            faith = MetricResult(
                name="faithfulness", score=f, version="2",
                reason=XSS_REASON if i == 7 else "2 of 3 claims supported",
                details={"claims": [
                    {"claim": "Paris is the capital" if i != 7 else "<script>window.__pwned=4</script>",
                     "verdict": "supported"},
                    {"claim": "It has 2 million people", "verdict": "supported"},
                    {"claim": "It is in Spain", "verdict": "unsupported"},
                ]},
            )
        w.add(sid, {"ndcg@5": ndcg, "faithfulness": faith})
    w.finish({
        "ragmeter_version": "0.1.0",
        "metrics": {"ndcg@5": {"version": "1"}, "faithfulness": {"version": "2"}},
        "started": "2026-11-29T12:00:00Z",
        "dataset": "tiny-qa <script>",
        "judge": {"model": "openai:gpt-4o-mini", "temperature": 0},
        "calls": 140, "cache_hits": 10, "tokens": 51234, "cost": 0.0123,
        "diagnosis": [{"severity": "warning", "title": "Low recall", "message": "<i>contexts</i> miss answers"}],
    })
    with open(data, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    # the summary gains a CI the way the stats module will write it
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["metrics"]["ndcg@5"]["ci"] = [0.41, 0.55]
    summary["metrics"]["ndcg@5"]["ci_method"] = "bootstrap"
    summary_path.write_text(json.dumps(summary))
    return run_dir, data


@pytest.fixture(scope="session")
def rich_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The rich run directory and its data file."""
    return write_rich_run(tmp_path_factory.mktemp("rich"))


@pytest.fixture(scope="session")
def baseline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A baseline for :func:`rich_run`: every ndcg@5 score 0.1 higher (so the candidate is worse)."""
    return write_rich_run(tmp_path_factory.mktemp("base"), shift=0.1)[0]


def chromium_path() -> str:
    """The Chromium binary to drive, or a test failure that says how to install it."""
    path = os.environ.get("RAGMETER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).is_file():
        pytest.fail(f"Chromium not found at {path}: {INSTALL_HINT}", pytrace=False)
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (Playwright, Debian's binary) for one test module.

    Module scope, not session: while Playwright's sync API is active the thread has a running
    event loop, so a later test elsewhere that calls ``asyncio.run`` would fail.
    """
    exe = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"Playwright for Python is not installed: {INSTALL_HINT}", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class PageProbe:
    """A page opened on a report file, with its console errors, page errors and blocked requests recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("html[data-ready='1']", timeout=15_000)

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "warning"):
            self.problems.append(f"{msg.type}: {msg.text}")

    def close(self) -> None:
        """Close the page's context."""
        self.context.close()


@pytest.fixture
def open_report(browser: Any) -> Iterator[Any]:
    """``open_report(path) -> PageProbe``; every page is closed at the end of the test."""
    probes: list[PageProbe] = []

    def _open(path: Path) -> PageProbe:
        probe = PageProbe(browser, path)
        probes.append(probe)
        return probe

    yield _open
    for probe in probes:
        probe.close()
