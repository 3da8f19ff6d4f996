"""Reading what the statistics commands take: runs (OUTDIR or RunResult), score files, label files."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import EmptyInputError, InputError, InvalidParameterError
from ..results import SCORED, RunResult

#: ``{metric: {sample id: score}}``: scored samples only.
ScoreTable = dict[str, dict[str, float]]


def load_run(run: RunResult | str | os.PathLike[str], name: str = "run") -> RunResult:
    """A :class:`RunResult` as is, or loaded from an OUTDIR (``results.jsonl`` + ``summary.json``)."""
    if isinstance(run, RunResult):
        return run
    if not isinstance(run, str | os.PathLike):
        raise InvalidParameterError(f"{name}: expected a RunResult or an OUTDIR path, got {type(run).__name__}")
    path = Path(run)
    if not path.is_dir():
        raise InputError("expected a run directory (OUTDIR of `ragmeter eval -o`) with results.jsonl and "
                         "summary.json, got a path that is not a directory", path=str(path))
    for f in ("results.jsonl", "summary.json"):
        if not (path / f).exists():
            raise InputError(f"missing {f}: is this the OUTDIR of `ragmeter eval -o`?", path=str(path))
    return RunResult.load(path)


def check_unique_ids(run: RunResult, name: str) -> None:
    """Raise InputError naming the first duplicated sample ids (matching by id needs unique ids)."""
    seen: set[str] = set()
    dups: list[str] = []
    for i in run.ids:
        if i in seen:
            dups.append(i)
        seen.add(i)
    if dups:
        raise InputError(f"{name}: sample ids must be unique to match runs, got duplicates "
                         f"{sorted(set(dups))[:10]}; give every sample a distinct id")


def run_scores(run: RunResult) -> ScoreTable:
    """``{metric: {id: score}}`` over scored samples of ``run`` (sample ids must be unique)."""
    check_unique_ids(run, "scores")
    out: ScoreTable = {}
    for m in run.metrics:
        st, sc = run.status[m], run.scores[m]
        out[m] = {i: float(sc[k]) for k, i in enumerate(run.ids) if st[k] == SCORED}
    return out


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Rows of a CSV or JSONL file with their 1-based line numbers."""
    if not path.exists():
        raise InputError("file not found", path=str(path))
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=line_no) from None
                if not isinstance(rec, dict):
                    raise InputError("expected a JSON object per line", path=str(path), line=line_no)
                rows.append((line_no, rec))
    elif path.suffix.lower() in (".csv", ".tsv"):
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            for k, rec in enumerate(reader, start=2):
                rows.append((k, dict(rec)))
    else:
        raise InputError("expected a .csv, .tsv or .jsonl file", path=str(path))
    if not rows:
        raise EmptyInputError("the file has no rows", path=str(path))
    return rows


def _number(value: Any, path: Path, line: int, field: str) -> float:
    if isinstance(value, bool):
        raise InputError(f"expected a number, got {value!r}", path=str(path), line=line, field=field)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"expected a number, got {value!r}", path=str(path), line=line, field=field) from None
    if not math.isfinite(v):
        raise InputError(f"expected a finite number, got {value!r}", path=str(path), line=line, field=field)
    return v


def read_long_table(path: str | os.PathLike[str], value_field: str, *, metric: str | None = None) -> ScoreTable:
    """Read a long-format CSV/JSONL file with columns ``id``, ``metric``, ``<value_field>``.

    Without a ``metric`` column every row belongs to ``metric`` (which must then be given).
    Empty values are skipped (no score / no label). A repeated (id, metric) pair is an error.
    """
    p = Path(path)
    out: ScoreTable = {}
    for line, rec in _rows(p):
        if "id" not in rec or rec["id"] in (None, ""):
            raise InputError("missing sample id", path=str(p), line=line, field="id")
        m = rec.get("metric") or metric
        if not m:
            raise InputError("missing metric name: add a 'metric' column or pass --metric", path=str(p),
                             line=line, field="metric")
        if value_field not in rec:
            raise InputError(f"missing column {value_field!r}", path=str(p), line=line, field=value_field)
        raw = rec[value_field]
        if raw is None or raw == "":
            continue
        sid = str(rec["id"])
        table = out.setdefault(str(m), {})
        if sid in table:
            raise InputError(f"sample {sid!r} has two {value_field}s for metric {m!r}", path=str(p), line=line)
        table[sid] = _number(raw, p, line, value_field)
    return out


def load_scores(source: RunResult | str | os.PathLike[str], *, metric: str | None = None) -> ScoreTable:
    """Judge scores from a RunResult, an OUTDIR, a ``results.jsonl`` file, or a long-format file.

    A long-format CSV/JSONL file has columns ``id``, ``metric`` (optional with ``metric=``) and
    ``score``.
    """
    if isinstance(source, RunResult):
        return run_scores(source)
    if not isinstance(source, str | os.PathLike):
        raise InvalidParameterError(f"scores: expected a RunResult or a path, got {type(source).__name__}")
    p = Path(source)
    if p.is_dir():
        return run_scores(load_run(p, "scores"))
    if p.name == "results.jsonl" and (p.parent / "summary.json").exists():
        return run_scores(load_run(p.parent, "scores"))
    return read_long_table(p, "score", metric=metric)
