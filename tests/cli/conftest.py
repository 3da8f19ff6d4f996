"""CLI tests reuse the judge tests' loopback OpenAI-compatible server."""

from tests.judges.conftest import _fake_llm_session, fake_llm, judge_cache_dir  # noqa: F401
