"""``ragmeter run``: call the user's app on every question, cache its outputs, evaluate them.

:func:`collect` calls an :class:`~ragmeter.app.targets.AppTarget` on each question, at most
``concurrency`` calls at a time, each within ``timeout`` seconds, a transient failure (HTTP 429 /
5xx, a dropped connection, a timeout) retried with backoff as the judge's calls are
(:mod:`ragmeter.app.calls`). Every output is cached as soon as it arrives, keyed by (question,
app identity, parameters) in the content-addressed SQLite store the judge uses
(:class:`~ragmeter.judges.cache.ResponseCache`, file ``app-cache.sqlite3``): a run killed with
``kill -9`` and started again calls the app only for the questions it had not finished, and a run
with other metrics calls it not at all. A call that raises, or still fails after its retries, is
an :class:`~ragmeter.errors.AppError` on that question (an errored sample on every metric), never
a crash; failures are not cached.

:func:`run_app` then writes the outputs as an ordinary ragmeter input file (``app_outputs.jsonl``:
the questions' fields with the app's ``answer`` and ``contexts``, re-scorable by ``ragmeter eval``
without the app) and evaluates them; ``summary.json``'s ``run.app`` records the app, the
parameters, the calls made / served from the cache, the retries, the errors and the per-call
latency (p50, p95, max, over the calls made). :func:`run_experiment` does so for every combination of parameter
values and compares the runs (:func:`~ragmeter.stats.compare_many`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._plugins import default_cache_dir
from ..engines.entry import evaluate
from ..errors import AppError, InputError, InvalidParameterError
from ..io import write_samples
from ..io.adapters import as_samples
from ..io.writers import sample_record
from ..judges.cache import CacheEntry, ResponseCache, cache_key, canonical_json
from ..results import RunResult
from ..stats import MultiComparison, compare, compare_many, holm
from ..types import Context, Sample
from .calls import RetryPolicy, call_app, error_message
from .targets import AppTarget, app_output

APP_CACHE_FILE = "app-cache.sqlite3"
OUTPUTS_FILE = "app_outputs.jsonl"
DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 120.0


@dataclass
class AppCall:
    """One question's call: the output (``{"answer", "contexts"}``, plain JSON) or the error, the
    latency in seconds (None when served from the cache; with retries, from the first attempt to
    the last reply), whether it came from the cache, and the retries it took."""

    output: dict[str, Any] | None
    error: AppError | None
    latency: float | None
    cached: bool
    retries: int = 0


class AppCache:
    """App outputs by (question, app identity, parameters), in ``<dir>/app-cache.sqlite3``."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        path = Path(directory) if directory is not None else default_cache_dir()
        path.mkdir(parents=True, exist_ok=True)
        self.store = ResponseCache(path / APP_CACHE_FILE)

    @staticmethod
    def key(question: str, identity: str, params: dict[str, Any]) -> str:
        return cache_key({"kind": "app-output", "question": question, "app": identity, "params": params})

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self.store.get(key)
        return None if entry is None else json.loads(entry.response)

    async def put(self, key: str, output: dict[str, Any], identity: str) -> None:
        await self.store.aput_many([CacheEntry(key, canonical_json(output), backend="app", model=identity, tag="app")])

    def close(self) -> None:
        self.store.close()


def plain_output(raw: Any) -> dict[str, Any]:
    """The app's raw output as plain JSON ``{"answer", "contexts"}`` (contexts as ragmeter reads
    them: ``{id, text, score, metadata}``, None values left out); raises AppError when unreadable."""
    answer, contexts = app_output(raw)
    out: dict[str, Any] = {"answer": answer}
    if contexts is not None:
        plain = []
        for k, c in enumerate(contexts):
            try:
                ctx = Context.model_validate({"text": c} if isinstance(c, str) else c)
            except ValueError as exc:
                raise AppError(f"context {k} of the app's output: {exc}") from exc
            plain.append({k2: v for k2, v in ctx.model_dump(mode="json").items() if v is not None and v != {}})
        out["contexts"] = plain
    return out


