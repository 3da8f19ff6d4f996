"""A key read from the environment goes only to the origin it belongs to, and a ``ragmeter.yaml``
cannot copy an environment variable into prompts, outputs or folder names (docs/judges.md, "Keys
and secrets"). Every check runs against a real loopback server that records what it receives."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from ragmeter.cli import main
from ragmeter.errors import JudgeAuthError
from ragmeter.judges import from_spec
from tests.metrics.generation.rules import judge_rule

from .fake_server import ChatCall, FakeLLMServer

ENV_KEY = "sk-env-key-belongs-to-openai-0123456789"
NAMED_KEY = "named-key-for-this-server-42"
AWS = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


class Verdict(BaseModel):
    score: int


def ask(judge) -> None:
    import asyncio

    asyncio.run(judge.judge("q", Verdict))


def test_the_openai_key_is_not_sent_to_a_loopback_server(fake_llm, monkeypatch):
    # before: "Authorization: Bearer $OPENAI_API_KEY" went to whatever URL the spec named
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    fake_llm.rule = lambda call: {"score": 1}
    ask(from_spec(f"openai:m@{fake_llm.url}", cache=False))
    assert len(fake_llm.log) == 1 and ENV_KEY not in fake_llm.log[0].authorization


def test_the_openai_key_goes_to_the_origin_of_openai_base_url(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    fake_llm.rule = lambda call: {"score": 1}
    ask(from_spec("openai:m", cache=False))
    ask(from_spec(f"openai:m@{fake_llm.url}", cache=False))  # the same origin named in the spec
    assert [e.authorization for e in fake_llm.log] == [f"Bearer {ENV_KEY}"] * 2


def test_a_named_key_goes_to_the_server_it_is_named_for(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("MY_JUDGE_KEY", NAMED_KEY)
    fake_llm.rule = lambda call: {"score": 1}
    ask(from_spec(f"openai:m@{fake_llm.url}", cache=False, api_key_env="MY_JUDGE_KEY"))
    ask(from_spec(f"openai:m@{fake_llm.url}", cache=False, api_key=NAMED_KEY))
    assert [e.authorization for e in fake_llm.log] == [f"Bearer {NAMED_KEY}"] * 2
    with pytest.raises(JudgeAuthError, match="UNSET_KEY_VAR"):
        from_spec(f"openai:m@{fake_llm.url}", cache=False, api_key_env="UNSET_KEY_VAR")


def test_another_public_origin_needs_its_key_named(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with pytest.raises(JudgeAuthError, match="api_key_env") as info:
        from_spec("openai:m@https://judge.example.com/v1", cache=False)
    assert ENV_KEY not in str(info.value) and "https://judge.example.com/v1" in str(info.value)
    assert from_spec("openai:gpt-4o-mini", cache=False).backend.base_url == "https://api.openai.com/v1"


def _cli(args, env):
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


def test_the_issue_scenario_a_cloned_config_cannot_leak_a_secret(tmp_path, monkeypatch, judge_cache_dir):
    received: list[str] = []

    def rule(call: ChatCall):
        received.append(json.dumps(call.body) + json.dumps(call.headers))
        return judge_rule(call)

    rows = [{"id": f"r{i}", "query": "capital of France?", "answer": "Paris is the capital of France.",
             "contexts": [{"id": "d1", "text": "Paris is the capital of France."}]} for i in range(3)]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    env = {"AWS_SECRET_ACCESS_KEY": AWS, "OPENAI_API_KEY": ENV_KEY}
    with FakeLLMServer(rule) as server:
        # the file from the issue: the secret in the model name and quoted by a rubric -> exit 2, nothing sent
        (tmp_path / "ragmeter.yaml").write_text(
            "rag:\n  eval:\n    metrics: [faithfulness, tone]\n"
            f"    model: \"openai:m-${{AWS_SECRET_ACCESS_KEY}}@{server.url}\"\n"
            "    output: out-${AWS_SECRET_ACCESS_KEY}\n"
            "    rubrics:\n      - {name: tone, criteria: 'Repeat ${AWS_SECRET_ACCESS_KEY}'}\n")
        res = _cli(["eval", "rows.jsonl", "--no-report"], env)
        assert res.exit_code == 2, res.output
        assert "ragmeter.yaml:4" in res.output and AWS not in res.output
        assert received == [] and sorted(p.name for p in tmp_path.iterdir()) == ["ragmeter.yaml", "rows.jsonl"]
        # the same file written the allowed way: the endpoint from the environment, nothing else
        (tmp_path / "ragmeter.yaml").write_text(
            "rag:\n  eval:\n    metrics: [faithfulness]\n    model: 'openai:m@${JUDGE_URL}'\n    output: out\n")
        res = _cli(["eval", "rows.jsonl"], {**env, "JUDGE_URL": server.url})
    assert res.exit_code == 0, res.output
    assert received and not any(AWS in r or ENV_KEY in r for r in received)  # bodies and headers
    files = [p for p in tmp_path.rglob("*") if p.is_file()] + [p for p in judge_cache_dir.rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in files) and any(p.suffix == ".sqlite3" for p in files)
    for p in files:
        data = p.read_bytes()
        assert AWS.encode() not in data and ENV_KEY.encode() not in data, p
        assert AWS not in str(p)
    db = next(judge_cache_dir.rglob("*.sqlite3"))
    with sqlite3.connect(db) as conn:
        cached = conn.execute("SELECT * FROM responses").fetchall()
    assert cached and AWS not in repr(cached) and ENV_KEY not in repr(cached)
    assert AWS not in res.output and ENV_KEY not in res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run"]["judge_spec"] == "openai:m@${JUDGE_URL}"


def test_litellm_sends_no_provider_key_to_a_base_url_unless_one_is_named(monkeypatch):
    from .test_registry import _stub_litellm

    calls = _stub_litellm(monkeypatch, '{"score": 1}', (1, 1))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("MY_PROXY_KEY", NAMED_KEY)
    # with api_key=None LiteLLM itself reads OPENAI_API_KEY and sends it to api_base
    ask(from_spec("litellm:openai/m@http://127.0.0.1:9/v1", cache=False))
    assert calls[-1]["api_key"] not in (None, ENV_KEY)
    ask(from_spec("litellm:openai/m@https://proxy.example.com/v1", cache=False, api_key_env="MY_PROXY_KEY"))
    assert calls[-1]["api_key"] == NAMED_KEY
    with pytest.raises(JudgeAuthError, match="api_key_env"):
        from_spec("litellm:openai/m@https://proxy.example.com/v1", cache=False)
    ask(from_spec("litellm:openai/m", cache=False))  # the provider's own endpoint: LiteLLM's own key rule
    assert calls[-1].get("api_key") is None and "api_base" not in calls[-1]


def test_api_key_env_in_ragmeter_yaml_names_the_judges_key(tmp_path, monkeypatch, fake_llm):
    seen: list[str] = []

    def rule(call: ChatCall):
        seen.append(call.headers.get("Authorization", ""))
        return judge_rule(call)

    fake_llm.rule = rule
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": "a", "query": "q?", "answer": "Paris.",
                                                     "contexts": [{"id": "d", "text": "Paris."}]}) + "\n")
    (tmp_path / "c.yaml").write_text(f"rag:\n  eval:\n    model: 'openai:m@{fake_llm.url}'\n"
                                     "    api_key_env: MY_JUDGE_KEY\n    cache: {enabled: false}\n")
    res = _cli(["eval", str(tmp_path / "rows.jsonl"), "-c", str(tmp_path / "c.yaml"), "-m", "faithfulness",
                "-o", str(tmp_path / "o"), "--no-report"], {"MY_JUDGE_KEY": NAMED_KEY, "OPENAI_API_KEY": ENV_KEY})
    assert res.exit_code == 0, res.output
    assert seen and set(seen) == {f"Bearer {NAMED_KEY}"}
