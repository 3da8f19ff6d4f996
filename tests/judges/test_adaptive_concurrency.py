"""Adaptive concurrency against real loopback servers: one slot, probed slots, many slots.

Times are scaled down from the real case (a one-slot 1.5B server at ~17 s a call, a 60 s
timeout) to a service time of 0.2 s and a timeout of 0.7 s: the same ratio of timeout to
service time (3.5), so a default judge that queued 16 requests would time out the same way.
(0.1 s / 0.35 s was tried: on a 2-core machine at load 6 the in-process server thread was
sometimes starved past 0.35 s.)
"""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from pydantic import BaseModel

from ragmeter.errors import JudgeError, JudgeTimeout
from ragmeter.judges import from_spec
from ragmeter.judges.concurrency import AdaptiveLimit, EndpointInfo, probe_endpoint, start_for

from .fake_server import FakeLLMServer, Reply

SERVICE = 0.2
TIMEOUT = 0.7


class Verdict(BaseModel):
    score: int
    reason: str


def _rule(call):
    return Reply.json({"score": 1, "reason": "ok"})


def _run_calls(judge, n: int) -> tuple[float, list[object]]:
    async def go() -> list[object]:
        async def one(i: int) -> object:
            try:
                return await judge.judge(f"question {i}", Verdict)
            except JudgeError as exc:
                return exc

        out = await asyncio.gather(*(one(i) for i in range(n)))
        await judge.aclose()
        return out

    t0 = time.perf_counter()
    out = asyncio.run(go())
    return time.perf_counter() - t0, out


def test_one_slot_server_at_defaults_has_no_timeouts():
    n = 20
    with FakeLLMServer(_rule, latency=SERVICE, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=TIMEOUT, backoff=0.01)
        wall, out = _run_calls(judge, n)
        stats = judge.stats()
        info = judge.concurrency_info()
        judge.close()
        assert [type(o).__name__ for o in out if isinstance(o, Exception)] == []
        assert stats["attempt_errors"] == {} and stats["retries"] == 0 and stats["requests"] == n
        assert server.abandoned == 0 and server.peak_busy == 1
        assert info is not None and info["mode"] == "latency" and info["start"] == 2
        # the server was kept busy: calls x service time, within 1.15x (plus 0.3 s of start-up
        # for the probe and the first connection)
        assert wall <= 1.15 * n * SERVICE + 0.3, wall
        assert info["peak_in_flight"] <= 4


def test_cold_start_on_a_one_slot_server_whose_call_nearly_fills_the_timeout():
    """The real case (2026-12-01): a one-slot server at ~45 s a call against the 60 s default. The
    adaptive judge starts at 2 in flight on an unknown local server, so the second request waits
    a whole call behind the first; before any reply there is no capacity estimate. Scaled: 0.5 s
    a call, 0.7 s timeout. Its clock must start when the first is answered (capacity 1 until
    measured): 0 timeouts, nothing abandoned. Before the change the second request timed out at
    1.0 s > 0.7 s and the server computed it for nobody."""
    with FakeLLMServer(_rule, latency=0.5, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=0.7, backoff=0.01)
        _, out = _run_calls(judge, 4)
        stats = judge.stats()
        info = judge.concurrency_info()
        judge.close()
        assert [type(o).__name__ for o in out if isinstance(o, Exception)] == []
        assert stats["attempt_errors"] == {} and stats["retries"] == 0 and stats["requests"] == 4
        assert server.abandoned == 0
        assert info is not None and info["start"] == 2 and info["peak_in_flight"] >= 2  # it did send 2 at once


def test_a_first_call_longer_than_the_timeout_on_a_local_server_is_not_abandoned():
    """2026-12-01: context precision with log-probabilities took ~50 s a call on the one-slot 1.5B
    server, near the 60 s default, and 3 of the first requests were abandoned before any reply
    could teach the timeout. Scaled: 0.6 s a call against a 0.4 s timeout. Until the server has
    answered, a local server's first attempts get 3 x the timeout: 0 timeouts, nothing
    abandoned (before: the first two requests timed out and were computed for nobody)."""
    with FakeLLMServer(_rule, latency=0.6, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=0.4, backoff=0.01)
        _, out = _run_calls(judge, 3)
        stats = judge.stats()
        judge.close()
        assert [type(o).__name__ for o in out if isinstance(o, Exception)] == []
        assert stats["attempt_errors"] == {} and stats["retries"] == 0 and stats["requests"] == 3
        assert server.abandoned == 0


