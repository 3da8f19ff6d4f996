"""Slices: a run's metrics per value of a field, each slice tested against the rest of the run.

A *field* is one of

* a key of the rows' metadata (any key ragmeter does not read: ``category``, ``lang``);
* a key of the contexts' metadata (``source``, ``title``): a sample belongs to every value its
  contexts have (a sample whose contexts come from two sources is in both slices);
* a derived field: ``answer_length`` (words in the answer, in buckets :data:`ANSWER_BUCKETS`)
  or ``n_contexts`` (the number of retrieved contexts).

Per slice and metric: the mean over the slice's scored samples with its confidence interval
(:func:`~ragmeter.stats.metric_ci`, the interval ``summary.json`` gives the whole run: Wilson for
0/1 scores, else BCa bootstrap), the mean of the other samples, and Welch's two-sample t-test of
the slice against the rest (the samples differ, so the paired tests of :mod:`.paired` do not
apply). The p-values of one field (every slice x metric) are Holm-corrected together
(:func:`~ragmeter.stats.holm`). A slice with fewer than ``min_n`` scored samples (or a rest with
fewer) gets no interval and no test, and says so in ``note``.

Samples without a value for the field form the slice ``(none)``; beyond :data:`MAX_SLICES` values
the smallest slices are pooled as ``(other)``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._dist import welch_p
from ..errors import InvalidParameterError
from ..intervals import metric_ci
from ..io.adapters import as_samples
from ..types import Sample
from .paired import holm

__all__ = ["ANSWER_BUCKETS", "DERIVED_FIELDS", "MIN_SLICE_N", "slice_keys", "slice_run", "slice_scores",
           "slices_markdown"]

#: Fewest scored samples a slice (and the rest) needs for an interval and a test.
MIN_SLICE_N = 5
#: Most slices reported per field (the smallest others are pooled as ``(other)``).
MAX_SLICES = 30
#: ``answer_length`` buckets: (label, fewest words, most words).
ANSWER_BUCKETS = (("0-9 words", 0, 9), ("10-29 words", 10, 29), ("30-99 words", 30, 99),
                  ("100+ words", 100, math.inf))
#: Fields computed from the samples rather than read from metadata.
DERIVED_FIELDS = ("answer_length", "n_contexts")
NONE, OTHER = "(none)", "(other)"


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _answer_bucket(answer: str | None) -> str:
    if answer is None:
        return NONE
    words = len(answer.split())
    return next(label for label, lo, hi in ANSWER_BUCKETS if lo <= words <= hi)


def slice_keys(field: str, records: Sequence[dict[str, Any]],
               samples: dict[str, Sample] | None = None) -> tuple[list[list[str]], str]:
    """Per record (a ``results.jsonl`` line), the slice values it belongs to, and the field's kind
    (``"derived"``, ``"row metadata"`` or ``"context metadata"``).

    A derived field needs the samples (by id); a metadata key is looked up in the records' row
    metadata first, then in their contexts' metadata.
    """
    if field in DERIVED_FIELDS:
        if samples is None:
            raise InvalidParameterError(f"slice {field!r}: a derived field needs the input data (pass data=...)")
        out = []
        for rec in records:
            s = samples.get(str(rec.get("id")))
            if s is None:
                out.append([NONE])
            elif field == "answer_length":
                out.append([_answer_bucket(s.answer)])
            else:
                out.append([str(len(s.contexts))] if s.has("contexts") else [NONE])
        return out, "derived"
    if any(field in (rec.get("metadata") or {}) for rec in records):
        return [[_label(v)] if (v := (rec.get("metadata") or {}).get(field)) is not None else [NONE]
                for rec in records], "row metadata"
    if any(field in c for rec in records for c in rec.get("context_metadata") or ()):
        out = []
        for rec in records:
            values = {_label(c[field]) for c in rec.get("context_metadata") or () if c.get(field) is not None}
            out.append(sorted(values) or [NONE])
        return out, "context metadata"
    raise InvalidParameterError(
        f"slice {field!r}: no sample has it in its metadata or its contexts' metadata; expected a key the "
        f"rows or contexts carry, or one of {', '.join(DERIVED_FIELDS)}")


def _pool(keys: list[list[str]]) -> list[list[str]]:
    """``keys`` with the values beyond the :data:`MAX_SLICES` largest pooled as ``(other)``."""
    counts: dict[str, int] = {}
    for ks in keys:
        for k in ks:
            counts[k] = counts.get(k, 0) + 1
    if len(counts) <= MAX_SLICES:
        return keys
    keep = set(sorted(counts, key=lambda k: (-counts[k], k))[:MAX_SLICES - 1])
    return [sorted({k if k in keep else OTHER for k in ks}) for ks in keys]


def _welch(a: np.ndarray, b: np.ndarray) -> float | None:
    """Welch's two-sided t-test p-value (None when undefined: no variance on either side)."""
    p = welch_p(a, b)
    return None if math.isnan(p) else p


