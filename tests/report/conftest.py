"""Fixtures for the report tests: run directories (built in ``kinds.py``), and a headless Chromium.

The browser is Debian's ``chromium`` driven by Playwright for Python (``pip install playwright``;
never ``playwright install``: it downloads a browser, which this machine cannot). When either is
missing the browser tests FAIL with the command that installs it: they are never skipped.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# the runs live in kinds.py (scripts/screenshots.py builds its pages with them too); the test
# modules import these names from here
from .kinds import N_SAMPLES as N_SAMPLES
from .kinds import XSS_ANSWER as XSS_ANSWER
from .kinds import XSS_CONTEXT as XSS_CONTEXT
from .kinds import XSS_QUERY as XSS_QUERY
from .kinds import XSS_REASON as XSS_REASON
from .kinds import faith_score as faith_score
from .kinds import ndcg_score as ndcg_score
from .kinds import sample_id as sample_id
from .kinds import write_rich_run

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