def test_capacity_is_one_before_any_estimate_in_latency_mode_only():
    assert AdaptiveLimit(16, start=2, mode="latency", timeout=60).capacity() == 1
    assert AdaptiveLimit(16, start=16, mode="loss", timeout=60).capacity() == 16
    assert AdaptiveLimit(16, timeout=60).capacity() == 16
    assert AdaptiveLimit(16, start=4, mode="latency", slots=4, timeout=60).capacity() == 4


def test_one_slot_server_with_fixed_concurrency_thrashes():
    """The control: the old fixed concurrency of 16 against the same server times out."""
    with FakeLLMServer(_rule, latency=SERVICE, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=TIMEOUT, backoff=0.01,
                          adaptive=False, max_retries=1)
        _, out = _run_calls(judge, 16)
        judge.close()
        assert sum(isinstance(o, JudgeTimeout) for o in out) >= 8
        assert server.abandoned >= 8


def test_probe_reads_llamacpp_slots_and_starts_there():
    with FakeLLMServer(_rule, latency=0.05, slots=3, props=True) as server:
        info = asyncio.run(probe_endpoint(server.url))
        assert info == EndpointInfo("llama.cpp", 3)
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=2.0)
        _, out = _run_calls(judge, 12)
        ci = judge.concurrency_info()
        judge.close()
        assert not [o for o in out if isinstance(o, Exception)]
        assert ci is not None and ci["start"] == 3 and ci["slots"] == 3 and ci["mode"] == "latency"
        assert server.peak_busy <= 3


def test_probe_recognises_vllm_and_starts_at_the_bound():
    with FakeLLMServer(_rule, latency=0.02, vllm=True) as server:
        assert asyncio.run(probe_endpoint(server.url)) == EndpointInfo("vllm")
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=5.0, concurrency=8)
        _, out = _run_calls(judge, 16)
        ci = judge.concurrency_info()
        judge.close()
        assert not [o for o in out if isinstance(o, Exception)]
        assert ci is not None and ci["mode"] == "loss" and ci["start"] == 8 and ci["peak_in_flight"] == 8


def test_probe_of_a_server_without_slot_endpoints_is_local():
    with FakeLLMServer(_rule) as server:
        assert asyncio.run(probe_endpoint(server.url)) == EndpointInfo("local")
    assert asyncio.run(probe_endpoint("https://api.openai.com/v1")) == EndpointInfo("remote")
    assert asyncio.run(probe_endpoint(None)) == EndpointInfo("none")


def test_start_table():
    assert start_for(EndpointInfo("llama.cpp", 4), 16) == (4.0, "latency")
    assert start_for(EndpointInfo("llama.cpp", 64), 16) == (16.0, "latency")
    assert start_for(EndpointInfo("local"), 16) == (2.0, "latency")
    assert start_for(EndpointInfo("local"), 1) == (1.0, "latency")
    assert start_for(EndpointInfo("vllm"), 16) == (16.0, "loss")
    assert start_for(EndpointInfo("remote"), 16) == (16.0, "loss")
    assert start_for(EndpointInfo("none"), 8) == (8.0, "loss")


