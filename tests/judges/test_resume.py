"""Kill -9 mid-run and resume: nothing completed is asked again; several processes share a cache."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragmeter.errors import JudgeDryRun
from ragmeter.judges import from_spec

from .fake_server import ChatCall, Reply

WORKER = Path(__file__).with_name("_cache_worker.py")


class Verdict(BaseModel):
    id: int
    score: int


def rule(call: ChatCall) -> Reply:
    i = int(re.search(r"call (\d+)", call.user_text).group(1))
    return Reply.json({"id": i, "score": (i * 7) % 5})


def ids_of(entries) -> list[int]:
    return [int(re.search(r"call (\d+)", e.user_text).group(1)) for e in entries]


def worker(url, cache_dir, start, stop, out, concurrency=4) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), url, str(cache_dir), str(start), str(stop), str(out), str(concurrency)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def cached_ids(url: str, cache_dir: Path, ids) -> set[int]:
    """Which calls the cache can answer, found with a dry-run judge (it sends nothing)."""
    judge = from_spec(f"openai:fake-model@{url}", cache=cache_dir, dry_run=True)

    async def probe(i: int) -> int | None:
        try:
            await judge.judge(f"call {i}", Verdict)
            return i
        except JudgeDryRun:
            return None

    async def go():
        return await asyncio.gather(*(probe(i) for i in ids))

    found = {i for i in asyncio.run(go()) if i is not None}
    judge.close()
    return found


@pytest.mark.slow
def test_kill_minus_nine_and_resume(fake_llm, tmp_path):
    n = 200
    fake_llm.rule, fake_llm.latency = rule, 0.02
    cache_dir = tmp_path / "cache"

    proc = worker(fake_llm.url, cache_dir, 0, n, tmp_path / "partial.json")
    deadline = time.monotonic() + 60
    while fake_llm.kinds()["ok"] < n // 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the worker made no progress"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    answered_before = set(ids_of(fake_llm.log))
    done = cached_ids(fake_llm.url, cache_dir, range(n))
    assert done and done <= answered_before and len(done) < n
    # answered but not committed at the kill: at most the requests in flight (concurrency 4) plus the
    # replies already received whose cache write (after the slot is released) had not finished: 2 x 4
    assert len(answered_before - done) <= 8
    mark = len(fake_llm.log)

    resumed = worker(fake_llm.url, cache_dir, 0, n, tmp_path / "resumed.json")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    resent = ids_of(fake_llm.log[mark:])
    assert not set(resent) & done, "a call completed before the kill was sent again"
    assert sorted(resent) == sorted(set(range(n)) - done)  # each missing call exactly once
    assert json.loads(out) == len(done)  # cache hits of the resumed run

    fresh = worker(fake_llm.url, tmp_path / "fresh-cache", 0, n, tmp_path / "fresh.json")
    _, err = fresh.communicate(timeout=120)
    assert fresh.returncode == 0, err
    resumed_results = json.loads((tmp_path / "resumed.json").read_text())
    assert resumed_results == json.loads((tmp_path / "fresh.json").read_text())
    assert len(resumed_results) == n


@pytest.mark.slow
def test_several_processes_share_one_cache(fake_llm, tmp_path):
    fake_llm.rule, fake_llm.latency = rule, 0.005
    cache_dir = tmp_path / "shared"
    ranges = [(0, 100), (40, 140), (80, 180), (0, 180)]
    procs = [worker(fake_llm.url, cache_dir, a, b, tmp_path / f"out{k}.json", 8) for k, (a, b) in enumerate(ranges)]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err  # no "database is locked", no crash
    for k, (a, b) in enumerate(ranges):
        got = json.loads((tmp_path / f"out{k}.json").read_text())
        assert got == {str(i): [i, (i * 7) % 5] for i in range(a, b)}
    assert cached_ids(fake_llm.url, cache_dir, range(180)) == set(range(180))
    total = sum(b - a for a, b in ranges)
    assert 180 <= len(fake_llm.log) <= total
