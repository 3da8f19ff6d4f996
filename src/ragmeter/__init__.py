"""ragmeter: measure the quality of Retrieval-Augmented Generation pipelines.

The public names below are loaded on first use (PEP 562 ``__getattr__``), so ``import ragmeter``
stays cheap: no metric, numpy, pandas, pyarrow, scipy, rich or pydantic is imported until a name
that needs it is touched (``tests/test_import_time.py`` checks this).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule (relative to this package) that defines it
_LAZY: dict[str, str] = {
    "EmptyInputError": ".errors",
    "InputError": ".errors",
    "InvalidParameterError": ".errors",
    "JudgeError": ".errors",
    "MissingBackendError": ".errors",
    "RagmeterError": ".errors",
    "UnknownMetricError": ".errors",
    "assert_case": ".cases",
    "cases": ".cases",
    "Evaluator": ".evaluator",
    "aevaluate": ".evaluator",
    "evaluate": ".engines.entry",
    "ReadOptions": ".io",
    "read_samples": ".io",
    "write_samples": ".io",
    "passage_recall_score": ".metrics.generation.passage_recall_math",
    "MetricName": ".names",
    "parse_name": ".names",
    "canonical_name": ".registry",
    "get_evaluator": ".registry",
    "list_metrics": ".registry",
    "RunResult": ".results",
    "trec_evaluate": ".trec",
    "Context": ".types",
    "MetricResult": ".types",
    "Sample": ".types",
}

__all__ = [
    "Context",
    "EmptyInputError",
    "Evaluator",
    "InputError",
    "InvalidParameterError",
    "JudgeError",
    "MetricName",
    "MetricResult",
    "MissingBackendError",
    "RagmeterError",
    "ReadOptions",
    "RunResult",
    "Sample",
    "UnknownMetricError",
    "__version__",
    "aevaluate",
    "assert_case",
    "canonical_name",
    "cases",
    "evaluate",
    "get_evaluator",
    "list_metrics",
    "parse_name",
    "passage_recall_score",
    "read_samples",
    "trec_evaluate",
    "write_samples",
]

if TYPE_CHECKING:
    from .cases import assert_case, cases
    from .engines.entry import evaluate
    from .errors import (
        EmptyInputError,
        InputError,
        InvalidParameterError,
        JudgeError,
        MissingBackendError,
        RagmeterError,
        UnknownMetricError,
    )
    from .evaluator import Evaluator, aevaluate
    from .io import ReadOptions, read_samples, write_samples
    from .metrics.generation.passage_recall_math import passage_recall_score
    from .names import MetricName, parse_name
    from .registry import canonical_name, get_evaluator, list_metrics
    from .results import RunResult
    from .trec import trec_evaluate
    from .types import Context, MetricResult, Sample


def __getattr__(name: str) -> Any:
    """Import the submodule defining public ``name`` on first access and cache the value here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (loaded or not) plus the module's own globals."""
    return sorted(set(globals()) | set(__all__))
