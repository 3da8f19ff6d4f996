"""Rank fusion of TREC runs: reciprocal rank fusion, CombSUM and CombMNZ.

A run is ``{qid: {docid: score}}``. Ranks inside a run follow trec_eval: by score descending,
ties broken by docid descending; the rank column of the file is ignored.

* RRF (Cormack, Clarke, Buettcher 2009): :math:`\\mathrm{RRF}(d) = \\sum_r w_r / (k_0 + \\mathrm{rank}_r(d))`,
  summed over the runs that retrieved d, :math:`k_0 = 60`.
* CombSUM / CombMNZ (Fox & Shaw 1994) on min-max normalised scores: per run and query,
  :math:`\\tilde s = (s - \\min) / (\\max - \\min)` (1.0 for every document when max = min);
  :math:`\\mathrm{CombSUM}(d) = \\sum_r w_r \\tilde s_r(d)`,
  :math:`\\mathrm{CombMNZ}(d) = |\\{r : d \\in r\\}| \\cdot \\mathrm{CombSUM}(d)`.

The output run is ranked as trec_eval ranks it -- fused score descending, ties by docid descending --
and cut at ``depth`` in that order. :func:`write_trec_run` numbers ranks in the same order and writes
every score exactly (shortest round-trip form), so two different scores never print alike: the rank
column of a written file and trec_eval's (and ``ragmeter trec``'s) ranking of it always agree.
This module carries a minimal TREC run reader/writer (``qid Q0 docid rank score tag``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from .._validate import check_choice, check_int
from ..errors import EmptyInputError, InputError, InvalidParameterError

Run = dict[str, dict[str, float]]
METHODS = ("rrf", "combsum", "combmnz")


def read_trec_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file: whitespace-separated ``qid Q0 docid rank score [tag]`` lines.

    Blank lines are skipped. A line with fewer than 5 fields, a non-numeric score, or a
    (qid, docid) pair seen twice is an :class:`~ragmeter.errors.InputError` naming the line.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("run file not found", path=str(p))
    run: Run = {}
    with open(p, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 5:
                raise InputError(f"expected 'qid Q0 docid rank score tag', got {line.strip()!r}",
                                 path=str(p), line=line_no)
            qid, _, docid, _, score = parts[:5]
            try:
                value = float(score)
            except ValueError:
                raise InputError(f"expected a numeric score, got {score!r}", path=str(p), line=line_no,
                                 field="score") from None
            if not math.isfinite(value):
                raise InputError(f"expected a finite score, got {score!r}", path=str(p), line=line_no, field="score")
            docs = run.setdefault(qid, {})
            if docid in docs:
                raise InputError(f"document {docid!r} appears twice for query {qid!r}", path=str(p), line=line_no)
            docs[docid] = value
    if not run:
        raise EmptyInputError("the run file has no lines", path=str(p))
    return run


def _exact(score: float) -> str:
    """The shortest text that reads back as exactly ``score`` (``3`` for 3.0)."""
    text = repr(float(score))
    return text[:-2] if text.endswith(".0") else text


def trec_order(docs: dict[str, float]) -> list[tuple[str, float]]:
    """A query's ``(docid, score)`` pairs in trec_eval's ranking order: score descending, docid descending."""
    return sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)


def write_trec_run(run: Run, path: str | os.PathLike[str] | None = None, *, tag: str = "ragmeter") -> str:
    """Format ``run`` as TREC lines ranked as trec_eval ranks them (score descending, ties by docid
    descending), scores written exactly, and write it to ``path``."""
    if not tag or any(c.isspace() for c in tag):
        raise InvalidParameterError(f"tag: expected a non-empty word without spaces, got {tag!r}")
    lines: list[str] = []
    for qid in sorted(run):
        lines.extend(f"{qid} Q0 {doc} {i} {_exact(score)} {tag}"
                     for i, (doc, score) in enumerate(trec_order(run[qid]), start=1))
    text = "\n".join(lines) + ("\n" if lines else "")
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def ranks(docs: dict[str, float]) -> dict[str, int]:
    """1-based ranks as trec_eval orders a query's documents: score descending, docid descending."""
    return {doc: i for i, (doc, _) in enumerate(trec_order(docs), start=1)}


def _minmax(docs: dict[str, float]) -> dict[str, float]:
    lo, hi = min(docs.values()), max(docs.values())
    if hi == lo:
        return dict.fromkeys(docs, 1.0)
    return {d: (s - lo) / (hi - lo) for d, s in docs.items()}


def fuse(
    runs: Sequence[Run],
    *,
    method: str = "rrf",
    k0: float = 60.0,
    weights: Sequence[float] | None = None,
    depth: int = 1000,
) -> Run:
    """Fuse several runs into one (see the module docstring for the formulas).

    Parameters
    ----------
    runs:
        Two or more runs ``{qid: {docid: score}}`` (one is allowed and returns it re-scored).
    method:
        ``"rrf"``, ``"combsum"`` or ``"combmnz"``.
    k0:
        RRF constant (> 0), 60 by default.
    weights:
        One non-negative weight per run (default all 1).
    depth:
        Keep the top ``depth`` documents per query (>= 1).

    Returns
    -------
    dict
        ``{qid: {docid: fused score}}`` over the union of the runs' queries, each in trec_eval's ranking
        order (ties by docid descending), cut at ``depth`` in that order.

    Examples
    --------
    >>> a = {"q": {"d1": 3.0, "d2": 2.0}}
    >>> b = {"q": {"d2": 9.0, "d3": 1.0}}
    >>> f = fuse([a, b])          # d2: 1/62 + 1/61; d1: 1/61; d3: 1/62
    >>> sorted(f["q"], key=f["q"].get, reverse=True)
    ['d2', 'd1', 'd3']
    """
    method = check_choice(method, "method", METHODS)
    depth = check_int(depth, "depth", minimum=1)
    if isinstance(k0, bool) or not isinstance(k0, int | float) or not k0 > 0 or not math.isfinite(k0):
        raise InvalidParameterError(f"k0: expected a positive number, got {k0!r}")
    if not runs:
        raise InvalidParameterError("runs: expected at least one run, got none")
    for i, r in enumerate(runs):
        if not isinstance(r, dict):
            raise InvalidParameterError(f"runs[{i}]: expected {{qid: {{docid: score}}}}, got {type(r).__name__}")
    w = [1.0] * len(runs) if weights is None else [float(x) for x in weights]
    if len(w) != len(runs) or any(not math.isfinite(x) or x < 0 for x in w):
        raise InvalidParameterError(f"weights: expected {len(runs)} non-negative numbers, got {weights!r}")
    out: Run = {}
    for qid in sorted({q for r in runs for q in r}):
        total: dict[str, float] = {}
        hits: dict[str, int] = {}
        for wr, r in zip(w, runs, strict=True):
            docs = r.get(qid)
            if not docs:
                continue
            contrib = ({d: 1.0 / (k0 + k) for d, k in ranks(docs).items()} if method == "rrf" else _minmax(docs))
            for d, v in contrib.items():
                total[d] = total.get(d, 0.0) + wr * v
                hits[d] = hits.get(d, 0) + 1
        if method == "combmnz":
            total = {d: v * hits[d] for d, v in total.items()}
        out[qid] = dict(trec_order(total)[:depth])
    return out
