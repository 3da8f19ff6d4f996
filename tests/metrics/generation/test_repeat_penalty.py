"""No repetition penalty on faithfulness's claim calls, where the server would apply one unasked.

The default ``faithfulness`` (``mode=claims``) asks for ``repeat_penalty: 1.0`` on its two calls,
the claim list and the verdict list, and a reply cut at the token limit is asked again with 1.1;
the judge passes the field on only to a server known to take it (an OpenAI-compatible server whose
``GET /openapi.json`` is titled as llama-cpp-python's, llama.cpp's own server, found by its
``GET /props``, the Ollama native backend, in-process llama.cpp) and nowhere else. Every server here is a real HTTP
server on loopback (:class:`~tests.judges.fake_server.FakeLLMServer`).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges import ChatRequest, Message, from_spec
from ragmeter.judges.backends.ollama_native import OllamaNativeBackend
from ragmeter.judges.concurrency import LLAMA_CPP_PYTHON_TITLE, probe_endpoint
from ragmeter.judges.judge import judge_cache_key
from tests.judges.fake_server import FakeLLMServer, Reply

from .rules import judge_rule

GREEDY = {"repeat_penalty": 1.0}
SAMPLE = Sample(id="a", query="When was the tower completed?", answer="It was completed in 1889. It is in Paris.",
                contexts=["It was completed in 1889. It stands in Lyon."])


@pytest.fixture(scope="module")
def llama_python() -> Iterator[FakeLLMServer]:
    """A server that presents itself as llama-cpp-python's does (``/openapi.json`` title)."""
    with FakeLLMServer(judge_rule, openapi_title=LLAMA_CPP_PYTHON_TITLE) as server:
        yield server


@pytest.fixture(scope="module")
def llama_cpp() -> Iterator[FakeLLMServer]:
    """A server that presents itself as llama.cpp's own does (``GET /props`` with ``total_slots``)."""
    with FakeLLMServer(judge_rule, props=True, slots=1) as server:
        yield server


@pytest.fixture(scope="module")
def other_fastapi() -> Iterator[FakeLLMServer]:
    """Another FastAPI server (its own title): not known to take the field."""
    with FakeLLMServer(judge_rule, openapi_title="Some OpenAI-compatible API") as server:
        yield server


def bodies(server: FakeLLMServer, metrics: list[str], **options: Any) -> tuple[dict[str, dict[str, Any]], Any]:
    """The request body of each reply schema the run asked for (by schema name), and the run's judge stats."""
    seen: dict[str, dict[str, Any]] = {}

    def rule(call: Any) -> Any:
        seen[re.sub(r"\d+$", "", call.schema_name or "word")] = call.body
        return judge_rule(call)

    server.rule = rule
    judge = from_spec(f"openai:fake-model@{server.url}", cache=False, timeout=5.0, **options)
    try:
        report = evaluate([SAMPLE], metrics, judge=judge)
    finally:
        judge.close()
        server.rule = judge_rule
    return seen, report


def test_the_default_asks_llama_cpp_pythons_server_for_none_on_both_claim_calls(llama_python):
    seen, report = bodies(llama_python, ["faithfulness", "hallucination_rate"])
    assert set(seen) == {"Claims", "Verdicts"}
    assert {k: b.get("repeat_penalty") for k, b in seen.items()} == {"Claims": 1.0, "Verdicts": 1.0}
    assert report.run["judge"]["endpoint"] == "llama-cpp-python"
    # the rules' judge: "completed in 1889" is in the context, "is in Paris" is not: 1 of 2 supported;
    # times the answer checks (1889 found, "Paris" not: 1 of 2)
    assert report.records[0]["metrics"]["faithfulness"]["score"] == pytest.approx(0.25)


def test_the_bodies_are_those_the_recommended_extra_body_sent(llama_python, other_fastapi):
    # method log 22 measured the default with extra_body={"repeat_penalty": 1.0}: the new default
    # sends the same bodies without it
    new, _ = bodies(llama_python, ["faithfulness"])
    old, _ = bodies(other_fastapi, ["faithfulness"], extra_body=GREEDY)
    assert new == old


def test_other_metrics_and_other_modes_ask_for_nothing(llama_python):
    seen, _ = bodies(llama_python, ["faithfulness(mode=direct)", "answer_relevancy", "context_relevancy",
                                    "faithfulness(mode=sentences)", "faithfulness(mode=claims,verdicts=word)"])
    # mode=claims,verdicts=word lists its claims as the default does (asked without penalty); its
    # one-word calls are not
    assert seen.pop("Claims")["repeat_penalty"] == 1.0
    assert seen and {k: "repeat_penalty" in b for k, b in seen.items()} == {k: False for k in seen}


def test_servers_not_known_to_take_it_get_nothing(fake_llm, other_fastapi):
    for server, kind in ((fake_llm, "local"), (other_fastapi, "local")):
        seen, report = bodies(server, ["faithfulness"])
        assert set(seen) == {"Claims", "Verdicts"}
        assert [b.get("repeat_penalty") for b in seen.values()] == [None, None]
        assert report.run["judge"]["endpoint"] == kind


def test_the_users_extra_body_wins(llama_python):
    seen, _ = bodies(llama_python, ["faithfulness"], extra_body={"repeat_penalty": 1.1})
    assert [b["repeat_penalty"] for b in seen.values()] == [1.1, 1.1]


