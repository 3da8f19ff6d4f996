"""Judge test fixtures: see :mod:`tests.judges.fixtures` (importable by other test packages)."""

from .fixtures import _fake_llm_session, fake_llm, judge_cache_dir, make_judge

__all__ = ["_fake_llm_session", "fake_llm", "judge_cache_dir", "make_judge"]
