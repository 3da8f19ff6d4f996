"""JudgeConfig / EmbedderConfig: one picklable value per backend, built once, built from anywhere."""

from __future__ import annotations

import inspect
import pickle

import pytest

from ragmeter.backend_config import EmbedderConfig, JudgeConfig
from ragmeter.judges import JUDGE_OPTIONS, Judge


def test_every_judge_option_is_a_declared_field() -> None:
    # a Judge keyword option missing here could not be configured from the CLI nor reach Ray workers
    params = {p for p in inspect.signature(Judge.__init__).parameters if p not in ("self", "backend")}
    assert params <= JudgeConfig.judge_option_names() == JUDGE_OPTIONS
    assert "adaptive" in JUDGE_OPTIONS  # the adaptive-concurrency option, declared ahead of its branch


def test_options_split_into_judge_fields_and_backend_options() -> None:
    c = JudgeConfig.from_options("openai:m@http://127.0.0.1:9/v1", concurrency=3, timeout=2.5, api_key="sk-secret",
                                 structured_output=False)
    assert c.concurrency == 3 and c.timeout == 2.5 and c.rpm is None
    assert dict(c.backend) == {"api_key": "sk-secret", "structured_output": False}
    assert c.judge_options() == {"concurrency": 3, "timeout": 2.5}
    assert "sk-secret" not in repr(c) and "***" in repr(c)
    assert pickle.loads(pickle.dumps(c)) == c
    with pytest.raises(AttributeError):
        c.concurrency = 4  # type: ignore[misc]  # frozen


def test_build_gives_a_judge_with_those_options() -> None:
    c = JudgeConfig("openai:m@http://127.0.0.1:9/v1", concurrency=2, max_retries=0, cache=False,
                    backend={"api_key": "x"})
    judge = c.build()
    try:
        assert isinstance(judge, Judge) and judge.concurrency == 2
    finally:
        judge.close()


def test_cache_true_is_resolved_to_this_machines_dir(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
    assert JudgeConfig("openai:m").with_cache_dir().cache == str(tmp_path)
    assert JudgeConfig("openai:m", cache=False).with_cache_dir().cache is False


def test_embedder_config_is_picklable() -> None:
    c = EmbedderConfig("st:all-MiniLM-L6-v2", {"cache": False})
    assert pickle.loads(pickle.dumps(c)) == c
