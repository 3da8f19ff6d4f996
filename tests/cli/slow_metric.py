"""A plugin metric for the kill test: ``slow_len`` scores ``len(contexts) / 10`` after an async wait
of :data:`DELAY` seconds, at most :data:`CONCURRENCY` at a time, as a judge bounded by its
concurrency would. Importing this module registers it."""

from __future__ import annotations

import asyncio
from typing import Any

from ragmeter import registry
from ragmeter.registry import MetricSpec
from ragmeter.types import MetricResult, Sample

DELAY = 0.02
CONCURRENCY = 2
_gate: asyncio.Semaphore | None = None


class SlowLen:
    """``len(sample.contexts) / 10``, slowly."""

    version = "1"

    def __init__(self, spec: MetricSpec, name: Any) -> None:
        self.spec, self.name = spec, str(name)

    def evaluate(self, sample: Sample) -> MetricResult:
        return MetricResult(name=self.name, score=len(sample.contexts) / 10, version=self.version)

    async def aevaluate(self, sample: Sample) -> MetricResult:
        global _gate
        if _gate is None:
            _gate = asyncio.Semaphore(CONCURRENCY)
        async with _gate:
            await asyncio.sleep(DELAY)
        return self.evaluate(sample)


if "slow_len" not in {s.name for s in registry.list_metrics()}:
    _box: list[MetricSpec] = []
    _spec = MetricSpec(name="slow_len", summary="test metric", formula="len(contexts) / 10", edge_cases=(),
                       category="generation", factory=lambda n, j, e: SlowLen(_box[0], n), requires=("contexts",))
    _box.append(_spec)
    registry.register(_spec)
