"""One transient HTTP 500 must not switch structured output off for the
whole run. Fallbacks are per request, a skipped richer format is tried again, and every fallback
shows on the judge line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner
from pydantic import BaseModel

from ragmeter.cli import main
from ragmeter.cli.eval_cmd import judge_status
from ragmeter.judges.backends.openai_compat import REPROBE_AFTER, STRIKES
from tests.metrics.generation.rules import judge_rule

from .fake_server import ChatCall, Reply


class Verdict(BaseModel):
    score: int
    reason: str


def ask_many(judge, n: int, prefix: str = "q") -> None:
    async def go():
        try:
            for i in range(n):
                await judge.judge(f"{prefix}{i}", Verdict)
        finally:
            await judge.aclose()

    asyncio.run(go())


def test_one_transient_500_falls_back_for_that_request_only(fake_llm, make_judge):
    # before: the first 500 moved the backend to json_object for every later request, silently
    seen: list[int] = []

    def rule(call: ChatCall) -> Reply:
        seen.append(call.index)
        if len(seen) == 1:
            return Reply.server_error(500, "internal error")
        return Reply.json({"score": 1, "reason": "x"})

    fake_llm.rule = rule
    judge = make_judge()
    ask_many(judge, 3)
    assert [e.response_format for e in fake_llm.log] == ["json_schema", "json_object", "json_schema", "json_schema"]
    s = judge.stats()
    assert s["format_fallbacks"] == 1 and s["format_fallback_paths"] == {"json_schema->json_object": 1}
    assert judge.backend.mode == "json_schema"


def test_persistent_bare_500_moves_down_then_retries_the_richer_format(fake_llm, make_judge):
    def rule(call: ChatCall) -> Reply:
        if call.response_format == "json_schema":
            return Reply.server_error(500, "internal error")
        return Reply.json({"score": 1, "reason": "x"})

    fake_llm.rule = rule
    judge = make_judge()
    ask_many(judge, STRIKES + 2)
    formats = [e.response_format for e in fake_llm.log]
    # the first STRIKES requests each try json_schema once, then requests start at json_object
    assert formats == ["json_schema", "json_object"] * STRIKES + ["json_object"] * 2
    assert judge.backend.mode == "json_object"
    fake_llm.clear_log()
    ask_many(judge, REPROBE_AFTER, prefix="later")
    formats = [e.response_format for e in fake_llm.log]
    assert formats.count("json_schema") == 1  # tried again once within REPROBE_AFTER requests
    fake_llm.rule = lambda call: Reply.json({"score": 1, "reason": "x"})  # the server recovered
    fake_llm.clear_log()
    ask_many(judge, 2 * REPROBE_AFTER + 2, prefix="recovered")
    assert judge.backend.mode == "json_schema" and fake_llm.log[-1].response_format == "json_schema"


def test_judge_line_shows_format_fallbacks():
    base = {"calls": 4, "cache_hits": 0, "errors": {}, "prompt_tokens": 10, "completion_tokens": 5, "cost": 0.0}
    assert "fallback" not in judge_status(base)
    line = judge_status({**base, "format_fallbacks": 2, "format_fallback_paths": {"json_schema->json_object": 2}})
    assert line.endswith(", 2 format fallbacks (json_schema->json_object 2)")


def test_cli_prints_the_fallback_on_the_judge_line(tmp_path: Path, fake_llm):
    seen: list[int] = []

    def rule(call: ChatCall) -> Reply | dict:
        seen.append(call.index)
        if len(seen) == 1:
            return Reply.server_error(500, "internal error")
        return judge_rule(call)

    fake_llm.rule = rule
    data = tmp_path / "rows.jsonl"
    row = {"id": "a", "query": "q?", "answer": "Paris is the capital.", "contexts": ["Paris is the capital."]}
    data.write_text(json.dumps(row) + "\n")
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "--judge", f"openai:m@{fake_llm.url}",
                                    "-o", str(tmp_path / "o"), "--no-report"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "1 format fallbacks (json_schema->json_object 1)" in " ".join(res.output.split())  # wrapped at 80
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["run"]["judge"]["format_fallbacks"] == 1
