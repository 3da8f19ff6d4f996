"""1,000 judge calls against a server that fails often: nothing lost, nothing duplicated, every
failure typed, and the judge's counters equal the server's own log."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Callable

import pytest
from pydantic import BaseModel

from ragmeter.errors import JudgeError

from .fake_server import ChatCall, Reply

N = 1000


class Verdict(BaseModel):
    id: int
    score: int


def call_id(call: ChatCall) -> int:
    m = re.search(r"call (-?\d+)", call.user_text)
    assert m, call.user_text
    return int(m.group(1))


def faulty_rule() -> tuple[Callable[[ChatCall], Reply], Counter[int]]:
    attempts: Counter[int] = Counter()

    def rule(call: ChatCall) -> Reply:
        cid = call_id(call)
        n = attempts[cid]
        attempts[cid] += 1
        if cid < 0:
            return Reply.json({"id": cid, "score": 0})
        u = random.Random(f"{cid}:{n}").random()
        if u < 0.10:
            return Reply.rate_limited(retry_after=0)
        if u < 0.15:
            return Reply.server_error(500)
        if u < 0.20:
            return Reply.hanging(10.0)
        if u < 0.25:
            return Reply.malformed(f"The answer for call {cid} looks fine to me, I'd say 4.")
        return Reply.json({"id": cid, "score": cid % 5})

    return rule, attempts


@pytest.mark.slow
def test_thousand_calls_with_faults(fake_llm, make_judge):
    rule, _ = faulty_rule()
    fake_llm.rule = rule
    # timeout 6 s: well above a loaded machine's reply time, so only the injected hangs time out
    # adaptive=False: the faults here are random, not load, so they must not steer the concurrency
    # (adaptive concurrency halves on every 429/timeout and its server-time clock lets a 10 s hang
    # answer 504 instead of timing out); tests/judges/test_adaptive_concurrency.py covers adaptive runs
    judge = make_judge(concurrency=48, timeout=6.0, max_retries=4, backoff=0.01, max_backoff=0.1, adaptive=False)

    async def run() -> list[object]:
        await judge.judge("call -1", Verdict, tag="warmup")  # settles the structured-output mode

        async def one(i: int) -> object:
            try:
                return await judge.judge(f"call {i}", Verdict, tag="fault")
            except JudgeError as exc:
                return exc

        out = await asyncio.gather(*(one(i) for i in range(N)))
        await judge.aclose()
        return out

    t0 = time.perf_counter()
    results = asyncio.run(run())
    elapsed = time.perf_counter() - t0

    # every call ended with a parsed value or a typed error; none lost or duplicated
    assert len(results) == N
    errors: Counter[str] = Counter()
    for i, r in enumerate(results):
        if isinstance(r, JudgeError):
            assert type(r) is not JudgeError, r
            errors[type(r).__name__] += 1
        else:
            assert r.value.id == i and r.value.score == i % 5
    s = judge.stats()
    f = s["by_tag"]["fault"]
    assert f["calls"] == N
    assert f["errors"] == dict(errors)
    # the judge's counts equal the server's log
    log = Counter(e.kind for e in fake_llm.log)
    assert len(fake_llm.log) == s["requests"] + s["format_fallbacks"]
    assert s["format_fallbacks"] == 0
    assert log["429"] == f["attempt_errors"].get("JudgeRateLimited", 0)
    assert log["500"] == f["attempt_errors"].get("JudgeServerError", 0)
    assert log["hang"] == f["attempt_errors"].get("JudgeTimeout", 0)
    assert log["malformed"] == f["repairs"] + errors.get("JudgeParseError", 0)
    final_transient = sum(v for k, v in errors.items() if k != "JudgeParseError")
    assert f["retries"] == sum(f["attempt_errors"].values()) - final_transient
    # each successful judgement was answered "ok" exactly once (the warm-up too)
    ok_ids = Counter(int(re.search(r"call (-?\d+)", e.user_text).group(1)) for e in fake_llm.log if e.kind == "ok")
    good = {i for i, r in enumerate(results) if not isinstance(r, JudgeError)}
    assert set(ok_ids) - {-1} == good
    assert all(v == 1 for v in ok_ids.values())
    # ~15-30 s on a 2-core machine under load; the bound only catches a hang
    assert elapsed < 90, f"took {elapsed:.1f} s"
