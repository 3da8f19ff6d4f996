"""App calls are retried as judge calls are: a real HTTP server on loopback that fails once then
answers, one that always fails, one that refuses connections; Python apps that raise."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from ragmeter.app import HttpApp, PythonApp, collect
from ragmeter.app.calls import RetryPolicy, retryable
from ragmeter.cli import main
from ragmeter.errors import AppError, AppUnavailable
from ragmeter.types import Sample

FAST = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=0.02)


class _Flaky(BaseHTTPRequestHandler):
    """``/once``: 503 (Retry-After: 0) on each question's first POST, then the answer;
    ``/always``: 502 every time; ``/bad``: 400 (not retried)."""

    seen: ClassVar[Counter[tuple[str, str]]] = Counter()
    lock = threading.Lock()

    def do_POST(self) -> None:
        question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["question"]
        with self.lock:
            _Flaky.seen[(self.path, question)] += 1
            n = _Flaky.seen[(self.path, question)]
        if self.path == "/always" or (self.path == "/once" and n == 1):
            self._reply(503 if self.path == "/once" else 502, b"busy", {"Retry-After": "0"})
        elif self.path == "/bad":
            self._reply(400, b"no such field")
        else:
            self._reply(200, json.dumps({"answer": f"A to {question}", "contexts": ["ctx"]}).encode())

    def _reply(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    _Flaky.seen = Counter()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _qs(n: int) -> list[Sample]:
    return [Sample(id=f"q{i}", query=f"question {i}") for i in range(n)]


def _collect(app: Any, n: int, retry: RetryPolicy = FAST) -> list[Any]:
    return asyncio.run(collect(app, _qs(n), {}, cache=None, concurrency=2, timeout=5, retry=retry))


def test_503_once_then_200_succeeds_with_one_retry(server: str) -> None:
    calls = _collect(HttpApp(server + "/once"), 3)
    assert [c.error for c in calls] == [None] * 3
    assert [c.output["answer"] for c in calls] == [f"A to question {i}" for i in range(3)]
    assert [c.retries for c in calls] == [1, 1, 1]
    assert all(n == 2 for n in _Flaky.seen.values())


def test_always_failing_is_an_error_on_that_row_after_the_retries(server: str) -> None:
    calls = _collect(HttpApp(server + "/always"), 2)
    assert all(c.output is None for c in calls)
    assert calls[0].error.message.startswith("HTTP 502 from ")
    assert calls[0].error.message.endswith("(after 3 retries)") and calls[0].retries == 3
    assert all(n == 4 for n in _Flaky.seen.values())  # 1 call + 3 retries each


def test_a_client_error_is_not_retried(server: str) -> None:
    (call,) = _collect(HttpApp(server + "/bad"), 1)
    assert call.retries == 0 and call.error.message.startswith("HTTP 400 from ")
    assert sum(_Flaky.seen.values()) == 1


def test_connection_refused_is_retried() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (call,) = _collect(HttpApp(f"http://127.0.0.1:{port}/"), 1, RetryPolicy(max_retries=1, backoff=0.01))
    assert call.retries == 1 and call.error.message.startswith(f"cannot reach http://127.0.0.1:{port}/")


def test_python_app_retries_only_transient_errors() -> None:
    attempts: Counter[str] = Counter()

    def app(question: str) -> dict[str, Any]:
        attempts[question] += 1
        if question == "question 0" and attempts[question] == 1:
            raise AppUnavailable("warming up")
        if question == "question 1":
            raise KeyError("bug")
        if question == "question 2" and attempts[question] == 1:
            raise ConnectionResetError("reset")
        return {"answer": "ok", "contexts": []}

    calls = _collect(PythonApp("m:app", app), 3)
    assert [c.retries for c in calls] == [1, 0, 1]
    assert calls[1].error is not None and calls[1].error.message == "KeyError: 'bug'"
    assert attempts == {"question 0": 2, "question 1": 1, "question 2": 2}
    assert retryable(TimeoutError()) and not retryable(AppError("x")) and not retryable(ValueError())


def test_cli_run_counts_retries_and_goes_on(server: str, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q{i}", "query": f"question {i}", "reference": "A"}) + "\n"
                                 for i in range(3)))
    for path, retries, errors in (("/once", 3, 0), ("/always", 6, 3)):
        out = tmp_path / path.strip("/")
        res = CliRunner().invoke(main, ["run", server + path, "--questions", str(questions), "-m", "token_f1",
                                        "-o", str(out), "--no-report", "--no-cache", "--retries", "2"],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
        app = json.loads((out / "summary.json").read_text())["run"]["app"]
        assert (app["calls"], app["retries"], app["errors"]) == (3, retries, errors)
        assert f"{retries} retries, {errors} error(s)" in res.output
