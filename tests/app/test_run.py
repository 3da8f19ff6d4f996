"""``ragmeter run``: a Python callable (sync, async), an HTTP app on loopback, the output cache
across a kill -9, app errors as row errors, and a parameter experiment ending in the comparison."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from ragmeter.app import AppCache, HttpApp, collect, read_questions, resolve_app
from ragmeter.app.runner import AppCall, answered, parse_param
from ragmeter.cli import main
from ragmeter.types import Sample

SRC = str(Path(__file__).parents[2] / "src")
PORT = 18517

APP = '''
import asyncio, json, os

KB = {"paris": "Paris is the capital of France.", "water": "Water boils at 100 degrees.",
      "moon": "The Moon orbits the Earth.", "gold": "Gold is a metal."}
LOG = os.environ.get("APP_LOG")


def _log(q):
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(q + "\\n")


def answer(question, top_k=1, style="short"):
    if "explode" in question:
        raise RuntimeError("boom")
    key = next((k for k in KB if k in question.lower()), None)
    ctx = [{"id": key, "text": KB[key], "source": "kb"}] if key else []
    ctx += [{"id": k, "text": v} for k, v in KB.items() if k != key][: max(top_k - 1, 0)]
    text = KB[key] if key and style == "short" else "I am not sure."
    _log(question)
    return {"answer": text, "contexts": ctx}


async def answer_async(question, top_k=1):
    await asyncio.sleep(0)
    out = answer(question, top_k)
    return out["answer"], [c["text"] for c in out["contexts"]]


def slow(question):
    if os.environ.get("APP_SLOW_AFTER") and question.endswith(os.environ["APP_SLOW_AFTER"]):
        import time
        time.sleep(600)
    return answer(question)
'''


@pytest.fixture
def app_module(tmp_path, monkeypatch):
    d = tmp_path / "appmod"
    d.mkdir()
    (d / "ragapp.py").write_text(textwrap.dedent(APP), encoding="utf-8")
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("APP_LOG", str(tmp_path / "calls.log"))
    sys.modules.pop("ragapp", None)
    return d


def _questions(tmp_path, n=4, explode=True):
    topics = ["paris", "water", "moon", "gold"]
    rows = [{"id": f"q{i}", "question": f"Tell me about {topics[i % 4]} number {i}",
             "reference": {"paris": "Paris is the capital of France.", "water": "Water boils at 100 degrees.",
                           "moon": "The Moon orbits the Earth.", "gold": "Gold is a metal."}[topics[i % 4]],
             "relevant": [topics[i % 4]], "category": "geo" if i % 2 == 0 else "sci"} for i in range(n)]
    if explode:
        rows.append({"id": "bad", "question": "explode please", "reference": "x"})
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _calls(tmp_path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_python_callable_end_to_end(tmp_path, app_module):
    q = _questions(tmp_path)
    out = tmp_path / "out"
    args = ["run", "ragapp:answer", "--questions", str(q), "-m", "token_f1", "-m", "mrr", "-o", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--slice", "category"]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    app = summary["run"]["app"]
    assert (app["questions"], app["calls"], app["cached"], app["errors"]) == (5, 5, 0, 1)
    assert set(app["latency_s"]) == {"p50", "p95", "max", "n"} and app["latency_s"]["n"] == 5
    assert summary["metrics"]["token_f1"]["mean"] == 1.0 and summary["metrics"]["token_f1"]["errors"] == 1
    assert summary["metrics"]["mrr"]["mean"] == 1.0
    assert summary["slices"]["category"]["slices"][0]["value"] == "geo"
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    bad = next(x for x in lines if x["id"] == "bad")
    err = bad["metrics"]["mrr"]["error"]
    assert err["type"] == "AppError" and "RuntimeError: boom" in err["message"]
    assert lines[0]["context_metadata"] == [{"source": "kb"}]
    # the app's outputs are an ordinary input file: `ragmeter eval` re-scores them without the app
    outputs = [json.loads(x) for x in (out / "app_outputs.jsonl").read_text().splitlines()]
    assert len(outputs) == 4 and outputs[0]["answer"] == "Paris is the capital of France."
    assert outputs[0]["reference"] == "Paris is the capital of France." and outputs[0]["metadata"]["category"] == "geo"
    res2 = CliRunner().invoke(main, ["eval", str(out / "app_outputs.jsonl"), "-m", "token_f1", "-o",
                                     str(tmp_path / "re"), "--no-report"], catch_exceptions=False)
    assert res2.exit_code == 0
    assert json.loads((tmp_path / "re" / "summary.json").read_text())["metrics"]["token_f1"]["mean"] == 1.0
    assert (out / "report.html").is_file()
    # a second run (other metrics) calls the app only where no output was cached: the failed question
    before = len(_calls(tmp_path))
    res3 = CliRunner().invoke(main, [*args[:6], "-m", "rouge_l", *args[10:], "--no-report", "-o", str(tmp_path / "o3")],
                              catch_exceptions=False)
    assert res3.exit_code == 0, res3.output
    app3 = json.loads((tmp_path / "o3" / "summary.json").read_text())["run"]["app"]
    assert (app3["calls"], app3["cached"]) == (1, 4) and len(_calls(tmp_path)) == before


def test_async_callable_returning_a_pair(tmp_path, app_module):
    qs = read_questions(str(_questions(tmp_path, explode=False)))
    app = resolve_app("ragapp:answer_async")
    calls = __import__("asyncio").run(collect(app, qs, {"top_k": 2}, cache=None))
    assert [c.output["answer"] for c in calls] == ["Paris is the capital of France.", "Water boils at 100 degrees.",
                                                  "The Moon orbits the Earth.", "Gold is a metal."]
    assert [len(c.output["contexts"]) for c in calls] == [2, 2, 2, 2]
    assert calls[0].output["contexts"][0] == {"text": "Paris is the capital of France."}


def test_parse_param_and_bad_app_spec():
    assert parse_param("top_k=3,5,10") == ("top_k", [3, 5, 10])
    assert parse_param("model=a,b") == ("model", ["a", "b"])
    res = CliRunner().invoke(main, ["run", "nomodule_xyz:fn", "--questions", "q.jsonl"])
    assert res.exit_code == 2


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"body": body, "auth": self.headers.get("X-Key")})
        if "explode" in body["input"]["q"]:
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"server exploded")
            return
        k = body["input"]["k"]
        reply = {"data": {"text": "Paris is the capital of France.",
                          "docs": [{"id": f"d{i}", "page_content": f"doc {i}", "metadata": {"url": f"u{i}"}}
                                   for i in range(k)]}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def http_app():
    server = ThreadingHTTPServer(("127.0.0.1", PORT), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.seen = []
    yield f"http://127.0.0.1:{PORT}/rag"
    server.shutdown()
    server.server_close()


def test_http_app_on_loopback(tmp_path, http_app, monkeypatch):
    monkeypatch.setenv("MY_APP_KEY", "s3cret")
    q = _questions(tmp_path, n=2)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, [
        "run", http_app, "--questions", str(q), "-m", "token_f1", "-o", str(out), "--no-report",
        "--body", '{"input": {"q": "{question}", "k": "{top_k}", "note": "k={top_k}"}}', "--param", "top_k=1,3",
        "--answer-path", "data.text", "--contexts-path", "data.docs", "--header", "X-Key=MY_APP_KEY",
        "--no-cache", "--retries", "0"], catch_exceptions=False)  # retries: tests/app/test_app_retries.py
    assert res.exit_code == 0, res.output
    bodies = [s["body"]["input"] for s in _Handler.seen]
    assert {"q": "Tell me about paris number 0", "k": 3, "note": "k=3"} in bodies  # a number stays a number
    assert all(s["auth"] == "s3cret" for s in _Handler.seen)
    run3 = out / "top_k=3"
    outputs = [json.loads(x) for x in (run3 / "app_outputs.jsonl").read_text().splitlines()]
    assert [c["id"] for c in outputs[0]["contexts"]] == ["d0", "d1", "d2"]
    assert outputs[0]["contexts"][1] == {"id": "d1", "text": "doc 1", "metadata": {"url": "u1"}}
    app = json.loads((run3 / "summary.json").read_text())["run"]["app"]
    assert app["errors"] == 1 and app["error_kinds"] == {"HTTP 500 from http": 1}
    assert "s3cret" not in (run3 / "summary.json").read_text()
    assert (out / "comparison.md").is_file()


def test_http_app_identity_holds_the_url_and_template():
    a = HttpApp("http://127.0.0.1:1/a", body='{"q": "{question}"}')
    b = HttpApp("http://127.0.0.1:1/b", body='{"q": "{question}"}')
    assert a.identity != b.identity
    assert AppCache.key("q", a.identity, {}) != AppCache.key("q", b.identity, {})
    assert AppCache.key("q", a.identity, {"k": 1}) != AppCache.key("q", a.identity, {"k": 2})


def test_kill_9_then_rerun_calls_no_finished_question_again(tmp_path, app_module):
    q = _questions(tmp_path, n=8, explode=False)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, str(app_module)]), APP_SLOW_AFTER="number 5",
               APP_LOG=str(tmp_path / "calls.log"))
    cmd = [sys.executable, "-m", "ragmeter", "run", "ragapp:slow", "--questions", str(q), "-m", "token_f1",
           "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--concurrency", "1", "--no-report"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_calls(tmp_path)) < 5 and time.monotonic() < deadline:  # q0..q4 answered, q5 sleeps
            time.sleep(0.1)
        assert len(_calls(tmp_path)) == 5
        cache = AppCache(tmp_path / "cache")  # each output is committed right after its call returns
        while len(cache.store) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        cache.close()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finished = set(_calls(tmp_path))
    (tmp_path / "calls.log").unlink()
    env.pop("APP_SLOW_AFTER")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    again = _calls(tmp_path)
    assert not finished & set(again)  # 0 calls repeated for the finished questions
    assert len(again) == 3  # q5, q6, q7
    app = json.loads((tmp_path / "out" / "summary.json").read_text())["run"]["app"]
    assert (app["calls"], app["cached"]) == (3, 5)


def test_experiment_3x2_over_20_questions_ends_with_the_comparison(tmp_path, app_module):
    q = _questions(tmp_path, n=20, explode=False)
    out = tmp_path / "exp"
    res = CliRunner().invoke(main, ["run", "ragapp:answer", "--questions", str(q), "-m", "token_f1", "-m", "recall@3",
                                    "-o", str(out), "--cache-dir", str(tmp_path / "cache"),
                                    "--param", "top_k=1,2,3", "--param", "style=short,long"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    dirs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert dirs == ["top_k=1_style=long", "top_k=1_style=short", "top_k=2_style=long", "top_k=2_style=short",
                    "top_k=3_style=long", "top_k=3_style=short"]
    assert all((out / d / "report.html").is_file() for d in dirs)
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["runs"][0] == "top_k=1,style=short" and len(comparison["runs"]) == 6
    best = comparison["best"]["token_f1"]
    # a short answer is the reference itself (token F1 1.0 on every question), a long one shares no token
    assert best["mean"] == 1.0 and best["best"] == "top_k=1,style=short"
    assert best["tied"] == ["top_k=2,style=short", "top_k=3,style=short"]
    assert sorted(best["beats"]) == ["top_k=1,style=long", "top_k=2,style=long", "top_k=3,style=long"]
    assert "| `top_k=1,style=short` |" in (out / "comparison.md").read_text()
    assert "best configuration per metric" in res.output


def test_the_readme_run_command(tmp_path, monkeypatch):
    root = Path(__file__).parents[2]
    monkeypatch.syspath_prepend(str(root / "examples"))
    out = tmp_path / "out-run"
    questions = str(root / "examples" / "rag_samples.jsonl")
    res = CliRunner().invoke(main, ["run", "nimbus_app:answer", "--questions", questions,
                                    "-m", "mrr", "-m", "recall@3", "-m", "token_f1", "--param", "top_k=1,3",
                                    "--slice", "source", "-o", str(out), "--no-cache", "--no-report"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    top3 = json.loads((out / "top_k=3" / "summary.json").read_text())
    assert top3["run"]["app"]["questions"] == 20 and top3["run"]["app"]["errors"] == 0
    assert "source" in top3["slices"] and (out / "comparison.md").is_file()


def test_the_apps_output_replaces_the_questions_answer_and_contexts():
    q = Sample.from_record({"id": "q1", "query": "q?", "answer": "old", "contexts": ["old context"], "reference": "r"})
    (s,) = answered([q], [AppCall({"answer": "new"}, None, 0.1, False)])  # an app that returned only a string
    assert (s.answer, s.has("contexts"), s.reference) == ("new", False, "r")


def test_a_module_in_the_current_directory_is_importable(tmp_path, monkeypatch):
    (tmp_path / "cwd_app_mod.py").write_text("def fn(question):\n    return 'yes', ['ctx']\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    sys.modules.pop("cwd_app_mod", None)
    app = resolve_app("cwd_app_mod:fn")
    assert app.identity == "python:cwd_app_mod:fn"


class _QueryEngine:
    """The surface of a LlamaIndex query engine: query / aquery with the question only."""

    calls = 0

    def query(self, question):
        raise AssertionError("not called")

    async def aquery(self, question):
        type(self).calls += 1
        return {"answer": "x", "contexts": ["x"]}


def test_params_for_a_query_engine_are_refused_before_any_call(tmp_path):
    from ragmeter.app.runner import run_experiment
    from ragmeter.app.targets import PythonApp
    from ragmeter.errors import InvalidParameterError

    app = PythonApp("m:engine", _QueryEngine())
    with pytest.raises(InvalidParameterError, match=r"query engine, which takes the question only: the "
                                                    r"parameters top_k would not reach it"):
        run_experiment(app, "m:engine", [Sample(id="1", query="q?")], ["lexical_faithfulness"],
                       out_dir=tmp_path / "out", grid={"top_k": [3, 5]})
    assert _QueryEngine.calls == 0 and not (tmp_path / "out").exists()