def test_parallel_server_grows_to_the_bound():
    """A server with no slot limit: from 2, the limit grows to near the judge's concurrency (16):
    at least 12 requests in flight at once at the client *and* at the server (no connection pool
    or serialisation caps them), no overload signal, and the limit still >= 12 at the end (the bug
    this guards against collapsed it to 2; a one-slot server keeps about 2).

    Load-independence: the client measures latency from send to reply *processed*, so a client
    starved of CPU sees latency grow with the number in flight, which is what a queue looks like,
    and the limit rightly stops growing. At 0.25 s a call (and "== 16") this test failed on a
    heavily loaded machine; reproduced with 3 threads spinning in the test process (GIL-starved
    client and server): final limit 8.2-14.7, server peak 11-15 in 3 of 3 runs. At 1.0 s a call
    the client's own work is a small part of each latency: 16 at both ends in 2 of 2 runs with 3
    spinning threads at machine load 9; with 5 threads one run of 2 peaked at 13. Hence 12, not
    16: still far above the start (2) and any cap of 11 or less. That the rule itself reaches
    exactly 16 is checked without clocks by the next test."""
    with FakeLLMServer(_rule, latency=1.0) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=20.0, concurrency=16)
        _, out = _run_calls(judge, 96)
        ci = judge.concurrency_info()
        judge.close()
        assert not [o for o in out if isinstance(o, Exception)]
        assert ci is not None and ci["start"] == 2 and ci["decreases"] == 0 and ci["peak_in_flight"] <= 16
        assert ci["peak_in_flight"] >= 12 and server.peak_busy >= 12 and ci["limit"] >= 12


def test_latency_rule_grows_where_latency_does_not_and_stops_at_a_queue():
    """The latency rule on synthetic round trips (no clock, no load): each round sends floor(L)
    requests. Where latency stays 1 s whatever the number in flight, slow start (+1 per success,
    capped at 1.5 c + 1 for the measured capacity c = n in flight) reaches the bound 16 within 4
    round trips (2 -> at most 4 -> 7 -> 11 -> 16) and stays there; where the k-th request of a round
    waits behind k - 1 others (one slot, k seconds), latency grows with the number in flight and L
    stays <= 4."""

    def rounds(latency_of) -> list[float]:
        limit = AdaptiveLimit(16, start=2, mode="latency", timeout=20.0)
        out = []
        for _ in range(8):
            n = math.floor(limit.limit)
            for k in range(1, n + 1):
                limit.on_success(latency_of(k), None, n)
            out.append(limit.limit)
        return out

    parallel = rounds(lambda k: 1.0 + 0.01 * (k % 3))  # 10 ms of jitter: noise, not a queue
    assert parallel[3:] == [16.0] * 5 and parallel[0] <= 4
    assert max(rounds(lambda k: 1.0 * k)) <= 4


def test_timeout_clock_counts_server_time_only():
    """Four requests at once into a one-slot server (0.1 s each, timeout 0.15 s): the 4th waits
    0.3 s behind the other three. With the slot count known its clock starts when its turn
    comes, so none times out; the control without the slot count times out."""

    async def scenario(limit: AdaptiveLimit) -> list[object]:
        lock = asyncio.Lock()

        async def serve() -> str:
            async with lock:
                await asyncio.sleep(0.1)
            return "ok"

        async def one() -> object:
            async with limit.slot() as slot:
                try:
                    return await slot.run(serve, 0.15)
                except TimeoutError as exc:
                    slot.failed(timeout=True)
                    return exc

        return await asyncio.gather(*(one() for _ in range(4)))

    known = asyncio.run(scenario(AdaptiveLimit(4, start=4, mode="latency", slots=1, timeout=0.15)))
    assert known == ["ok"] * 4
    fixed = asyncio.run(scenario(AdaptiveLimit(4, timeout=0.15)))
    assert sum(isinstance(o, TimeoutError) for o in fixed) >= 2


def test_abandoned_request_keeps_its_slot_for_a_service_time():
    async def scenario() -> tuple[float, dict]:
        limit = AdaptiveLimit(2, start=2, mode="latency", timeout=0.2)

        async def quick() -> str:
            await asyncio.sleep(0.1)
            return "ok"

        async def hang() -> str:
            await asyncio.sleep(5)
            return "late"

        async with limit.slot() as slot:  # one success teaches the service time (~0.1 s)
            await slot.run(quick, 0.2)
        async with limit.slot() as slot:
            with pytest.raises(TimeoutError):
                await slot.run(hang, 0.2)
            slot.failed(timeout=True)
        gave_up = time.perf_counter()
        assert limit.limit == 1.0  # halved from 2 (slow start had grown it to 3; 3 / 2 = 1.5)
        async with limit.slot():
            waited = time.perf_counter() - gave_up
        return waited, limit.info()

    waited, info = asyncio.run(scenario())
    assert waited >= 0.08, waited  # the retry waited for the abandoned request's service time
    assert info["decreases"] == 1


