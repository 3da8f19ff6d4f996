"""A judge that hangs, throttles forever or dies mid-run stops the run: after ``unreachable_after``
failed requests in a row (default 6) with no reply of another kind in between, the judge is
unreachable whether or not it answered before: finished rows are written, ``summary.json`` is
``aborted``, one line names the cause and the masked URL, exit 3. Every scenario runs against a
real loopback server, and bounds the requests it received (never the wall time)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from ragmeter.cli import main
from ragmeter.errors import (
    InvalidParameterError,
    JudgeConnectionError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
    JudgeUnreachable,
)
from ragmeter.judges import Judge, from_spec

from .fake_server import FakeLLMServer, Reply
from .test_unreachable import _backend, _dying_server, closed_port, write_rows

#: the default budget, written here as a number: the tests bound the server's requests by it
N = 6
#: the budget the slower scenarios set in ragmeter.yaml (each counted failure pauses 0.5, 1, 2... s)
SMALL = 3


class Verdict(BaseModel):
    score: int


def run_eval(data: Path, url: str, out: Path, *flags: str, budget: int | None = None):
    if budget is not None:
        (data.parent / "c.yaml").write_text(f"rag:\n  eval:\n    unreachable_after: {budget}\n")
        flags = (*flags, "-c", str(data.parent / "c.yaml"))
    return CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness(mode=direct)", "-m", "mrr", "--judge",
                                     f"openai:m@{url}", "-o", str(out), "--no-report", "--no-cache", *flags],
                              catch_exceptions=False)


def check_stopped(res, out: Path, url: str, cause: str, rows: int) -> dict:
    assert res.exit_code == 3, res.output
    lines = [ln for ln in res.output.splitlines() if "unreachable" in ln]
    assert len(lines) == 1, res.output
    assert url in lines[0] and cause in lines[0] and "openai:m" in lines[0], lines[0]
    written = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    # the rows up to the first that recorded the judge unreachable are kept, in input order; later
    # rows are not written (the run driver's rule, the same on every engine)
    assert 1 <= len(written) <= rows
    assert [r["id"] for r in written] == [f"r{i}" for i in range(len(written))]
    assert all(r["metrics"]["mrr"]["score"] == 1.0 for r in written)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["aborted"]["type"] == "JudgeUnreachable"
    return summary


def test_connection_refused_is_reported_as_refused_with_the_backend_named():
    # before: "*** judge: APITimeoutError: Request timed out." (the placeholder key was
    # masked as a secret, and the SDK reports a refused connection as a timeout)
    judge = from_spec(f"openai:m@http://127.0.0.1:{closed_port()}/v1", cache=False, max_retries=0)
    with pytest.raises(JudgeConnectionError) as info:
        asyncio.run(judge.judge("q", Verdict))
    text = str(info.value)
    assert text.startswith("openai judge: connection refused"), text
    assert "Timeout" not in text and "timed out" not in text and "***" not in text


def test_a_hanging_judge_stops_the_run(tmp_path):
    # before: every row waited for its 6 attempts (148 s for 2 rows at --judge-timeout 2); 72 requests here
    with FakeLLMServer(lambda call: Reply.hanging(60)) as server:
        data = write_rows(tmp_path / "rows.jsonl", 12)
        res = run_eval(data, server.url, tmp_path / "o", "--judge-timeout", "0.3", "--concurrency", "1")
        check_stopped(res, tmp_path / "o", server.url, "JudgeTimeout", 12)
        assert len(server.log) <= N


def test_a_judge_throttling_forever_stops_the_run(tmp_path):
    # before: 12 rows x 6 attempts, each honouring Retry-After, then an error per row, not aborted
    with FakeLLMServer(lambda call: Reply.rate_limited(retry_after=0.05)) as server:
        data = write_rows(tmp_path / "rows.jsonl", 40)
        res = run_eval(data, server.url, tmp_path / "o", "--concurrency", "4", budget=SMALL)
        check_stopped(res, tmp_path / "o", server.url, "JudgeRateLimited", 40)
        # requests in flight together are one signal: at most SMALL waves of the 4 in flight
        assert len(server.log) <= 4 * SMALL + 4


def test_a_judge_killed_mid_run_stops_the_run(tmp_path):
    # before: 400 rows, 2,376 failed requests in 18 s, 396 errors, summary not aborted
    server = _dying_server(answers=4)
    url = server.url
    try:
        data = write_rows(tmp_path / "rows.jsonl", 200)
        res = run_eval(data, url, tmp_path / "o", "--concurrency", "8", budget=SMALL)
    finally:
        server.stop()
    summary = check_stopped(res, tmp_path / "o", url, "JudgeConnectionError", 200)
    assert "answered before" in res.output
    failed = sum(summary["run"]["judge"]["attempt_errors"].values())
    assert failed <= 8 * SMALL + 8, failed
    scored = [r for r in map(json.loads, (tmp_path / "o" / "results.jsonl").read_text().splitlines())
              if r["metrics"]["faithfulness(mode=direct)"]["score"] == 1.0]
    assert len(scored) >= 3  # the rows judged before the server died are kept


def test_a_reply_of_another_kind_ends_the_streak_and_the_option_is_checked():
    # 5 timeouts, one HTTP 500 (the server answered), 5 more: never 8 in a row
    def outcome(n: int):
        if n == 6:
            return JudgeServerError("boom", status_code=500)
        return JudgeTimeout("slow") if n <= 11 else '{"score": 1}'

    backend, calls = _backend(outcome)
    judge = Judge(backend, cache=False, adaptive=False, max_retries=20, backoff=0.0001, unreachable_after=N)
    assert asyncio.run(judge.judge("q", Verdict)).value.score == 1
    assert len(calls) == 12 and judge.unreachable is None
    backend, calls = _backend(lambda n: JudgeRateLimited("429"))
    judge = Judge(backend, cache=False, adaptive=False, max_retries=20, backoff=0.0001, unreachable_after=3)
    with pytest.raises(JudgeUnreachable, match="3 requests in a row failed"):
        asyncio.run(judge.judge("q", Verdict))
    assert len(calls) == 3
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameterError, match="unreachable_after"):
            Judge(backend, cache=False, unreachable_after=bad)
