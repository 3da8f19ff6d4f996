"""Evaluation engines: where and how the samples of a data file are scored.

================  ===========================================================================
engine            what it does
================  ===========================================================================
``local``         :func:`ragmeter.evaluate` in this process (asyncio; a judge's concurrency is
                  the only parallelism). :mod:`.local` adds :func:`~.local.evaluate_file`, which
                  takes the :mod:`.columnar` fast path for Parquet files when every metric is a
                  retrieval metric.
``ray``           :func:`~.ray_engine.evaluate_ray`: the same evaluators and judge layer, run on
                  the workers of a Ray cluster (``pip install -e ".[ray]"`` in the ragmeter clone).
================  ===========================================================================

Every engine writes the same ``results.jsonl`` (input order) and ``summary.json``
(:mod:`ragmeter.results`), so a run can move between engines without changing a single score.
"""

from __future__ import annotations

#: The engine names ``ragmeter eval --engine`` accepts.
ENGINES: tuple[str, ...] = ("local", "ray")

__all__ = ["ENGINES"]
