"""The judge counts calls asked and calls finished apart, so a progress line on a slow judge shows
the work done, not the work queued (``Judge.stats()['finished']``, ``judge_status``)."""

from __future__ import annotations

import asyncio

import pytest

from ragmeter.cli.eval_cmd import judge_status
from ragmeter.errors import JudgeError

from .fake_server import FakeLLMServer, Reply


def test_calls_in_flight_are_asked_but_not_finished(make_judge, fake_llm: FakeLLMServer) -> None:
    fake_llm.latency = 0.4
    judge = make_judge(concurrency=4, adaptive=False)

    async def main() -> tuple[dict, dict]:
        tasks = [asyncio.create_task(judge.complete([{"role": "user", "content": f"q{i}"}], tag="m"))
                 for i in range(4)]
        await asyncio.sleep(0.15)  # every request sent, none answered (each takes 0.4 s)
        during = judge.stats()
        await asyncio.gather(*tasks)
        return during, judge.stats()

    during, after = asyncio.run(main())
    assert during["calls"] == 4 and during["finished"] == 0
    assert judge_status(during).startswith("judge: 0 of 4 calls finished, 0 cached, 0 errors")
    assert after["calls"] == after["finished"] == 4
    assert after["by_tag"]["m"]["finished"] == 4
    assert judge_status(after).startswith("judge: 4 calls, 0 cached, 0 errors")


def test_a_failed_call_is_finished_and_counted_as_an_error(make_judge, fake_llm: FakeLLMServer) -> None:
    fake_llm.rule = lambda call: Reply.server_error(400, "bad request")
    judge = make_judge(max_retries=0)
    with pytest.raises(JudgeError):
        asyncio.run(judge.complete([{"role": "user", "content": "q"}], tag="m"))
    stats = judge.stats()
    assert stats["calls"] == stats["finished"] == 1
    assert sum(stats["errors"].values()) == 1
    assert judge_status(stats).startswith("judge: 1 calls, 0 cached, 1 errors")


def test_status_line_of_stats_without_the_finished_count() -> None:
    # a stats dict written before the counter existed (or by another engine) reads as all finished
    assert judge_status({"calls": 7, "cache_hits": 2, "cost": None}) == (
        "judge: 7 calls, 2 cached, 0 errors, 0 tokens, cost unknown")
    assert judge_status({"calls": 1_200, "finished": 1_150, "cost": 0.5}) == (
        "judge: 1,150 of 1,200 calls finished, 0 cached, 0 errors, 0 tokens, $0.5000")
