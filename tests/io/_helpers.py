"""Small helpers shared by the io tests: write JSONL / CSV / Parquet files from Python values."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    """One JSON value per line (a str row is written as it is, to make malformed lines)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    """A CSV file; list/dict cells are JSON-encoded, as the format requires."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([json.dumps(c) if isinstance(c, list | dict) else c for c in row])
    return path
