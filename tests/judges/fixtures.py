"""Fixtures for judge tests, importable by other test packages (generation metrics).

Use them from another ``conftest.py`` with::

    from tests.judges.fixtures import _fake_llm_session, fake_llm, judge_cache_dir, make_judge  # noqa: F401

``fake_llm`` is a running :class:`~tests.judges.fake_server.FakeLLMServer` (its log cleared and its
rule reset for each test); ``judge_cache_dir`` points ``RAGMETER_CACHE_DIR`` at a temp dir so
no test touches the user's cache; ``make_judge`` builds an ``openai`` judge against the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragmeter.judges import Judge, from_spec

from .fake_server import FakeLLMServer, default_rule


@pytest.fixture(scope="session")
def _fake_llm_session() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(_fake_llm_session: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The loopback server, with a clean log, the default rule and no latency."""
    server = _fake_llm_session
    server.rule, server.latency = default_rule, 0.0
    server.clear_log()
    yield server
    server.rule, server.latency = default_rule, 0.0


@pytest.fixture(autouse=True)
def judge_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A private cache dir for every test (``RAGMETER_CACHE_DIR``); no real key in the env."""
    path = tmp_path_factory.mktemp("judge-cache")
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return path


@pytest.fixture
def make_judge(fake_llm: FakeLLMServer) -> Iterator[Callable[..., Judge]]:
    """``make_judge(**options)``: an ``openai`` judge against ``fake_llm`` (cache off unless asked)."""
    made: list[Judge] = []

    def make(**options: Any) -> Judge:
        options.setdefault("cache", False)
        options.setdefault("timeout", 5.0)
        options.setdefault("backoff", 0.01)
        judge = from_spec(f"openai:fake-model@{fake_llm.url}", **options)
        made.append(judge)
        return judge

    yield make
    for j in made:
        j.close()