def test_overload_signals_of_one_round_trip_decrease_once():
    async def scenario() -> AdaptiveLimit:
        limit = AdaptiveLimit(16, start=16, mode="loss")
        slots = []
        for _ in range(3):
            cm = limit.slot()
            slots.append((cm, await cm.__aenter__()))
        for _, slot in slots:  # three 429s from requests sent before any decrease
            slot.failed(overloaded=True)
        for cm, _ in slots:
            await cm.__aexit__(None, None, None)
        assert limit.limit == 8.0
        cm = limit.slot()
        slot = await cm.__aenter__()  # sent after the decrease: its 429 is a new signal
        slot.failed(overloaded=True)
        await cm.__aexit__(None, None, None)
        return limit

    limit = asyncio.run(scenario())
    assert limit.limit == 4.0 and limit.decreases == 2


def test_loss_mode_additive_increase():
    limit = AdaptiveLimit(16, start=4, mode="loss")
    for _ in range(4):  # one round trip of 4 successes adds about one
        limit.on_success(0.1, None)
    expected = 4.0
    for _ in range(4):
        expected += 1 / expected
    assert limit.limit == pytest.approx(expected)
    assert 4.9 < limit.limit < 5.0


def test_timeout_backoff_lets_a_slow_server_answer():
    """A backend that needs 0.3 s against a 0.2 s timeout: adaptive retries with 0.4 s and gets the
    reply; the fixed judge times out on every attempt."""
    from ragmeter.judges import FunctionBackend, Judge

    async def slow(request) -> str:
        await asyncio.sleep(0.3)
        return '{"score": 1, "reason": "slow"}'

    def go(adaptive: bool) -> tuple[object, dict]:
        judge = Judge(FunctionBackend(slow), cache=False, timeout=0.2, max_retries=2, backoff=0.01,
                      adaptive=adaptive)

        async def one() -> object:
            try:
                return (await judge.judge("q", Verdict)).value
            except JudgeError as exc:
                return exc

        out = asyncio.run(one())
        return out, judge.stats()

    value, stats = go(True)
    assert value == Verdict(score=1, reason="slow")
    assert stats["attempt_errors"] == {"JudgeTimeout": 1} and stats["requests"] == 2
    error, stats = go(False)
    assert isinstance(error, JudgeTimeout) and stats["attempt_errors"] == {"JudgeTimeout": 3}


def test_a_new_event_loop_starts_from_the_learnt_limit():
    with FakeLLMServer(_rule, latency=0.02) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=5.0, concurrency=8)
        _run_calls(judge, 40)
        first = judge.concurrency_info()
        _run_calls(judge, 4)  # asyncio.run again: a new loop
        second = judge.concurrency_info()
        judge.close()
    assert first is not None and first["start"] == 2 and first["limit"] > 2
    assert second is not None and second["start"] == first["limit"] and second["mode"] == "latency"


def test_one_slot_server_with_a_long_timeout_keeps_few_in_flight():
    """The bench case: a one-slot server at ~12 s a call with a 600 s timeout grew
    to 9 in flight (limit 11), since latency differences below 5 % of the timeout (30 s) were read
    as noise. Scaled: 0.5 s a call, timeout 25 s (ratio 50; before the fix this scenario reached 9
    in flight too). Latency that grows in proportion to the number in flight is a queue: the limit
    stays near the server's measured capacity (measured after the fix: 2-3 in flight)."""
    n, service = 16, 0.5
    with FakeLLMServer(_rule, latency=service, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=25.0, backoff=0.01)
        wall, out = _run_calls(judge, n)
        stats = judge.stats()
        info = judge.concurrency_info()
        judge.close()
        assert [o for o in out if isinstance(o, Exception)] == [] and stats["retries"] == 0
        assert info is not None and info["mode"] == "latency"
        assert info["peak_in_flight"] <= 4, info
        assert info["limit"] <= 4, info
        assert wall <= 1.15 * n * service + 0.3, wall  # still kept busy