def slice_scores(scores: dict[str, np.ndarray], keys: list[list[str]], *, confidence: float = 0.95,
                 seed: int = 0, min_n: int = MIN_SLICE_N) -> list[dict[str, Any]]:
    """The slices of one field: per slice value, its sample count and per metric its mean, interval,
    the rest's mean, Welch's p-value and the Holm-adjusted one (over every slice x metric here).

    ``scores[m][i]`` is sample ``i``'s score (NaN: none), ``keys[i]`` the slice values it is in.
    """
    keys = _pool(keys)
    values = sorted({k for ks in keys for k in ks}, key=lambda k: (k in (NONE, OTHER), k))
    out: list[dict[str, Any]] = []
    tests: list[tuple[dict[str, Any], float | None]] = []
    for value in values:
        member = np.array([value in ks for ks in keys], dtype=bool)
        row: dict[str, Any] = {"value": value, "samples": int(member.sum()), "metrics": {}}
        for m, col in scores.items():
            x = np.asarray(col, dtype=np.float64)
            inside, rest = x[member & ~np.isnan(x)], x[~member & ~np.isnan(x)]
            cell: dict[str, Any] = {"mean": float(inside.mean()) if inside.size else None, "n": int(inside.size),
                                    "rest_mean": float(rest.mean()) if rest.size else None,
                                    "rest_n": int(rest.size), "ci": None, "ci_method": None, "p": None,
                                    "p_adj": None, "note": None}
            if inside.size < min_n or rest.size < min_n:
                side = "" if inside.size < min_n else " in the rest"
                cell["note"] = f"too few scored samples{side} ({min(inside.size, rest.size)} < {min_n}): no interval"
            else:
                ci = metric_ci(inside, confidence=confidence, seed=seed)
                cell["ci"], cell["ci_method"] = ci.ci, ci.method
                cell["p"] = _welch(inside, rest)
                if cell["p"] is None:
                    cell["note"] = "no test: every score is the same on both sides"
                tests.append((cell, cell["p"]))
            row["metrics"][m] = cell
        out.append(row)
    for (cell, _), p_adj in zip(tests, holm([p for _, p in tests]), strict=True):
        cell["p_adj"] = p_adj
    return out


def _read_records(out_dir: Path) -> list[dict[str, Any]]:
    """The ``results.jsonl`` lines of a run directory, each with its metadata and scores only."""
    path = out_dir / "results.jsonl"
    if not path.is_file():
        raise InvalidParameterError(f"{out_dir}: not a run directory (no results.jsonl)")
    records = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                records.append({k: rec[k] for k in ("id", "metrics", "metadata", "context_metadata") if k in rec})
    return records


