"""Helpers to build run directories (results.jsonl + summary.json) by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def write_run(out: Path, rows: dict[str, dict[str, Any]], details: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write an OUTDIR. ``rows[id][metric]`` is a score, None (undefined) or "error".

    ``details[id]`` is attached to every metric of that sample (e.g. ``{"relevant_ranks": [3]}``).
    """
    out.mkdir(parents=True, exist_ok=True)
    metrics: list[str] = []
    for r in rows.values():
        for m in r:
            if m not in metrics:
                metrics.append(m)
    lines = []
    for sid, r in rows.items():
        rec: dict[str, Any] = {"id": sid, "metrics": {}}
        for m in metrics:
            v = r.get(m)
            err = {"type": "JudgeError", "message": "boom"} if v == "error" else None
            score = None if v in (None, "error") else v
            rec["metrics"][m] = {"score": score, "reason": "", "error": err,
                                 "details": dict((details or {}).get(sid, {})), "version": "1"}
        lines.append(json.dumps(rec))
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = {"format": 1, "metrics": {m: {} for m in metrics}, "run": {}}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return out


@pytest.fixture
def make_run(tmp_path):
    def make(name: str, rows: dict[str, dict[str, Any]], details: dict[str, dict[str, Any]] | None = None) -> Path:
        return write_run(tmp_path / name, rows, details)

    return make
