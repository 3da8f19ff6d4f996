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


# ---- a judge that answers every prompt with valid JSON of the wrong shape --------------

JUDGED = ["faithfulness", "hallucination_rate", "answer_relevancy", "context_relevancy", "context_precision_llm",
          "correctness", "answer_grade", "passage_recall", "answer_relevancy(steps=separate)",
          "faithfulness(steps=shared)", "context_relevancy(scale=graded)", "context_relevancy(decision=reasoned)",
          "correctness(scale=graded)", "correctness(decision=reasoned)"]


def _wrong_shape_samples(n: int) -> list:
    from ragmeter import Sample

    return [Sample.model_validate({
        "id": f"s{i}", "query": f"What is fact {i}?", "answer": f"Fact {i} is true. It was found in {1900 + i}.",
        "contexts": [f"Fact {i} is true.", "Unrelated text."],
        "reference": f"[ESSENTIAL PASSAGE] Fact {i} is true. [BONUS PASSAGE] Found in {1900 + i}."})
        for i in range(n)]


def test_wrong_shape_judge_scores_nothing_and_caches_nothing(fake_llm, make_judge):
    # before: faithfulness 1.0, hallucination_rate 0.0, answer_relevancy 0.0 on every sample, cached
    from ragmeter import evaluate
    from tests.metrics.generation.test_judged_metrics import BagOfWordsEmbedder

    fake_llm.rule = lambda call: Reply.json({"score": 5})
    judge = make_judge(cache=True)
    samples = _wrong_shape_samples(50)
    run = evaluate(samples, JUDGED, judge=judge, embedder=BagOfWordsEmbedder())
    summary = run.summary()
    for name in summary:
        assert summary[name]["n"] == 0 and summary[name]["undefined"] == 0, (name, summary[name])
        assert summary[name]["errors"] == 50, (name, summary[name])
    types = {rec["metrics"][m]["error"]["type"] for rec in run.records for m in rec["metrics"]}
    assert types == {"JudgeParseError"}
    assert len(judge.cache) == 0
    # every structured judgement was asked once and repaired once: requests come in pairs; the
    # one-word yes/no decisions (answer_relevancy's, and one per chunk for the chunk metrics; no
    # schema) have nothing to repair: asked once each
    structured = [e for e in fake_llm.log if e.response_format is not None]
    one_word = [e for e in fake_llm.log if e.response_format is None]
    assert len(structured) % 2 == 0 and sum(e.is_repair for e in structured) == len(structured) // 2
    assert len(one_word) >= 2 * 50 and not any(e.is_repair for e in one_word)
    # a second run reads nothing from the cache: the wrong reply was never stored
    fake_llm.clear_log()
    evaluate(samples[:2], ["faithfulness"], judge=judge)
    assert judge.stats()["cache_hits"] == 0 and len(fake_llm.log) == 4


def test_wrong_shape_judge_fails_the_cli_run(tmp_path, fake_llm):
    import json

    from click.testing import CliRunner

    from ragmeter.cli import main

    fake_llm.rule = lambda call: Reply.json({"score": 5})
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": s.id, "query": s.query, "answer": s.answer,
                                        "contexts": s.context_texts}) + "\n" for s in _wrong_shape_samples(50)))
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "-m", "hallucination_rate", "--judge",
                                    f"openai:m@{fake_llm.url}", "-o", str(out), "--no-report"],
                             catch_exceptions=False)
    assert res.exit_code == 3, res.output  # before: exit 0 with faithfulness 1.0
    summary = json.loads((out / "summary.json").read_text())["metrics"]
    assert summary["faithfulness"]["n"] == 0 and summary["faithfulness"]["errors"] == 50
    assert summary["hallucination_rate"]["n"] == 0 and summary["hallucination_rate"]["errors"] == 50
