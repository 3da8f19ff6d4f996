"""ragmeter: measure the quality of Retrieval-Augmented Generation pipelines."""

__version__ = "0.1.0"

from .errors import (
    EmptyInputError,
    InputError,
    InvalidParameterError,
    JudgeError,
    MissingBackendError,
    RagmeterError,
    UnknownMetricError,
)
from .evaluator import Evaluator, aevaluate, evaluate
from .io import read_samples, write_samples
from .metrics.generation.passage_recall_math import passage_recall_score
from .names import MetricName, parse_name
from .registry import canonical_name, get_evaluator, list_metrics
from .results import RunResult
from .trec import trec_evaluate
from .types import Context, MetricResult, Sample

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
    "passage_recall_score",
    "read_samples",
    "trec_evaluate",
    "write_samples",
]
