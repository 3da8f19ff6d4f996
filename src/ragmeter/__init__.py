"""ragmeter: measure the quality of Retrieval-Augmented Generation pipelines."""

__version__ = "0.1.0"

from .errors import (  # noqa: E402
    EmptyInputError,
    InputError,
    InvalidParameterError,
    JudgeError,
    MissingBackendError,
    RagmeterError,
    UnknownMetricError,
)
from .evaluator import Evaluator, aevaluate, evaluate  # noqa: E402
from .names import MetricName, parse_name  # noqa: E402
from .registry import canonical_name, get_evaluator, list_metrics  # noqa: E402
from .results import RunResult  # noqa: E402
from .types import Context, MetricResult, Sample  # noqa: E402

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
    "RunResult",
    "Sample",
    "UnknownMetricError",
    "__version__",
    "aevaluate",
    "canonical_name",
    "evaluate",
    "get_evaluator",
    "list_metrics",
    "parse_name",
]
