"""One test per dataset row: :func:`cases` parametrises a pytest test, :func:`assert_case` checks one row.

::

    import pytest
    import ragmeter

    @pytest.mark.parametrize("case", ragmeter.cases("qa.jsonl"))
    def test_rag(case):
        ragmeter.assert_case(case, {"faithfulness": 0.8, "recall@5": 0.5}, judge=my_judge)

Each row is its own test, named by the row's id (``test_rag[q17]``); a failing row's message names
the case, and for each metric below its threshold the score, the interval when the metric reports
one, the reason and the threshold. ``assert_case`` hides its own frames from pytest's traceback
(``__tracebackhide__``), so the traceback ends in the user's test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from .engines.entry import evaluate
from .errors import InvalidParameterError
from .io import read_samples
from .registry import canonical_name, resolve_name
from .types import Sample


def cases(path: str | os.PathLike[str], *, field_map: dict[str, str] | None = None,
          format: str | None = None) -> list[Any]:
    """The rows of the data file ``path`` as pytest parameters, one per row, each with the row's id
    as its test id (:func:`ragmeter.read_samples` reads them; a bad row raises its InputError, which
    names the file, the line and the field)."""
    import pytest  # a test-time dependency: only the tests that parametrise with cases() need it

    # on_error="raise" (the default): a bad row raises, so every item is a Sample
    samples = cast("Iterator[Sample]", read_samples(path, field_map=field_map, format=format))
    return [pytest.param(s, id=s.id) for s in samples]


def _interval(details: Mapping[str, Any]) -> str:
    """`` [lo, hi]`` when the metric's details carry an interval (``ci``), else ''."""
    ci = details.get("ci") if isinstance(details, Mapping) else None
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(isinstance(v, int | float) for v in ci):
        return f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return ""


def case_failures(case_id: str, results: Mapping[str, Mapping[str, Any]], fail_under: Mapping[str, float],
                  directions: Mapping[str, bool]) -> list[str]:
    """The lines of :func:`assert_case`'s message for one evaluated row (``results``: metric ->
    its record, as ``results.jsonl`` holds it): one per metric that errored, was undefined, or is on
    the failing side of its threshold ('below' for a higher-is-better metric, 'above' otherwise).

    >>> case_failures("q1", {"mrr": {"score": 0.25, "reason": "first relevant at rank 4"}}, {"mrr": 0.5},
    ...               {"mrr": True})
    ["case 'q1': mrr = 0.250, below its threshold 0.5: first relevant at rank 4"]
    """
    out = []
    for name, threshold in fail_under.items():
        r = results[name]
        reason = r.get("reason") or "no reason given"
        err = r.get("error")
        if err:
            out.append(f"case {case_id!r}: {name} errored ({err.get('type')}: {err.get('message')}), "
                       f"threshold {threshold:g}")
            continue
        score = r.get("score")
        if score is None:
            out.append(f"case {case_id!r}: {name} is undefined ({reason}), threshold {threshold:g}")
            continue
        higher = directions.get(name, True)
        if (score < threshold) if higher else (score > threshold):
            out.append(f"case {case_id!r}: {name} = {score:.3f}{_interval(r.get('details') or {})}, "
                       f"{'below' if higher else 'above'} its threshold {threshold:g}: {reason}")
    return out


def assert_case(case: Sample | Mapping[str, Any], fail_under: Mapping[str, float], *,
                metrics: Sequence[str] | None = None, judge: Any = None, embedder: Any = "auto") -> dict[str, Any]:
    """Evaluate one row and raise ``AssertionError`` when a metric misses its threshold.

    ``fail_under``: ``{metric: threshold}`` (a lower-is-better metric such as
    ``hallucination_rate`` fails above it). ``metrics``: more metrics to compute (default: those
    of ``fail_under``). ``judge`` / ``embedder``: as :func:`ragmeter.evaluate` takes them. An errored
    or undefined metric fails too. Returns the row's results, ``{metric: record}`` with ``score``,
    ``reason``, ``details`` and ``error``, when every threshold holds.
    """
    __tracebackhide__ = True  # pytest shows the user's frames, not these
    if not fail_under:
        raise InvalidParameterError("assert_case: expected at least one METRIC: THRESHOLD in fail_under, got none")
    wanted = {canonical_name(m): float(t) for m, t in fail_under.items()}
    names = list(dict.fromkeys([*(canonical_name(m) for m in (metrics or ())), *wanted]))
    run = evaluate([case], names, engine="local", judge=judge, embedder=embedder)
    records = run.records or []
    results = {canonical_name(m): r for m, r in records[0]["metrics"].items()} if records else {}
    directions = {m: bool(resolve_name(m)[0].higher_is_better) for m in wanted}
    case_id = run.ids[0] if run.ids else "?"
    failures = case_failures(case_id, results, wanted, directions)
    if failures:
        raise AssertionError("\n".join(failures))
    return results
