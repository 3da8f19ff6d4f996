"""pytest plugin: evaluate RAG outputs inside a test suite and fail with a readable message.

Installed with ragmeter (entry point ``pytest11``); a test writes::

    def test_rag(ragmeter_eval):
        ragmeter_eval("tests/data/rag.jsonl", metrics=["faithfulness", "context_recall"],
                      fail_under={"faithfulness": 0.8})

(the data as :func:`ragmeter.evaluate` takes it: a path, a DataFrame, a list of dicts...)

or calls :func:`assert_scores` directly. The judge and the embedder come from ``ragmeter.yaml``
(in the working directory) or from the environment variables ``RAGMETER_JUDGE`` and
``RAGMETER_EMBEDDER``; with no embedder configured, the default is ``ragmeter.evaluate``'s
(``embedder="auto"``: the offline MiniLM model when it is installed and a metric needs it).
Judged results are cached across test runs by the judge cache, so a re-run costs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from .results import RunResult


def _worst(run: RunResult, metric: str, count: int) -> list[str]:
    import numpy as np

    scores = run.scores[metric]
    order = np.argsort(np.where(np.isnan(scores), np.inf, scores), kind="stable")
    lines = []
    for i in order[:count]:
        if np.isnan(scores[i]):
            break
        reason = ""
        if run.records is not None:
            reason = run.records[i]["metrics"][metric].get("reason", "")
        lines.append(f"    {run.ids[i]}: {scores[i]:.3f}  {reason[:160]}")
    return lines


def assert_scores(
    data: Any,
    metrics: Sequence[str] | None = None,
    fail_under: dict[str, float] | None = None,
    *,
    judge: Any = None,
    embedder: Any = "auto",
    statistic: str = "mean",
    max_error_rate: float = 0.0,
    worst: int = 5,
    **options: Any,
) -> RunResult:
    """Evaluate ``data`` with :func:`ragmeter.evaluate` and raise ``AssertionError`` when a threshold
    is missed.

    ``data`` is anything :func:`ragmeter.evaluate` takes (a path, a pandas DataFrame, a list of
    dicts or samples, a Hugging Face Dataset, RAGAS / DeepEval objects); ``options`` go to it as
    they are (``field_map``, ``on_error``, ``engine``...).

    The message names each failed check and lists the ``worst`` lowest-scoring samples of each
    failing metric with their reasons. Errored samples above ``max_error_rate`` (default: none
    tolerated) fail the assertion too. Returns the :class:`~ragmeter.results.RunResult`.

    ``judge`` and ``embedder`` are :func:`ragmeter.evaluate`'s, with the same defaults (no judge;
    ``embedder="auto"``, the offline MiniLM model when installed and needed; None for none).
    """
    from .engines.entry import evaluate
    from .gate import check_gate

    thresholds = dict(fail_under or {})
    if metrics is None and thresholds:
        metrics = list(thresholds)
    run = evaluate(data, metrics, judge=judge, embedder=embedder, **options)
    result = check_gate(run.summary(), thresholds, on=statistic, max_error_rate=max_error_rate)
    if result.passed:
        return run
    lines = ["ragmeter quality gate failed:"]
    for check in result.checks:
        if check.passed:
            continue
        lines.append(f"  - {check.message}")
        if check.name in run.scores:
            lines.append(f"    worst samples for {check.name}:")
            lines.extend(_worst(run, check.name, worst))
    raise AssertionError("\n".join(lines))


def _backends_from_config() -> tuple[Any, Any]:
    from .config import load_config

    cfg = load_config().eval
    judge_spec = os.environ.get("RAGMETER_JUDGE") or cfg.judge
    embedder_spec = os.environ.get("RAGMETER_EMBEDDER") or cfg.embedder
    judge: Any = None
    embedder: Any = "auto"  # no embedder configured: evaluate()'s default, as `ragmeter eval` does
    if judge_spec:
        from .judges import from_spec as judge_from_spec  # type: ignore[attr-defined]

        judge = judge_from_spec(judge_spec)
    if embedder_spec:
        from .embedders import from_spec as embedder_from_spec  # type: ignore[attr-defined]

        embedder = embedder_from_spec(embedder_spec)
    return judge, embedder


@pytest.fixture
def ragmeter_eval() -> Callable[..., RunResult]:
    """A callable ``(data, metrics=None, fail_under=None, **kw) -> RunResult`` that asserts thresholds
    (:func:`assert_scores`: ``data`` as :func:`ragmeter.evaluate` takes it).

    Backends are read once per test from ``ragmeter.yaml`` / ``RAGMETER_JUDGE`` /
    ``RAGMETER_EMBEDDER`` and only when a spec is configured.
    """
    backends: list[Any] = []

    def run(data: Any, metrics: Sequence[str] | None = None,
            fail_under: dict[str, float] | None = None, **kwargs: Any) -> RunResult:
        if not backends:
            backends.extend(_backends_from_config())
        kwargs.setdefault("judge", backends[0])
        kwargs.setdefault("embedder", backends[1])
        return assert_scores(data, metrics, fail_under, **kwargs)

    return run
