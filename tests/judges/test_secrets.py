"""A judge spec with credentials in its URL is parsed as one URL, and the
credentials never reach anything shown or stored (summary.json, report.html, cache, console)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from ragmeter.cli import main
from ragmeter.judges.registry import parse_spec
from ragmeter.masking import mask_secrets, mask_url
from tests.metrics.generation.rules import judge_rule

SECRET = "s3cr3t-pw-123"


@pytest.mark.parametrize(("spec", "expected"), [
    # before: ('openai', 'm@http://user:pw', 'http://127.0.0.1:8455/v1') -- the password in the model
    ("openai:m@http://user:pw@127.0.0.1:8455/v1", ("openai", "m", "http://user:pw@127.0.0.1:8455/v1")),
    ("openai:m@https://tok@host.example/v1", ("openai", "m", "https://tok@host.example/v1")),
    ("openai:m@v2@http://h:1/v1", ("openai", "m@v2", "http://h:1/v1")),
    ("ollama:qwen2.5:7b", ("ollama", "qwen2.5:7b", None)),
    ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
    ("openai:m@HTTP://h/v1", ("openai", "m", "HTTP://h/v1")),
])
def test_parse_spec_keeps_the_url_whole(spec, expected):
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(("url", "masked"), [
    ("http://user:pw@127.0.0.1:8455/v1", "http://***@127.0.0.1:8455/v1"),
    ("https://token@host/v1", "https://***@host/v1"),
    ("https://host/v1?api_key=sk-1&x=2", "https://host/v1?api_key=***&x=2"),
    ("https://host/v1?Token=abc&api-key=k", "https://host/v1?Token=***&api-key=***"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    (None, None),
])
def test_mask_url(url, masked):
    assert mask_url(url) == masked


def test_mask_secrets_in_text():
    text = "openai:m@http://u:pw@h:1/v1 and https://x/y?key=abc (not a url: user:pw)"
    assert mask_secrets(text) == "openai:m@http://***@h:1/v1 and https://x/y?key=*** (not a url: user:pw)"


ROWS = [{"id": "a", "query": "capital of France?", "answer": "Paris is the capital of France.",
         "contexts": [{"id": "d1", "text": "Paris is the capital of France."}]}]


def test_credentials_in_the_judge_url_are_never_shown_or_stored(tmp_path, fake_llm, judge_cache_dir,
                                                                 monkeypatch):
    import base64

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-key-never-sent")
    fake_llm.rule = judge_rule
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out"
    url = fake_llm.url.replace("http://", f"http://admin:{SECRET}@")
    res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness", "--judge", f"openai:fake-model@{url}",
                                    "-o", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    # the request went to the right host, for the right model (before: model 'fake-model@http://admin:...')
    assert len(fake_llm.log) == 2
    # user:pw is HTTP basic auth for that host; the OpenAI key is not sent with it
    basic = "Basic " + base64.b64encode(f"admin:{SECRET}".encode()).decode()
    assert {e.authorization for e in fake_llm.log} == {basic}
    assert SECRET not in res.output
    summary = (out / "summary.json").read_text()
    assert SECRET not in summary and SECRET not in (out / "results.jsonl").read_text()
    assert SECRET not in (out / "report.html").read_text()
    run = json.loads(summary)["run"]
    assert run["judge"]["model"] == "fake-model"
    assert run["judge"]["base_url"] == fake_llm.url.replace("http://", "http://***@")
    assert run["judge_spec"] == f"openai:fake-model@{fake_llm.url.replace('http://', 'http://***@')}"
    db = next(judge_cache_dir.rglob("*.sqlite3"))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT * FROM responses").fetchall()
    assert rows and SECRET not in repr(rows) and "admin" not in repr(rows)
    assert SECRET.encode() not in db.read_bytes()
