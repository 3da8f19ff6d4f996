"""A judge that cannot be reached stops the run fast (exit 3) with the
cause and the URL (credentials masked) on one line; rows already finished are kept."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from ragmeter.cli import main
from ragmeter.errors import JudgeConnectionError, JudgeUnreachable
from ragmeter.judges import FunctionBackend, Judge
from ragmeter.judges.judge import FAILED_IN_A_ROW, UNREACHABLE_AFTER

from .fake_server import Reply


class Verdict(BaseModel):
    score: int


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_rows(path: Path, n: int) -> Path:
    rows = [{"id": f"r{i}", "query": f"q{i}?", "answer": f"Answer {i}.",
             "contexts": [{"id": "d1", "text": f"Answer {i}."}, {"id": "d2", "text": "x"}], "relevant": ["d1"]}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_server_down_stops_fast_with_cause_and_masked_url(tmp_path):
    # before: every one of 20 samples retried 5 times (about 20 s), the console showed only counts
    port = closed_port()
    data = write_rows(tmp_path / "rows.jsonl", 20)
    out = tmp_path / "o"
    t0 = time.perf_counter()
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "-m", "mrr", "--judge",
                                    f"openai:m@http://admin:hunter22@127.0.0.1:{port}/v1", "-o", str(out),
                                    "--no-report"], catch_exceptions=False)
    elapsed = time.perf_counter() - t0
    assert res.exit_code == 3, res.output
    lines = [ln for ln in res.output.splitlines() if "unreachable" in ln]
    assert len(lines) == 1
    assert f"http://***@127.0.0.1:{port}/v1" in lines[0] and "JudgeConnectionError" in lines[0]
    assert "hunter22" not in res.output
    assert elapsed < 8, elapsed
    # the run stops at the row whose call declared the judge unreachable: that row and every row
    # before it are kept (mrr scored, the judge metric errored), no later row
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert 1 <= len(rows) < 20 and all(r["metrics"]["mrr"]["score"] == 1.0 for r in rows)
    assert [r["id"] for r in rows] == [f"r{i}" for i in range(len(rows))]
    assert rows[-1]["metrics"]["faithfulness"]["error"]["type"] == "JudgeUnreachable"
    assert {r["metrics"]["faithfulness"]["error"]["type"] for r in rows} <= {"JudgeConnectionError",
                                                                             "JudgeUnreachable"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["aborted"]["type"] == "JudgeUnreachable"
    attempts = sum(summary["run"]["judge"]["attempt_errors"].values())
    assert attempts <= UNREACHABLE_AFTER + 16  # at most what was already in flight (concurrency 16)


def test_rejected_key_stops_the_run(tmp_path, fake_llm):
    fake_llm.rule = lambda call: Reply(status=401, error="Incorrect API key provided")
    data = write_rows(tmp_path / "rows.jsonl", 40)
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "--judge", f"openai:m@{fake_llm.url}",
                                    "-o", str(tmp_path / "o"), "--no-report", "--concurrency", "2"],
                             catch_exceptions=False)
    assert res.exit_code == 3
    line = next(ln for ln in res.output.splitlines() if "unreachable" in ln)
    assert "JudgeAuthError" in line and "HTTP 401" in line and fake_llm.url in line
    assert len(fake_llm.log) <= UNREACHABLE_AFTER + 2  # before: one request per sample, 40


def _backend(outcomes):
    calls = []

    async def handler(request):
        calls.append(request)
        out = outcomes(len(calls))
        if isinstance(out, Exception):
            raise out
        return out

    return FunctionBackend(handler, base_url="http://u:pw@10.0.0.1/v1"), calls


def test_library_judge_trips_then_raises_without_sending():
    backend, calls = _backend(lambda n: JudgeConnectionError("Connection refused"))
    judge = Judge(backend, cache=False, max_retries=10, backoff=0.001)
    with pytest.raises(JudgeUnreachable, match=r"http://\*\*\*@10\.0\.0\.1/v1"):
        asyncio.run(judge.judge("q", Verdict))
    assert len(calls) == UNREACHABLE_AFTER  # not 11 attempts
    with pytest.raises(JudgeUnreachable):
        asyncio.run(judge.judge("another", Verdict))
    assert len(calls) == UNREACHABLE_AFTER  # nothing more was sent


def test_a_judge_that_worked_once_is_unreachable_after_the_run_level_budget_only():
    # connection failures after a success: not the 3 of a judge never reached, but unreachable_after
    backend, calls = _backend(lambda n: '{"score": 1}' if n == 1 else JudgeConnectionError("Connection reset"))
    judge = Judge(backend, cache=False, max_retries=0, backoff=0.0001)  # each asyncio.run: a new loop
    assert asyncio.run(judge.judge("q", Verdict)).value.score == 1
    for i in range(FAILED_IN_A_ROW - 1):
        with pytest.raises(JudgeConnectionError):
            asyncio.run(judge.judge(f"q{i}", Verdict))
    assert judge.unreachable is None
    with pytest.raises(JudgeUnreachable, match="it answered before"):
        asyncio.run(judge.judge("last", Verdict))
    assert len(calls) == FAILED_IN_A_ROW + 1


# ---- a judge that answered and then died ---------------------------------------------

def _dying_server(answers: int):
    """A server that answers ``answers`` requests and then stops (port closed: connection refused).
    Until the stop has taken effect (a timer thread, late on a loaded machine) every later request
    has its connection closed unanswered, so the server is down from its ``answers + 1``-th request
    whatever the timing."""
    import threading

    from .fake_server import FakeLLMServer

    box: dict = {}

    def rule(call):
        if call.index + 1 > answers:
            return Reply.dropped()
        if call.index + 1 == answers:
            threading.Timer(0.05, box["server"].stop).start()
        return Reply(content="yes")
    box["server"] = FakeLLMServer(rule).start()
    return box["server"]


def test_judge_that_dies_mid_run_stops_with_finished_rows_kept(tmp_path, monkeypatch):
    # before: a judge reached once was retried for minutes (5 retries per sample, sample after sample)
    import ragmeter.judges.judge as judge_module

    monkeypatch.setattr(judge_module, "FAILED_IN_A_ROW", 3)  # pauses 0.5 + 1 s, not 0.5 + ... + 8 s
    server = _dying_server(answers=4)
    data = write_rows(tmp_path / "rows.jsonl", 40)
    out = tmp_path / "o"
    t0 = time.perf_counter()
    try:
        res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness(mode=direct)", "-m", "mrr",
                                        "--judge", f"openai:m@{server.url}", "-o", str(out), "--no-report",
                                        "--concurrency", "1"], catch_exceptions=False)
    finally:
        server.stop()
    elapsed = time.perf_counter() - t0
    assert res.exit_code == 3, res.output
    line = next(ln for ln in res.output.splitlines() if "unreachable" in ln)
    assert "answered before" in line and "JudgeConnectionError" in line
    assert elapsed < 15, elapsed
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) < 40 and all(r["metrics"]["mrr"]["score"] == 1.0 for r in rows)
    scored = [r for r in rows if r["metrics"]["faithfulness(mode=direct)"]["score"] == 1.0]
    assert len(scored) >= 3  # the rows judged before the server died are kept
    assert rows[-1]["metrics"]["faithfulness(mode=direct)"]["error"]["type"] == "JudgeUnreachable"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["aborted"]["type"] == "JudgeUnreachable"


def test_a_short_outage_after_success_is_retried(tmp_path):
    import threading

    from .fake_server import FakeLLMServer

    box: dict = {}

    def restart():
        port = box["server"].port
        box["server"].stop()
        time.sleep(0.4)  # connection refused meanwhile
        box["server"] = FakeLLMServer(rule, port=port).start()

    def rule(call):
        if call.index == 2 and not box.get("restarted"):
            box["restarted"] = True
            threading.Thread(target=restart).start()
        return Reply(content="yes")
    box["server"] = FakeLLMServer(rule).start()
    data = write_rows(tmp_path / "rows.jsonl", 12)
    url = box["server"].url
    try:
        res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness(mode=direct)", "--judge",
                                        f"openai:m@{url}", "-o", str(tmp_path / "o"), "--no-report",
                                        "--concurrency", "1"], catch_exceptions=False)
    finally:
        box["server"].stop()
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["metrics"]["faithfulness(mode=direct)"]["errors"] == 0
    assert summary["run"]["judge"]["attempt_errors"].get("JudgeConnectionError", 0) >= 1  # the outage was seen
