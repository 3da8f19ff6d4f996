"""Evaluation engines: where and how the samples of a run are scored.

:func:`ragmeter.evaluate` (:mod:`.entry`) is the one entry point; its ``engine`` names one of these:

================  ===========================================================================
engine            what it does
================  ===========================================================================
``local``         this process (asyncio; a judge's concurrency is the only parallelism): the
                  ``Sample`` path (:class:`ragmeter.evaluator.LocalExecutor`), or the
                  :mod:`.columnar` fast path for a Parquet, JSONL or CSV file when every metric
                  is a retrieval metric.
``ray``           :mod:`.ray_engine`: the same evaluators and judge layer, run on the workers of
                  a Ray cluster (``pip install -e ".[ray]"`` in the ragmeter clone).
``processes``     :mod:`.processes`: the same evaluators and judge layer, run in a pool of local
                  worker processes (CPU-bound metrics on many cores, no Ray).
================  ===========================================================================

``engine="auto"`` (the default) is ``ray`` when Ray is initialised in the process, else ``local``.
Every engine writes the same ``results.jsonl`` (input order) and ``summary.json``
(:mod:`ragmeter.results`), so a run can move between engines without changing a single score.
"""

from __future__ import annotations

import warnings

#: The engine names ``ragmeter.evaluate(engine=...)`` and ``ragmeter eval --engine`` accept (and ``auto``).
ENGINES: tuple[str, ...] = ("local", "ray", "processes")

__all__ = ["ENGINES", "warn_alias"]


def warn_alias(name: str) -> None:
    """The DeprecationWarning of an alias of :func:`ragmeter.evaluate` (shown at its caller's call)."""
    warnings.warn(f"{name} is deprecated: call ragmeter.evaluate(data, metrics, engine=...), which takes the "
                  "same data and options", DeprecationWarning, stacklevel=3)