def test_the_probe(llama_python, llama_cpp, other_fastapi, fake_llm):
    got = [asyncio.run(probe_endpoint(s.url)).kind for s in (llama_python, llama_cpp, other_fastapi, fake_llm)]
    assert got == ["llama-cpp-python", "llama.cpp", "local", "local"]
    assert asyncio.run(probe_endpoint("https://api.openai.com/v1")).kind == "remote"  # never probed


def test_the_cache_key_holds_the_request_as_asked():
    fields = dict(backend="openai", model="m", base_url="http://127.0.0.1:1/v1",
                  messages=[{"role": "user", "content": "x"}], temperature=0.0, max_tokens=10, schema=None,
                  seed=None, template_version="t@1")
    assert judge_cache_key(**fields) == judge_cache_key(**fields, repeat_penalty=None)  # keys without it unchanged
    assert judge_cache_key(**fields) != judge_cache_key(**fields, repeat_penalty=1.0)


def test_ollamas_native_api_takes_it_as_a_model_option_and_extra_body_wins():
    request = ChatRequest((Message("user", "x"),), repeat_penalty=1.0)
    assert OllamaNativeBackend("m").body(request)["options"]["repeat_penalty"] == 1.0
    assert "repeat_penalty" not in OllamaNativeBackend("m").body(ChatRequest((Message("user", "x"),)))["options"]
    mine = OllamaNativeBackend("m", extra_body={"repeat_penalty": 1.2}).body(request)
    assert mine["options"]["repeat_penalty"] == 1.2


def test_the_title_is_llama_cpp_pythons_own():
    """Read from the installed llama-cpp-python server's source, where it is installed (CI does not
    install it; ``RAGMETER_LLAMA_CPP_PYTHON`` may name a Python that has it)."""
    exe = os.environ.get("RAGMETER_LLAMA_CPP_PYTHON")
    if exe is None:
        pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed")
        import sys

        exe = sys.executable
    code = ("import inspect, re, llama_cpp.server.app as a; "
            "print(re.search(r'title=\"([^\"]+)\"', inspect.getsource(a)).group(1))")
    got = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    assert got == LLAMA_CPP_PYTHON_TITLE


def claim_bodies_with_a_loop(server: FakeLLMServer, *runs: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
    """The claim-call bodies of faithfulness runs on ``SAMPLE`` (one per judge options dict of
    ``runs``, one run with none given) whose first claim list repeats one claim until the token
    limit, and the first run's report."""
    seen: list[dict[str, Any]] = []
    loop = '{"claims": ["It was completed in 1889.", "It was completed in 1889.", "It was completed in 1889.'

    def rule(call: Any) -> Any:
        if (call.schema_name or "").startswith("Claims"):
            seen.append(call.body)
            if len(seen) == 1:
                return Reply(content=loop, finish_reason="length")
        return judge_rule(call)

    server.rule = rule
    reports = []
    try:
        for options in runs or ({},):
            judge = from_spec(f"openai:fake-model@{server.url}", cache=False, timeout=5.0, **options)
            try:
                reports.append(evaluate([SAMPLE], ["faithfulness"], judge=judge))
            finally:
                judge.close()
    finally:
        server.rule = judge_rule
    return seen, reports[0]


def test_llama_cpps_own_server_takes_the_field_and_a_loop_is_repaired_with_a_penalty(llama_cpp):
    # llama.cpp's server applies no penalty unasked (its default repeat_penalty is 1.0), so a repair
    # that relied on the server's own penalty looped again there; it is asked for 1.1 instead
    seen, report = claim_bodies_with_a_loop(llama_cpp)
    assert report.run["judge"]["endpoint"] == "llama.cpp"
    assert [b.get("repeat_penalty") for b in seen] == [1.0, 1.1]
    assert report.records[0]["metrics"]["faithfulness"]["score"] == pytest.approx(0.25)  # as above
    assert report.run["judge"]["repairs"] == 1


def test_a_loop_repair_asks_nothing_of_a_server_not_known_to_take_the_field(other_fastapi):
    seen, report = claim_bodies_with_a_loop(other_fastapi)
    assert [b.get("repeat_penalty") for b in seen] == [None, None]
    assert report.run["judge"]["repairs"] == 1


def test_the_claim_list_is_capped_by_the_answers_length_and_a_loop_is_repaired_with_a_penalty(llama_python):
    # 384 + len(answer) // 2 tokens: "It was completed in 1889. It is in Paris." has 41 characters -> 404
    assert len(SAMPLE.answer or "") == 41
    # the first claim list repeats one claim until the limit; a second run with the judge's own lower cap
    seen, report = claim_bodies_with_a_loop(llama_python, {}, {"max_tokens": 300})
    assert [b["max_tokens"] for b in seen] == [404, 404, 300]  # the loop, its repair, the judge's own lower cap
    # the loop was asked without the penalty; its repair with llama.cpp's sampler's 1.1
    assert [b.get("repeat_penalty") for b in seen] == [1.0, 1.1, 1.0]
    assert "404-token limit" in str(seen[1]["messages"])
    assert report.records[0]["metrics"]["faithfulness"]["score"] == pytest.approx(0.25)  # as above
    assert report.run["judge"]["repairs"] == 1
