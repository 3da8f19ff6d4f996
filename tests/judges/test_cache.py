"""The SQLite response cache: keys, migrations, WAL, hits and misses, what is (not) stored."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from pydantic import BaseModel

from ragmeter.errors import JudgeServerError
from ragmeter.judges import Completion, FunctionBackend, Judge, ResponseCache, cache_key, default_cache_dir
from ragmeter.judges.cache import MIGRATIONS, CacheEntry, canonical_json

from .fake_server import Reply


class Verdict(BaseModel):
    score: int


def test_cache_key_is_canonical():
    a = cache_key({"b": 1, "a": [1, "é"]})
    assert a == cache_key({"a": [1, "é"], "b": 1})
    assert a.startswith("sha256:") and len(a) == 7 + 64
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_default_dir_honours_env(judge_cache_dir, monkeypatch, tmp_path):
    assert default_cache_dir() == judge_cache_dir
    monkeypatch.delenv("RAGMETER_CACHE_DIR")
    assert "ragmeter" in str(default_cache_dir())


def test_migrations_and_wal(tmp_path):
    cache = ResponseCache(tmp_path)
    assert cache.path == tmp_path / "judge-cache.sqlite3"
    assert cache.migrations() == [name for name, _ in MIGRATIONS]
    conn = sqlite3.connect(cache.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    cache.put_many([CacheEntry("k", "v", 1, 2)])
    cache.close()
    again = ResponseCache(tmp_path / "judge-cache.sqlite3")  # reopening applies nothing twice
    assert again.migrations() == [name for name, _ in MIGRATIONS]
    assert again.get("k") == CacheEntry("k", "v", 1, 2, None, "", "", "")
    assert again.get("missing") is None
    again.close()


def _counting_backend(replies):
    calls = []

    async def handler(request):
        calls.append(request)
        reply = replies(len(calls))
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply)

    return FunctionBackend(handler, model="m"), calls


def test_hits_misses_and_key_parts(tmp_path):
    backend, _calls = _counting_backend(lambda n: f'{{"score": {n}}}')
    judge = Judge(backend, cache=tmp_path)

    async def go():
        a = await judge.judge("q", Verdict)
        b = await judge.judge("q", Verdict)
        c = await judge.judge("q", Verdict, temperature=0.5)
        d = await judge.judge("q", Verdict, seed=7)
        e = await judge.judge("q", Verdict, max_tokens=10)
        f = await judge.judge("q2", Verdict)
        return a, b, c, d, e, f

    a, b, c, d, e, f = asyncio.run(go())
    assert b.cached and b.value == a.value and b.key == a.key
    assert len({a.key, c.key, d.key, e.key, f.key}) == 5
    s = judge.stats()
    assert (s["cache_hits"], s["cache_misses"], s["requests"]) == (1, 5, 5)
    assert len(judge.cache) == 5


def test_model_and_base_url_are_part_of_the_key(tmp_path):
    def key_for(model, url):
        backend, _ = _counting_backend(lambda n: '{"score": 1}')
        backend.model, backend.base_url = model, url
        return asyncio.run(Judge(backend, cache=tmp_path).judge("q", Verdict)).key

    assert len({key_for("m", None), key_for("m2", None), key_for("m", "http://x/v1")}) == 3


def test_errors_are_never_cached(tmp_path):
    backend, _calls = _counting_backend(lambda n: JudgeServerError("boom") if n == 1 else '{"score": 1}')
    judge = Judge(backend, cache=tmp_path, max_retries=0)
    with pytest.raises(JudgeServerError):
        asyncio.run(judge.judge("q", Verdict))
    assert len(judge.cache) == 0
    assert asyncio.run(judge.judge("q", Verdict)).value.score == 1
    assert len(judge.cache) == 1


def test_cache_false_and_shared_instance(tmp_path, fake_llm, make_judge):
    fake_llm.rule = lambda call: Reply.json({"score": 1})
    judge = make_judge(cache=False)
    assert judge.cache is None

    async def go():
        await judge.judge("q", Verdict)
        await judge.judge("q", Verdict)
        await judge.aclose()

    asyncio.run(go())
    assert len(fake_llm.log) == 2 and judge.stats()["cache_hits"] == 0
    shared = ResponseCache(tmp_path)
    assert make_judge(cache=shared).cache is shared


def test_repair_replies_are_cached_so_a_rerun_sends_nothing(tmp_path):
    backend, calls = _counting_backend(lambda n: "Score: 1" if n == 1 else '{"score": 1}')
    judge = Judge(backend, cache=tmp_path)
    r = asyncio.run(judge.judge("q", Verdict))
    assert r.repaired and len(calls) == 2
    again = asyncio.run(judge.judge("q", Verdict))
    assert again.cached and again.value == r.value and len(calls) == 2
    # only the reply that validated is stored (under the request's key); "Score: 1" never is
    assert len(judge.cache) == 1 and judge.cache.get(r.key).response == '{"score": 1}'


def test_a_reply_that_failed_validation_is_never_cached(tmp_path):
    # before: after a successful repair the invalid first reply was stored under the request's key
    backend, _calls = _counting_backend(lambda n: '{"other": 5}' if n == 1 else '{"score": 2}')
    judge = Judge(backend, cache=tmp_path)
    r = asyncio.run(judge.judge("q", Verdict))
    assert r.repaired and r.value.score == 2
    assert [e.response for e in map(judge.cache.get, judge.cache.keys())] == ['{"score": 2}']


def test_cache_reads_are_fast(tmp_path):
    import time

    cache = ResponseCache(tmp_path)
    cache.put_many([CacheEntry(f"k{i}", "x" * 200) for i in range(2000)])
    t0 = time.perf_counter()
    for i in range(2000):
        assert cache.get(f"k{i}") is not None
    per_read = (time.perf_counter() - t0) / 2000
    assert per_read < 0.002, per_read  # typically ~20 µs: fine to do inline on the event loop
    cache.close()


def test_judge_key_is_the_canonical_json_of_all_fields():
    from ragmeter.judges.judge import judge_cache_key

    fields = dict(backend="openai", model="m", base_url="http://h/v1", messages=[{"role": "user", "content": "é"}],
                  temperature=0.0, max_tokens=10, schema={"title": "V", "type": "object"}, seed=None,
                  template_version="t@1")
    assert judge_cache_key(**fields) == cache_key(fields)
    assert judge_cache_key(**{**fields, "schema": None}) == cache_key({**fields, "schema": None})
