"""Counters kept by a :class:`~ragmeter.judges.Judge`: calls, cache, retries, errors, tokens, cost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .base import Usage


@dataclass
class Tally:
    """Counts for one tag (metric) or for the whole judge."""

    calls: int = 0
    finished: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    requests: int = 0
    retries: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    errors: Counter[str] = field(default_factory=Counter)
    attempt_errors: Counter[str] = field(default_factory=Counter)
    recovered: Counter[str] = field(default_factory=Counter)
    dry_run_calls: int = 0
    estimated_prompt_tokens: int = 0

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Count tokens spent by one request and their cost (None: unknown price)."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_prompt_tokens += usage.cached_prompt_tokens
        if cost is None:
            self.cost_known = False
        else:
            self.cost += cost

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form; ``cost`` is None when any call's price was unknown."""
        return {
            "calls": self.calls,
            "finished": self.finished,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "requests": self.requests,
            "retries": self.retries,
            "repairs": self.repairs,
            "errors": dict(sorted(self.errors.items())),
            "attempt_errors": dict(sorted(self.attempt_errors.items())),
            "recovered": dict(sorted(self.recovered.items())),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "cost": round(self.cost, 8) if self.cost_known else None,
            "dry_run_calls": self.dry_run_calls,
            "estimated_prompt_tokens": self.estimated_prompt_tokens,
        }


class Stats:
    """A total :class:`Tally` plus one per tag; every count goes to both."""

    def __init__(self) -> None:
        self.total = Tally()
        self.by_tag: dict[str, Tally] = {}

    def tallies(self, tag: str) -> tuple[Tally, Tally]:
        """The total and the tag's tally."""
        t = self.by_tag.get(tag)
        if t is None:
            t = self.by_tag[tag] = Tally()
        return self.total, t

    def bump(self, tag: str, name: str, n: int = 1) -> None:
        """Add ``n`` to counter ``name`` in the total and the tag."""
        for t in self.tallies(tag):
            setattr(t, name, getattr(t, name) + n)

    def error(self, tag: str, kind: str, *, final: bool) -> None:
        """Count an error of type ``kind``: every failed attempt, and separately final failures."""
        for t in self.tallies(tag):
            if final:
                t.errors[kind] += 1
            else:
                t.attempt_errors[kind] += 1

    def recover(self, tag: str, kind: str, n: int = 1) -> None:
        """Count ``n`` final errors of type ``kind`` that the metric recovered from (it sent another
        request and the sample has its score): they stay in ``errors``, the requests having failed."""
        for t in self.tallies(tag):
            t.recovered[kind] += n


def unrecovered(stats: dict[str, Any]) -> dict[str, int]:
    """A :meth:`~ragmeter.judges.Judge.stats` snapshot's final errors by type less those its metrics
    recovered from (``recovered``): the failures that cost a sample its score."""
    recovered = stats.get("recovered") or {}
    out = {k: v - int(recovered.get(k, 0)) for k, v in (stats.get("errors") or {}).items()}
    return {k: v for k, v in sorted(out.items()) if v > 0}


#: :meth:`Judge.stats` entries that are settings, not counters: taken from ``now`` as they are
SETTINGS = frozenset({"extra_body"})


def stats_delta(now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """``now - before`` for two :meth:`Judge.stats` snapshots: the counts of what happened in between.

    Numbers are subtracted, nested dicts (``errors``, ``by_tag``) recursively, with zero entries
    dropped from counters; other values (model, backend, the :data:`SETTINGS` such as
    ``extra_body``...) are taken from ``now``. ``cost`` is
    None when the price is unknown (a judge's cost, once unknown, stays unknown). With
    ``before=None``, ``now`` is returned unchanged.
    """
    if before is None:
        return now
    out: dict[str, Any] = {}
    for key, value in now.items():
        old = before.get(key)
        if isinstance(value, bool) or value is None:
            out[key] = value
        elif key == "cost":
            out[key] = round(value - (old or 0.0), 8)
        elif isinstance(value, int | float) and isinstance(old, int | float) and not isinstance(old, bool):
            out[key] = value - old
        elif key in SETTINGS:
            out[key] = value
        elif isinstance(value, dict):
            sub = stats_delta(value, old if isinstance(old, dict) else {})
            if key == "by_tag":  # a tag with no call in between is dropped
                out[key] = {k: v for k, v in sub.items() if isinstance(v, dict) and v.get("calls", 0)}
            else:
                out[key] = {k: v for k, v in sub.items() if v != 0 and v != {}}
        else:
            out[key] = value
    return out


def dry_run_estimate(stats: dict[str, Any], price: tuple[float, float] | None,
                     max_tokens: int) -> list[dict[str, Any]]:
    """Per tag (metric) of a dry-run judge's :meth:`~ragmeter.judges.Judge.stats`: the calls that
    would be sent, their estimated prompt tokens, and the cost range in USD: ``cost_low`` counts
    the prompt tokens only, ``cost_high`` adds ``max_tokens`` output tokens per call (the most a
    reply can cost); both at the full input price, since which prefixes a provider serves from its
    cache is known only from its replies. Costs are None when the model's price is unknown. A last
    row ``total`` sums them."""
    rows: list[dict[str, Any]] = []
    for tag, t in sorted((stats.get("by_tag") or {}).items()):
        calls, tokens = int(t.get("dry_run_calls", 0)), int(t.get("estimated_prompt_tokens", 0))
        if calls or t.get("cache_hits"):
            rows.append({"metric": tag or "-", "calls": calls, "cache_hits": int(t.get("cache_hits", 0)),
                         "prompt_tokens": tokens})
    total = {"metric": "total", "calls": sum(r["calls"] for r in rows),
             "cache_hits": sum(r["cache_hits"] for r in rows), "prompt_tokens": sum(r["prompt_tokens"] for r in rows)}
    for r in [*rows, total]:
        if price is None:
            r["cost_low"] = r["cost_high"] = None
        else:
            r["cost_low"] = round(r["prompt_tokens"] * price[0] / 1e6, 6)
            r["cost_high"] = round(r["cost_low"] + r["calls"] * max_tokens * price[1] / 1e6, 6)
    return [*rows, total]