def slice_run(run: str | os.PathLike[str], fields: Sequence[str], *,
              data: str | os.PathLike[str] | Iterable[Any] | None = None, field_map: dict[str, str] | None = None,
              confidence: float = 0.95, seed: int = 0, min_n: int = MIN_SLICE_N) -> dict[str, Any]:
    """Per-slice aggregates of the run directory ``run`` for each of ``fields`` (see the module
    docstring): ``{field: {"kind", "slices": [...], "min_n", "test", "correction"}}``, the
    ``slices`` block of ``summary.json``.

    ``data`` (the run's input: a path or rows, read with ``field_map``) is needed for the derived
    fields only.

    Examples
    --------
    >>> import tempfile, ragmeter
    >>> rows = [{"id": str(i), "answer": "a", "reference": "a" if i % 2 else "b", "topic": "x" if i < 10 else "y"}
    ...         for i in range(20)]
    >>> out = tempfile.mkdtemp()
    >>> _ = ragmeter.evaluate(rows, ["token_f1"], out_dir=out)
    >>> s = slice_run(out, ["topic"])["topic"]["slices"]
    >>> [(x["value"], x["samples"], x["metrics"]["token_f1"]["mean"]) for x in s]
    [('x', 10, 0.5), ('y', 10, 0.5)]
    """
    out_dir = Path(run)
    records = _read_records(out_dir)
    samples = None
    if any(f in DERIVED_FIELDS for f in fields):
        if data is None:
            raise InvalidParameterError("slices: a derived field (answer_length, n_contexts) needs data=")
        samples = {s.id: s for s in as_samples(data, field_map=field_map, on_error="skip") if isinstance(s, Sample)}
    metrics = list(records[0]["metrics"]) if records else []
    scores = {m: np.array([_score(r, m) for r in records], dtype=np.float64) for m in metrics}
    out: dict[str, Any] = {}
    for field in fields:
        keys, kind = slice_keys(field, records, samples)
        out[field] = {"kind": kind, "test": "welch-t", "correction": "holm", "min_n": min_n,
                      "confidence": confidence,
                      "slices": slice_scores(scores, keys, confidence=confidence, seed=seed, min_n=min_n)}
    return out


def _score(rec: dict[str, Any], m: str) -> float:
    s = (rec.get("metrics") or {}).get(m, {}).get("score")
    return float("nan") if s is None else float(s)


def add_to_summary(out_dir: str | os.PathLike[str], slices: dict[str, Any]) -> None:
    """Write ``slices`` under ``"slices"`` in the run directory's ``summary.json`` (strict JSON)."""
    path = Path(out_dir) / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary["slices"] = slices
    path.write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    return "-" if x is None else (f"{x:.2g}" if x < 0.001 else f"{x:.3f}")


def slice_rows(field: str, block: dict[str, Any]) -> list[list[str]]:
    """The table rows of one field's slices: slice, metric, n, mean [ci], rest mean, p, p_adj, note."""
    rows = []
    for sl in block["slices"]:
        for m, c in sl["metrics"].items():
            ci = f" [{_fmt(c['ci'][0])}, {_fmt(c['ci'][1])}]" if c["ci"] else ""
            rows.append([f"{field}={sl['value']}", m, str(c["n"]), _fmt(c["mean"]) + ci, _fmt(c["rest_mean"]),
                         _p(c["p"]), _p(c["p_adj"]), c["note"] or ""])
    return rows


SLICE_COLUMNS = ("slice", "metric", "n", "mean [95% CI]", "rest", "p", "p_adj (Holm)", "note")


def slices_markdown(slices: dict[str, Any]) -> str:
    """The slices as one Markdown table per field."""
    parts = []
    for field, block in slices.items():
        lines = [f"### Slices by `{field}` ({block['kind']})", "",
                 "| " + " | ".join(SLICE_COLUMNS) + " |", "|" + "---|" * len(SLICE_COLUMNS)]
        lines += ["| " + " | ".join(r) + " |" for r in slice_rows(field, block)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