def test_first_attempt_timeout_grows_from_the_slowest_reply_seen():
    """A server that answered in 0.15 s and then needs 0.3 s a call, against a 0.2 s timeout:
    the adaptive judge gives later calls 3 x 0.15 = 0.45 s and none times out; the fixed judge
    times out on every slow call (before the change the adaptive one did too, once per call,
    and the server worked on each abandoned request for nothing)."""
    from ragmeter.judges import FunctionBackend, Judge

    def go(adaptive: bool) -> tuple[list[object], dict]:
        seen = {"n": 0}

        async def slower(request) -> str:
            seen["n"] += 1
            await asyncio.sleep(0.15 if seen["n"] == 1 else 0.3)
            return '{"score": 1, "reason": "ok"}'

        judge = Judge(FunctionBackend(slower), cache=False, timeout=0.2, max_retries=1, backoff=0.01,
                      adaptive=adaptive, unreachable_after=10)  # 6 timeouts in a row: not the point here

        async def calls() -> list[object]:
            out: list[object] = []
            for i in range(4):  # one at a time: the latency is the service time
                try:
                    out.append((await judge.judge(f"q{i}", Verdict)).value)
                except JudgeError as exc:
                    out.append(exc)
            return out

        return asyncio.run(calls()), judge.stats()

    out, stats = go(True)
    assert out == [Verdict(score=1, reason="ok")] * 4
    assert stats["attempt_errors"] == {} and stats["requests"] == 4 and stats["retries"] == 0
    out, stats = go(False)
    assert all(isinstance(o, JudgeTimeout) for o in out[1:]), out
    assert stats["attempt_errors"] == {"JudgeTimeout": 6}


def test_learned_timeout_rule():
    fixed = AdaptiveLimit(16, timeout=60.0)                # Judge(adaptive=False): never changes
    fixed.on_success(90.0, None)
    assert fixed.learned_timeout(60.0) == 60.0
    limit = AdaptiveLimit(16, mode="latency", timeout=60.0)
    assert limit.learned_timeout(60.0) == 180.0           # a local server not heard from yet: 3 x
    assert AdaptiveLimit(16, mode="loss", timeout=60.0).learned_timeout(60.0) == 60.0  # hosted: as set
    limit.on_success(10.0, None)
    assert limit.learned_timeout(60.0) == 60.0            # 3 x 10 s is shorter than the timeout
    limit.on_success(90.0, None)
    assert limit.learned_timeout(60.0) == 270.0           # 3 x the slowest recent reply
    limit.on_success(400.0, None)
    assert limit.learned_timeout(60.0) == 480.0           # at most 8 x the timeout


class _TwoCalls:
    """A two-stage judged metric: a first call, then a second that needs the first's reply."""

    name = "two_calls"
    version = "1"

    def __init__(self, judge) -> None:
        self.judge = judge

    async def aevaluate(self, sample):
        from ragmeter.types import MetricResult

        await self.judge.judge(f"first {sample.query}", Verdict)
        await self.judge.judge(f"second {sample.query}", Verdict)
        return MetricResult(name=self.name, score=1.0, version=self.version)


def test_a_started_sample_second_call_goes_before_later_samples_first_calls():
    """On a one-slot server the judge keeps few requests in flight (about 2); the others wait.
    Waiting requests go by sample: sample i's second call is sent before the first call of any
    sample after i + peak in flight (first come first served, the second call of sample 0 would
    wait behind the first calls of all eight samples)."""
    from ragmeter.evaluator import score_chunk
    from ragmeter.types import Sample

    n = 8
    with FakeLLMServer(_rule, latency=SERVICE, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=TIMEOUT, backoff=0.01)
        samples = [Sample(id=str(i), query=f"q{i}", answer="a") for i in range(n)]

        async def go():
            out = await score_chunk([_TwoCalls(judge)], samples)
            await judge.aclose()
            return out

        out = asyncio.run(go())
        info = judge.concurrency_info()
        judge.close()
        order = [e.user_text.strip() for e in server.log]
    assert [r.score for r in out["two_calls"]] == [1.0] * n
    assert sorted(order) == sorted([f"first q{i}" for i in range(n)] + [f"second q{i}" for i in range(n)])
    peak = info["peak_in_flight"]
    assert peak < n - 1, info
    for i in range(n - peak - 1):
        assert order.index(f"second q{i}") < order.index(f"first q{i + peak + 1}"), (i, order)


