"""Generation-metric tests reuse the judge tests' loopback OpenAI-compatible server and fixtures."""

from tests.judges.conftest import _fake_llm_session, fake_llm, judge_cache_dir, make_judge  # noqa: F401
