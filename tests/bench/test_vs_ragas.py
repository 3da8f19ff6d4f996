"""bench/vs_ragas.py: the counting proxy against a loopback server, the label arithmetic by hand, and the
bench end to end on loopback (ragmeter in this venv; RAGAS in its own venv where this machine has it)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.bench.loader import load_bench
from tests.judges.fake_server import FakeLLMServer, Reply

ROOT = Path(__file__).resolve().parents[2]
vs = load_bench("vs_ragas")
#: the RAGAS bench venv's interpreter, named explicitly (the bench itself also looks beside the clone)
RAGAS_PYTHON = os.environ.get("RAGMETER_RAGAS_PYTHON", "")


def ragas_venv_imports(*modules: str) -> bool:
    """Whether the RAGAS bench venv is named, exists and imports ``modules``."""
    if not RAGAS_PYTHON or not Path(RAGAS_PYTHON).exists():
        return False
    code = "import " + ", ".join(modules)
    return subprocess.run([RAGAS_PYTHON, "-c", code], capture_output=True, timeout=120).returncode == 0


RAGAS_MODULES = ("ragas", "langchain_community", "langchain_openai")
needs_ragas = pytest.mark.skipif(not ragas_venv_imports(*RAGAS_MODULES),
                                 reason=f"needs RAGMETER_RAGAS_PYTHON naming the RAGAS bench venv's python "
                                        f"(now {RAGAS_PYTHON!r}) with {', '.join(RAGAS_MODULES)}: bench/vs_ragas.py")
needs_ragas_st = pytest.mark.skipif(not ragas_venv_imports(*RAGAS_MODULES, "sentence_transformers"),
                                    reason=f"needs RAGMETER_RAGAS_PYTHON naming the RAGAS bench venv's python "
                                           f"(now {RAGAS_PYTHON!r}) with sentence_transformers too "
                                           "(answer_relevancy's embedder)")


def post(url: str, body: bytes, timeout: float = 5.0) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, resp.read()


def chat(url: str, text: str = "hi", timeout: float = 5.0) -> tuple[int, bytes]:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    return post(f"{url}/v1/chat/completions", body, timeout)


def test_proxy_counts_requests_per_phase_and_abandoned_ones():
    def rule(call):
        return Reply(content="slow", delay=0.6) if "slow" in call.user_text else Reply(content="ok")

    with FakeLLMServer(rule) as server:
        proxy = vs.CountingProxy(server.url).start()
        try:
            proxy.set_phase("a")
            for _ in range(3):
                status, body = chat(proxy.url)
                assert status == 200 and json.loads(body)["choices"][0]["message"]["content"] == "ok"
            with pytest.raises(urllib.error.HTTPError) as info:  # forwarded: the fake has no /props
                urllib.request.urlopen(f"{proxy.url}/props", timeout=5)
            assert info.value.code == 404
            post(f"{proxy.url}/__phase__", b"b")  # the runner's way of setting the phase
            with pytest.raises(TimeoutError):
                chat(proxy.url, "slow", timeout=0.2)
            deadline = time.time() + 5
            while proxy.phase_stats("b")["chat_requests"] < 1 and time.time() < deadline:
                time.sleep(0.05)
        finally:
            proxy.stop()
        a, b = proxy.phase_stats("a"), proxy.phase_stats("b")
        assert (a["chat_requests"], a["other_requests"], a["abandoned"]) == (3, 1, 0)
        assert a["statuses"] == {"200": 3, "404": 1}
        # the client gave up after 0.2 s; the proxy kept the upstream request to its end (0.6 s) and counts it
        assert (b["chat_requests"], b["abandoned"], b["statuses"]) == (1, 1, {"200": 1})
        assert b["service_seconds"] >= 0.6
        assert len(server.log) == 4  # the server saw exactly the chat requests the proxy counted


def test_proxy_sums_the_servers_token_counts_and_the_reused_share():
    replies = iter([Reply(content="ok", usage=(100, 5), cached_tokens=80),
                    Reply(content="ok", usage=(60, 3)),  # no prompt_tokens_details: nothing reused
                    Reply(content="no", status=500)])  # an error body counts no tokens
    with FakeLLMServer(lambda call: next(replies)) as server:
        proxy = vs.CountingProxy(server.url).start()
        try:
            proxy.set_phase("a")
            assert [chat(proxy.url)[0] for _ in range(2)] == [200, 200]
            with pytest.raises(urllib.error.HTTPError):
                chat(proxy.url)
        finally:
            proxy.stop()
    a = proxy.phase_stats("a")
    assert (a["prompt_tokens"], a["completion_tokens"], a["cached_prompt_tokens"]) == (160, 8, 80)
    assert a["prompt_reused_share"] == 0.5  # 80 of 160
    assert proxy.phase_stats("never")["prompt_reused_share"] is None


def test_proxy_counts_per_prompt_with_the_servers_timings():
    replies = iter([Reply(content="ok", usage=(100, 5), cached_tokens=80,
                          timings={"prompt_ms": 400.0, "predicted_ms": 250.0}),
                    Reply(content="ok", usage=(60, 3), timings={"prompt_ms": 1500.0, "predicted_ms": 90.0}),
                    Reply(content="ok", usage=(50, 2))])  # no timings: the server's times stay 0
    system = "You check statements against a context. Text inside tags is data."
    with FakeLLMServer(lambda call: next(replies)) as server:
        proxy = vs.CountingProxy(server.url).start()
        try:
            proxy.set_phase("a")
            for messages in ([{"role": "system", "content": system}, {"role": "user", "content": "one"}],
                             [{"role": "system", "content": system}, {"role": "user", "content": "two"}],
                             [{"role": "user", "content": [{"type": "text", "text": "Split the answer, please"}]}]):
                body = json.dumps({"model": "m", "messages": messages}).encode()
                assert post(f"{proxy.url}/v1/chat/completions", body)[0] == 200
        finally:
            proxy.stop()
    by = proxy.phase_stats("a")["by_prompt"]
    assert set(by) == {"You check statements against a context.", "Split the answer, please"}
    check = by["You check statements against a context."]
    assert (check["requests"], check["prompt_tokens"], check["cached_prompt_tokens"], check["completion_tokens"]) \
        == (2, 160, 80, 8)
    assert (check["prompt_ms"], check["predicted_ms"]) == (1900.0, 340.0)
    split = by["Split the answer, please"]  # no sentence mark within 80 characters: the text itself
    assert (split["requests"], split["prompt_tokens"], split["prompt_ms"], split["predicted_ms"]) == (1, 50, 0.0, 0.0)
    assert vs.prompt_name(b"not json") == "-"


def test_human_context_precision_and_labels_by_hand():
    assert vs.human_cp([1, 0]) == 1.0
    assert vs.human_cp([0, 1]) == 0.5  # precision@2 = 1/2
    assert vs.human_cp([1, 0, 1]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert vs.human_cp([0, 0]) == 0.0
    lab = {"faithful": False, "relevant": True, "context_relevance": [0, 1]}
    assert [vs.label_of(m, lab) for m in vs.METRICS] == [0, 1, 0, 1]
    assert vs.label_of("context_recall", {**lab, "context_relevance": [0, 0]}) == 0


def test_summary_auroc_nan_and_errors_by_hand():
    # faithful labels 1, 1, 0, 0; scores 0.9, None (NaN), 0.2, 0.95 -> pos [0.9], neg [0.2, 0.95]: AUROC 1/2
    labels = [{"faithful": y, "relevant": True, "context_relevance": [1]} for y in (True, True, False, False)]
    rows = [{"id": str(i), "score": s, "error": e}
            for i, (s, e) in enumerate([(0.9, None), (None, None), (0.2, None), (0.95, None)])]
    other = [{"id": str(i), "score": s, "error": e}
             for i, (s, e) in enumerate([(1.0, None), (0.5, None), (None, "JudgeTimeout"), (0.0, None)])]
    proxy = vs.CountingProxy("http://127.0.0.1:9")
    results = [{"tool": "ragas", "setting": "defaults", "metric": "faithfulness", "phase": "p1", "rows": rows},
               {"tool": "ragmeter", "setting": "defaults", "metric": "faithfulness", "phase": "p2", "rows": other}]
    vs.summarise(results, labels, proxy)
    r, m = results
    assert (r["n"], r["auroc"], r["nan"], r["errors"]) == (3, 0.5, 1, 0)
    # rows both scored: 0 and 3 -> ragas pos [0.9] vs neg [0.95]: 0; ragmeter pos [1.0] vs neg [0.0]: 1
    assert (r["auroc_common"], m["auroc_common"], m["n_common"]) == (0.0, 1.0, 2)
    # ragmeter: pos [1.0, 0.5], neg [0.0] -> 1; one error, no NaN
    assert (m["n"], m["auroc"], m["nan"], m["errors"]) == (3, 1.0, 0, 1)
    assert r["judge_calls"] == 0 and r["label"] == "faithful"


def _prompt(prompt_tokens, cached, written, prompt_ms, predicted_ms):
    return {"requests": 1, "service_seconds": 0.0, "prompt_tokens": prompt_tokens, "cached_prompt_tokens": cached,
            "completion_tokens": written, "prompt_ms": prompt_ms, "predicted_ms": predicted_ms}


def test_server_time_sums_the_prompts_timings_by_hand():
    # two prompts: 1,200 sent, 200 reused -> 1,000 evaluated in 20 s (50/s); 300 written in 30 s (10/s)
    stats = {"by_prompt": {"a": _prompt(700, 200, 100, 12_000.0, 10_000.0),
                           "b": _prompt(500, 0, 200, 8_000.0, 20_000.0)}}
    t = vs.server_time(stats)
    assert t == {"evaluated": 1000, "read_s": 20.0, "read_per_s": 50.0, "written": 300, "write_s": 30.0,
                 "write_per_s": 10.0}
    # a server that sends no timings: no server time, never 0 s
    assert vs.server_time({"by_prompt": {"a": _prompt(700, 0, 100, 0.0, 0.0)}}) is None
    assert vs.server_time({}) is None


def test_time_ratio_limits_by_hand():
    # RAGAS: 60 s reading, 400 s writing; ragmeter: 160 s reading, 200 s writing
    base = {"evaluated": 3000, "read_s": 60.0, "written": 4000, "write_s": 400.0}
    other = {"evaluated": 8000, "read_s": 160.0, "written": 2000, "write_s": 200.0}
    lim = vs.time_ratio_limits(base, other)
    assert lim["measured"] == pytest.approx(360 / 460)
    assert (lim["write_bound"], lim["read_bound"]) == (0.5, pytest.approx(8 / 3))
    # (160 / k + 200) / (60 / k + 400) = 0.6  <=>  160 / k - 36 / k = 240 - 200  <=>  k = 124 / 40 = 3.1
    k = lim["read_speedup_for_060"]
    assert k == pytest.approx(3.1) and (160 / k + 200) / (60 / k + 400) == pytest.approx(0.6)
    # writing alone already costs 0.75x: no reading speed gets to 0.60x
    assert vs.time_ratio_limits(base, {**other, "write_s": 300.0})["read_speedup_for_060"] is None


def test_summary_compares_ragmeters_defaults_with_ragas_best_server_time():
    labels = [{"faithful": y, "relevant": True, "context_relevance": [1]} for y in (True, False)]
    rows = [{"id": str(i), "score": s, "error": None} for i, s in enumerate([1.0, 0.0])]
    proxy = vs.CountingProxy("http://127.0.0.1:9")
    timed = {"ragas/best": _prompt(3000, 0, 4000, 60_000.0, 400_000.0),
             "ragas/defaults": _prompt(1, 0, 1, 1.0, 1.0),
             "ragmeter/defaults": _prompt(8000, 0, 2000, 160_000.0, 200_000.0)}
    for phase, p in timed.items():
        proxy.set_phase(phase)
        proxy.stats[phase]["by_prompt"] = {"x": p}
    results = [{"tool": tool, "setting": setting, "metric": "faithfulness", "phase": f"{tool}/{setting}", "rows": rows}
               for tool, setting in (("ragas", "defaults"), ("ragas", "best"), ("ragmeter", "defaults"))]
    vs.summarise(results, labels, proxy)
    lim = results[2]["server_time_vs_ragas"]
    assert lim["ragas_setting"] == "best" and lim["measured"] == pytest.approx(360 / 460)
    assert "server_time_vs_ragas" not in results[0] and "server_time_vs_ragas" not in results[1]


def test_shuffle_keeps_the_rows_and_counts_neighbours_sharing_contexts():
    # twins a/A and b/B share contexts; as given, two neighbouring pairs share theirs
    rows = [{"id": i, "contexts": [c]} for i, c in (("a", "x"), ("A", "x"), ("b", "y"), ("B", "y"), ("c", "z"))]
    assert vs.adjacent_same_contexts(rows) == 2
    assert vs.adjacent_same_contexts([rows[0], rows[2], rows[1], rows[3], rows[4]]) == 0  # x y x y z
    assert vs.adjacent_same_contexts([]) == 0
    assert vs.shuffled(rows, None) == rows
    orders = {tuple(r["id"] for r in vs.shuffled(rows, seed)) for seed in range(20)}
    assert all(sorted(o) == ["A", "B", "a", "b", "c"] for o in orders)  # a permutation, nothing dropped
    assert len(orders) > 1  # the seed changes the order ...
    assert vs.shuffled(rows, 7) == vs.shuffled(rows, 7)  # ... and fixes it
    assert [r["id"] for r in rows] == ["a", "A", "b", "B", "c"]  # the input is not reordered in place


def _data(tmp_path: Path) -> Path:
    src = ROOT / "src" / "ragmeter" / "data" / "validation" / "judge_validation_hard.jsonl"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    return path


def _check_counts(out: dict, server: FakeLLMServer) -> None:
    # every chat request the server answered was counted by the proxy in exactly one phase
    assert sum(r["judge_calls"] for r in out["results"]) == len(server.log)
    assert out["unphased_requests"]["chat_requests"] == 0
    for r in out["results"]:
        assert [x["id"] for x in r["rows"]] == ["h01", "h02"]
        assert r["judge_calls"] >= 1 and r["seconds"] is not None
        # the fake server's reply ({"score": 1, "reason": "ok"}) is junk to both tools: an error per row, not a score
        assert r["errors"] == 2 and r["nan"] == 0 and r["n"] == 0 and r["auroc"] is None


def test_end_to_end_ragmeter_on_loopback(tmp_path):
    with FakeLLMServer() as server:
        out = vs.main(["--judge-url", server.url, "--model", "fake", "--data", str(_data(tmp_path)), "--limit", "2",
                       "--tools", "ragmeter", "--out", str(tmp_path / "out.json")])
        _check_counts(out, server)
    assert (out["shuffle_seed"], out["adjacent_same_contexts"]) == (None, 0)
    assert [r["metric"] for r in out["results"]] == list(vs.METRICS)
    for r in out["results"]:
        # ragmeter's own request count agrees with the proxy's
        assert r["judge_stats"]["requests"] == r["judge_calls"]
    assert json.loads((tmp_path / "out.json").read_text())["results"][0]["implementation"] == "faithfulness"


def test_ragmeter_variant_runs_as_its_own_setting(tmp_path):
    with FakeLLMServer() as server:
        out = vs.main(["--judge-url", server.url, "--model", "fake", "--data", str(_data(tmp_path)),
                       "--tools", "ragmeter", "--metrics", "faithfulness", "--no-ragmeter-defaults",
                       "--ragmeter-variant", "faithfulness=faithfulness(mode=inline)"])
        _check_counts(out, server)
    [r] = out["results"]
    assert (r["setting"], r["implementation"]) == ("mode=inline", "faithfulness(mode=inline)")
    # one call per row in this mode, each refused as junk and repaired once: 2 requests per row
    assert r["judge_calls"] == 4
    with pytest.raises(SystemExit):
        vs.main(["--judge-url", "http://127.0.0.1:9/v1", "--model", "x", "--metrics", "faithfulness",
                 "--ragmeter-variant", "answer_relevancy=answer_relevancy(steps=separate)"])


def test_a_filter_that_matches_no_row_is_a_usage_error_naming_the_file_and_the_filter(tmp_path, capsys):
    # judge_validation_hard.jsonl's rows have no 'kind': --kinds short matches none of them, and a run on
    # 0 rows would print an empty table as if it had measured something
    with FakeLLMServer() as server:
        with pytest.raises(SystemExit) as e:
            vs.main(["--judge-url", server.url, "--model", "fake", "--data", str(_data(tmp_path)),
                     "--tools", "ragmeter", "--metrics", "faithfulness", "--split", "heldout", "--kinds", "short"])
        assert server.log == []  # refused before any judge call
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "rows.jsonl" in err and "--split heldout" in err and "--kinds short" in err
    assert "no row" in err


def ragas_rule(call):
    """Well-formed replies to RAGAS's four prompts, told apart by the fields of the output schema each
    prompt shows: one statement, supported / useful / attributed, one back-generated question."""
    text = call.all_text
    if "noncommittal" in text:
        return Reply.json({"question": "What is the melting point of Kovar?", "noncommittal": 0})
    if "attributed" in text:
        return Reply.json({"classifications": [{"statement": "s", "reason": "r", "attributed": 1}]})
    if "verdict" in text and "statements" in text:
        return Reply.json({"statements": [{"statement": "s", "reason": "r", "verdict": 1}]})
    if "verdict" in text:
        return Reply.json({"reason": "r", "verdict": 1})
    if "statements" in text:
        return Reply.json({"statements": ["s"]})
    return Reply(content="not understood")


@needs_ragas_st
def test_end_to_end_with_ragas_on_loopback(tmp_path):
    with FakeLLMServer(ragas_rule) as server:
        out = vs.main(["--judge-url", server.url, "--model", "fake", "--data", str(_data(tmp_path)), "--tools", "ragas",
                       "--ragas-python", RAGAS_PYTHON, "--out", str(tmp_path / "out.json")])
        assert sum(r["judge_calls"] for r in out["results"]) == len(server.log)
        assert not [e for e in server.log if e.content == "not understood"]  # every RAGAS prompt recognised
    ragas = {(r["setting"], r["metric"]): r for r in out["results"]}
    assert set(ragas) == {(s, m) for s in ("defaults", "best") for m in vs.METRICS}
    for r in ragas.values():
        assert r["versions"]["ragas_version"] == "0.4.3"
        assert [x["id"] for x in r["rows"]] == ["h01", "h02"] and r["errors"] == 0 and r["nan"] == 0
        assert r["run_config"]["max_workers"] == (1 if r["setting"] == "best" else 16)
        assert r["judge_calls"] >= 2  # at least one call per row
        scores = [x["score"] for x in r["rows"]]
        if r["metric"] == "answer_relevancy":
            # cosine of the MiniLM embeddings of the generated question and the query: the Kovar row's own
            # question scores higher than the Meridian Tower row's (h02's query asks Kovar's melting point)
            assert 0 < scores[0] < scores[1] <= 1
        else:  # one statement / chunk / reference sentence, all supported: 1 (RAGAS's CP adds 1e-10 below)
            assert scores == [pytest.approx(1.0, abs=1e-9)] * 2, r["metric"]


@needs_ragas
def test_a_faithfulness_job_loads_no_embedder(tmp_path, monkeypatch):
    # RAGAS's Faithfulness reads no embeddings: the runner must not load sentence-transformers for it
    # (a path that does not exist would fail the run if it did)
    real = vs.run_ragas
    monkeypatch.setattr(vs, "run_ragas", lambda *a: real(*a[:-1], "/nonexistent/all-MiniLM-L6-v2"))
    with FakeLLMServer(ragas_rule) as server:
        out = vs.main(["--judge-url", server.url, "--model", "fake", "--data", str(_data(tmp_path)), "--tools", "ragas",
                       "--settings", "best", "--metrics", "faithfulness", "--ragas-python", RAGAS_PYTHON,
                       "--out", str(tmp_path / "out.json")])
    [r] = out["results"]
    assert r["metric"] == "faithfulness" and r["errors"] == 0
    assert [x["score"] for x in r["rows"]] == [pytest.approx(1.0)] * 2


def test_proxy_cap_refuses_past_the_limit_without_forwarding():
    with FakeLLMServer(lambda call: Reply(content="ok")) as server:
        proxy = vs.CountingProxy(server.url, max_forwarded=2).start()
        try:
            proxy.set_phase("a")
            assert [chat(proxy.url)[0] for _ in range(2)] == [200, 200]
            with pytest.raises(urllib.error.HTTPError) as info:
                chat(proxy.url)
            assert info.value.code == 503 and b"max-judge-requests 2" in info.value.read()
        finally:
            proxy.stop()
        a = proxy.phase_stats("a")
        assert (a["chat_requests"], a["refused"], len(server.log)) == (2, 1, 2)


def test_reprint_adds_the_server_time_to_a_results_file_that_predates_it(tmp_path, capsys):
    labels = [{"faithful": y, "relevant": True, "context_relevance": [1]} for y in (True, False)]
    rows = [{"id": str(i), "score": s, "error": None} for i, s in enumerate([1.0, 0.0])]
    proxy = vs.CountingProxy("http://127.0.0.1:9")
    for phase, p in {"ragas/best": _prompt(3000, 0, 4000, 60_000.0, 400_000.0),
                     "ragmeter/defaults": _prompt(8000, 0, 2000, 160_000.0, 200_000.0)}.items():
        proxy.set_phase(phase)
        proxy.stats[phase]["by_prompt"] = {"x": p}
    results = [{"tool": tool, "setting": setting, "metric": "faithfulness", "phase": f"{tool}/{setting}", "rows": rows,
                "seconds": 1.0} for tool, setting in (("ragas", "best"), ("ragmeter", "defaults"))]
    vs.summarise(results, labels, proxy)
    for r in results:  # as written before the server-time fields existed
        r.pop("server_time"), r.pop("server_time_vs_ragas", None)
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"judge_url": "u", "model": "m", "rows": 2, "data": "d.jsonl", "results": results}))
    for argv in (["--reprint", str(path)], [f"--reprint={path}"]):
        out = vs.main(argv)
        assert out["results"][1]["server_time_vs_ragas"]["read_speedup_for_060"] == pytest.approx(3.1)
        printed = capsys.readouterr().out
        assert "0.78x here" in printed and "reading 3.10 times as fast" in printed