def test_waiting_requests_go_by_rank_then_arrival_and_a_cancelled_one_leaves_no_gap():
    """One slot held; then requests arrive ranked 5, 1, (unranked), 1, 0 (the last cancelled while
    waiting): they are served 1, 1 (in arrival order), 5, then the unranked one."""
    from ragmeter.judges.concurrency import REQUEST_RANK

    async def go() -> list[str]:
        limit = AdaptiveLimit(1, timeout=60)
        order: list[str] = []

        async def request(rank: int | None, name: str) -> None:
            REQUEST_RANK.set(rank)
            async with limit.slot():
                order.append(name)
                await asyncio.sleep(0.01)

        first = asyncio.ensure_future(request(None, "holder"))
        await asyncio.sleep(0)
        assert limit.in_flight == 1
        tasks = []
        for rank, name in [(5, "r5"), (1, "r1-first"), (None, "unranked"), (1, "r1-second"), (0, "r0")]:
            tasks.append(asyncio.ensure_future(request(rank, name)))
            await asyncio.sleep(0)
        tasks[-1].cancel()
        await asyncio.gather(first, *tasks, return_exceptions=True)
        return order

    assert asyncio.run(go()) == ["holder", "r1-first", "r1-second", "r5", "unranked"]


def test_a_long_prompt_after_short_ones_gets_the_time_its_length_needs():
    """A local server whose time grows with the prompt (as a CPU server's does: 0.05 s plus 0.2 ms a
    prompt token): three short calls (~30 tokens, ~0.06 s), then one of ~4,000 tokens (~0.85 s),
    against a 0.4 s timeout. The slowest reply seen (0.06 s) taught a timeout of 0.4 s, which the
    long call overran, was given up and sent again (twice: 0.4 s, then 0.8 s); the judge now
    also scales the timeout by the request's own prompt: nothing times out, nothing is abandoned."""

    def by_length(call):
        return Reply(content='{"score": 1, "reason": "ok"}', delay=0.05 + 0.0002 * len(call.all_text) / 4)

    with FakeLLMServer(by_length, slots=1) as server:
        judge = from_spec(f"openai:qwen@{server.url}", cache=False, timeout=0.4, backoff=0.01)

        async def calls() -> list[object]:
            out: list[object] = []
            for prompt in ["short one", "short two", "short three", "long " + "word " * 3200]:
                try:  # one at a time: each latency is its own service time
                    out.append((await judge.judge(prompt, Verdict)).value)
                except JudgeError as exc:
                    out.append(exc)
            await judge.aclose()
            return out

        out = asyncio.run(calls())
        stats = judge.stats()
        judge.close()
        assert out == [Verdict(score=1, reason="ok")] * 4
        assert stats["attempt_errors"] == {} and stats["retries"] == 0 and stats["requests"] == 4
        assert server.abandoned == 0


def test_learned_timeout_grows_with_the_prompt_on_a_local_server():
    from ragmeter.judges import Usage

    limit = AdaptiveLimit(16, mode="latency", timeout=60.0)
    limit.on_success(10.0, Usage(400, 92))                 # 10 s for weight 92 + 400/8 + 8 = 150
    assert limit.learned_timeout(60.0) == 60.0
    assert limit.learned_timeout(60.0, 400) == 60.0        # 3 x 10/150 x 150 = 30 s: the timeout stands
    # 3,600 tokens: weight 3600/8 + 8 + 92 = 550, 3 x 10/150 x 550 = 110 s
    assert limit.learned_timeout(60.0, 3600) == pytest.approx(110.0)
    assert limit.learned_timeout(60.0, 40_000) == 480.0    # at most 8 x the timeout
    hosted = AdaptiveLimit(16, mode="loss", timeout=60.0)  # a hosted API: its time is not ours to model
    hosted.on_success(10.0, Usage(400, 92))
    assert hosted.learned_timeout(60.0, 3600) == 60.0
