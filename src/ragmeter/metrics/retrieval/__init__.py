"""Retrieval metrics (no LLM): each module holds a per-query function, a vectorised batch function and
its registry entry."""

from . import (  # noqa: F401  (importing registers the metrics)
    average_precision,
    context_precision,
    context_recall,
    hit_rate,
    mrr,
    ndcg,
    precision,
    r_precision,
    recall,
)
