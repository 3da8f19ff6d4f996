"""A plugin metric for the worker-failure test: ``crash_once`` kills its worker process the first
time it meets a sample whose metadata names a marker file that does not exist yet.

Importing this module registers the metric (in the driver and, through ``metric_modules``, in
every Ray worker).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragmeter import registry
from ragmeter.registry import MetricSpec
from ragmeter.types import MetricResult, Sample


class CrashOnce:
    """Scores ``len(sample.contexts)``; ``os._exit(1)`` once on a marked sample."""

    version = "1"

    def __init__(self, spec: MetricSpec, name: Any) -> None:
        self.spec, self.name = spec, str(name)

    def evaluate(self, sample: Sample) -> MetricResult:
        marker = sample.metadata.get("crash_marker")
        if marker and not Path(marker).exists():
            Path(marker).write_text(str(os.getpid()), encoding="utf-8")
            os._exit(1)  # the worker dies mid-task, as on an OOM kill or a lost node
        return MetricResult(name=self.name, score=float(len(sample.contexts)), version=self.version)

    async def aevaluate(self, sample: Sample) -> MetricResult:
        return self.evaluate(sample)


if "crash_once" not in {s.name for s in registry.list_metrics()}:
    _box: list[MetricSpec] = []
    _spec = MetricSpec(name="crash_once", summary="test metric", formula="len(contexts)", edge_cases=(),
                       category="generation", factory=lambda n, j, e: CrashOnce(_box[0], n),
                       requires=("contexts",))
    _box.append(_spec)
    registry.register(_spec)