async def collect(app: AppTarget, questions: Sequence[Sample], params: dict[str, Any], *,
                  cache: AppCache | None, concurrency: int = DEFAULT_CONCURRENCY, timeout: float = DEFAULT_TIMEOUT,
                  retry: RetryPolicy | None = None,
                  progress: Callable[[AppCall], None] | None = None) -> list[AppCall]:
    """Call ``app`` on each question (its ``query``) with ``params``: the :class:`AppCall` per
    question, in order (see the module docstring; retries as ``retry`` says,
    :mod:`ragmeter.app.calls`). ``progress`` sees each question's call as it ends."""
    if concurrency < 1:
        raise InvalidParameterError(f"concurrency: expected at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    policy = retry if retry is not None else RetryPolicy()

    async def one(s: Sample) -> AppCall:
        key = AppCache.key(s.query, app.identity, params) if cache is not None else ""
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            call = AppCall(hit, None, None, True)
        else:
            t0 = time.perf_counter()
            got = await call_app(app, s.query, params, timeout=timeout, gate=gate, retry=policy)
            output = None
            try:
                output = plain_output(got.raw) if got.error is None else None
            except AppError as exc:
                got.error = exc
            latency = time.perf_counter() - t0
            if got.error is not None or output is None:
                message = error_message(got.error, timeout) if got.error is not None else "no output"
                if got.retries:
                    message += f" (after {got.retries} retr{'y' if got.retries == 1 else 'ies'})"
                call = AppCall(None, AppError(message, path=s.id), latency, False, got.retries)
            else:
                call = AppCall(output, None, latency, False, got.retries)
                if cache is not None:
                    await cache.put(key, output, app.identity)
        if progress is not None:
            progress(call)
        return call

    try:
        return list(await asyncio.gather(*(one(s) for s in questions)))
    finally:
        aclose = getattr(app, "aclose", None)
        if aclose is not None:
            await aclose()


def app_info(spec: str, params: dict[str, Any], calls: Sequence[AppCall]) -> dict[str, Any]:
    """``summary.json``'s ``run.app``: the app, the parameters, calls made / cached, retries, errors by type
    and the latency of the calls made (seconds: p50, p95, max; None when every output was cached)."""
    made = [c.latency for c in calls if not c.cached and c.latency is not None]
    lat = np.asarray(made, dtype=np.float64)
    errors: dict[str, int] = {}
    for c in calls:
        if c.error is not None:
            errors[c.error.message.split(":")[0][:60]] = errors.get(c.error.message.split(":")[0][:60], 0) + 1
    latency = None if not lat.size else {"p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95)),
                                        "max": float(lat.max()), "n": int(lat.size)}
    return {"app": spec, "params": params, "questions": len(calls), "calls": sum(not c.cached for c in calls),
            "cached": sum(c.cached for c in calls), "retries": sum(c.retries for c in calls),
            "errors": sum(c.error is not None for c in calls),
            "error_kinds": errors, "latency_s": latency}


def answered(questions: Sequence[Sample], calls: Sequence[AppCall]) -> list[Sample | InputError]:
    """Each question with the app's answer and contexts (an :class:`AppError` where the call failed)."""
    out: list[Sample | InputError] = []
    for s, c in zip(questions, calls, strict=True):
        if c.error is not None or c.output is None:
            out.append(c.error or AppError("no output", path=s.id))
            continue
        record = {k: v for k, v in sample_record(s).items() if k not in ("answer", "contexts")}
        record.update(c.output)  # the app's answer and contexts replace any the questions file held
        out.append(Sample.from_record(record))
    return out


def read_questions(questions: Any, field_map: dict[str, str] | None = None) -> list[Sample]:
    """The questions (any input ragmeter reads: a path, rows...); each needs a ``query``."""
    samples = [s for s in as_samples(questions, field_map=field_map) if isinstance(s, Sample)]
    for s in samples:
        if not s.query:
            raise InputError("a question needs a query (query / question / user_input / input)", path=str(s.id))
    if not samples:
        raise InvalidParameterError("questions: no question to ask")
    return samples


def run_app(app: AppTarget, spec: str, questions: Sequence[Sample], metrics: Sequence[str] | None, *,
            out_dir: str | os.PathLike[str], params: dict[str, Any] | None = None, judge: Any = None,
            embedder: Any = "auto", cache: AppCache | None = None, concurrency: int = DEFAULT_CONCURRENCY,
            timeout: float = DEFAULT_TIMEOUT, retry: RetryPolicy | None = None,
            progress: Callable[[AppCall], None] | None = None) -> RunResult:
    """Call ``app`` on ``questions`` with ``params``, write ``app_outputs.jsonl`` and evaluate
    ``metrics`` into ``out_dir`` (see the module docstring). ``spec`` names the app in the summary."""
    params = dict(params or {})
    calls = asyncio.run(collect(app, questions, params, cache=cache, concurrency=concurrency, timeout=timeout,
                                retry=retry, progress=progress))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    items = answered(questions, calls)
    write_samples([s for s in items if isinstance(s, Sample)], out / OUTPUTS_FILE)
    return evaluate(items, metrics, engine="local", judge=judge, embedder=embedder, out_dir=str(out),
                    keep_records=False,
                    run_info={"app": app_info(spec, params, calls)})


# ---- experiments -----------------------------------------------------------------------------------


def parse_param(text: str) -> tuple[str, list[Any]]:
    """``"top_k=3,5"`` -> ``("top_k", [3, 5])``: each value read as JSON when it is a JSON scalar
    (a number, true/false/null), else kept as text.

    >>> parse_param("top_k=3,5")
    ('top_k', [3, 5])
    >>> parse_param("model=a,b")
    ('model', ['a', 'b'])
    """
    name, sep, values = text.partition("=")
    if not sep or not name.strip().isidentifier() or not values:
        raise InvalidParameterError(f"--param: expected NAME=V1,V2,..., got {text!r}")
    out: list[Any] = []
    for v in values.split(","):
        try:
            parsed = json.loads(v)
        except json.JSONDecodeError:
            parsed = v
        out.append(parsed if isinstance(parsed, int | float | bool) or parsed is None else v)
    return name.strip(), out


def combinations(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, in the order given (the first name varies slowest)."""
    names = list(grid)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*(grid[n] for n in names))]


def label_of(params: dict[str, Any]) -> str:
    """``top_k=3,model=a`` (``default`` when there is no parameter)."""
    return ",".join(f"{k}={v}" for k, v in params.items()) or "default"


def run_dir_name(params: dict[str, Any]) -> str:
    """A directory name for a combination: ``top_k=3_model=a`` (characters other than letters,
    digits, ``=-.`` replaced by ``-``)."""
    text = "_".join(f"{k}={v}" for k, v in params.items()) or "default"
    return "".join(ch if ch.isalnum() or ch in "=-._" else "-" for ch in text)[:120]


@dataclass
class Experiment:
    """The runs of :func:`run_experiment`, one per combination, and their comparison (None with
    one combination). ``best[metric]`` names the best configuration, its mean and interval, and
    the configurations it beats with a Holm-corrected significant paired test."""

    labels: list[str]
    runs: list[RunResult]
    dirs: list[Path]
    comparison: Any
    best: dict[str, dict[str, Any]]


def best_configurations(dirs: Sequence[Path], mc: MultiComparison, alpha: float = 0.05) -> dict[str, dict[str, Any]]:
    """Per metric of ``mc``: the configuration with the best mean (the first of those tied:
    :meth:`MultiComparison.leaders`, the others under ``tied``), its mean and interval, and the
    configurations it beats: the paired test by question of the best against each other one
    (:func:`~ragmeter.stats.compare`), Holm-corrected over those tests, significant at ``alpha``
    with the difference in the best's favour."""
    summaries = [json.loads((d / "summary.json").read_text(encoding="utf-8"))["metrics"] for d in dirs]
    labels = mc.labels
    out: dict[str, dict[str, Any]] = {}
    for m in mc.metrics:
        leaders = mc.leaders(m)
        if not leaders:
            continue
        b = leaders[0]
        sign = 1.0 if mc.higher_is_better(m) else -1.0
        others = [k for k in range(len(dirs)) if k != b]
        rows = [compare(dirs[k], dirs[b], metrics=[m], correction="none").metrics[0] for k in others]
        adjusted = holm([r["p_value"] for r in rows])
        beats = [labels[k] for k, r, p in zip(others, rows, adjusted, strict=True)
                 if p is not None and p < alpha and r["diff"] is not None and r["diff"] * sign > 0]
        out[m] = {"best": labels[b], "tied": [labels[k] for k in leaders[1:]], "mean": summaries[b][m]["mean"],
                  "ci": summaries[b][m].get("ci"), "beats": beats,
                  "p_adjusted": {labels[k]: p for k, p in zip(others, adjusted, strict=True)}}
    return out


def run_experiment(app: AppTarget, spec: str, questions: Sequence[Sample], metrics: Sequence[str] | None, *,
                   out_dir: str | os.PathLike[str], grid: dict[str, list[Any]] | None = None,
                   **options: Any) -> Experiment:
    """:func:`run_app` for every combination of ``grid`` (``{"top_k": [3, 5], "model": ["a", "b"]}``),
    each into ``out_dir/<combination>/`` (one combination: ``out_dir`` itself), then the N-run
    comparison against the first combination (:func:`~ragmeter.stats.compare_many`, written to
    ``out_dir/comparison.{md,json}``) and the best configuration per metric."""
    if grid and not getattr(app, "takes_params", True):
        raise InvalidParameterError(
            f"APP {spec!r} is a LlamaIndex query engine, which takes the question only: the parameters "
            f"{', '.join(grid)} would not reach it. Address a function instead, e.g. "
            f"def app(question, {', '.join(grid)}): return build_engine({', '.join(grid)}).query(question)")
    combos = combinations(grid or {})
    out = Path(out_dir)
    dirs = [out] if len(combos) == 1 else [out / run_dir_name(c) for c in combos]
    labels = [label_of(c) for c in combos]
    runs = [run_app(app, spec, questions, metrics, out_dir=d, params=c, **options) for d, c in zip(dirs, combos,
                                                                                                  strict=True)]
    if len(combos) == 1:
        return Experiment(labels, runs, dirs, None, {})
    mc = compare_many([str(d) for d in dirs], labels=labels)
    best = best_configurations(dirs, mc)
    (out / "comparison.md").write_text(mc.to_markdown(), encoding="utf-8")
    (out / "comparison.json").write_text(json.dumps({**mc.to_dict(), "best": best}, indent=2, allow_nan=False)
                                         + "\n", encoding="utf-8")
    return Experiment(labels, runs, dirs, mc, best)

