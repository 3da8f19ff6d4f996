"""The Python entry points of the TREC side: :func:`trec_evaluate` and :func:`evaluate_trec`.

``trec_evaluate(qrels, run, ["map", "P.5,10", "ndcg_cut_10"])`` returns ``{"map": 0.17, "P_5": ...}``;
with ``per_query=True`` it returns ``{measure: {qid: value}}``. :func:`evaluate_trec` returns a
:class:`TrecResult` that also renders trec_eval's text output (what ``ragmeter trec`` prints).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .engine import Missing, build_batch
from .io import as_qrels, as_run
from .measures import Measure, resolve_measures


@dataclass(frozen=True)
class TrecResult:
    """Per-query values of every measure, for the evaluated queries (in ``strcmp`` order of qid)."""

    measures: tuple[Measure, ...]
    qids: NDArray[Any]
    values: dict[str, NDArray[np.float64]]
    runid: str

    def aggregate(self) -> dict[str, Any]:
        """``{measure: value}`` over all queries: the mean, a sum for num_ret / num_rel / num_rel_ret,
        the query count for num_q (ints are Python ints). ``runid`` is the run's name."""
        out: dict[str, Any] = {}
        for m in self.measures:
            v = self.values[m.name]
            if m.kind == "runid":
                out[m.name] = self.runid
            elif m.kind == "count":
                out[m.name] = len(self.qids)
            elif m.kind == "int":
                out[m.name] = round(float(v.sum()))
            else:
                out[m.name] = float(v.mean()) if len(v) else 0.0
        return out

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{measure: {qid: value}}`` (measures reported only as a summary, num_q and runid, left out)."""
        qids = self.qids.tolist()
        out: dict[str, dict[str, Any]] = {}
        for m in self.measures:
            if m.summary_only:
                continue
            v = self.values[m.name]
            vals = np.rint(v).astype(np.int64).tolist() if m.kind == "int" else v.tolist()
            out[m.name] = dict(zip(qids, vals, strict=True))
        return out

    def to_trec_lines(self, per_query: bool = False) -> list[str]:
        """trec_eval's output: ``measure<TAB>qid|all<TAB>value``, name padded to 22, floats ``%6.4f``.

        Per-query lines (all measures of a query, then the next query) precede the ``all`` lines.
        """
        lines: list[str] = []
        if per_query:
            shown = [m for m in self.measures if not m.summary_only]
            cols = [self.values[m.name] for m in shown]
            for i, q in enumerate(self.qids.tolist()):
                for m, col in zip(shown, cols, strict=True):
                    lines.append(f"{m.name:<22}\t{q}\t{_fmt(m.kind, col[i])}")
        for name, value in self.aggregate().items():
            kind = next(m.kind for m in self.measures if m.name == name)
            lines.append(f"{name:<22}\tall\t{value if kind in ('runid', 'count') else _fmt(kind, value)}")
        return lines


def _fmt(kind: str, value: float) -> str:
    if kind in ("int", "count"):
        return str(round(float(value)))
    return "%6.4f" % value  # noqa: UP031  (trec_eval's printf format, kept verbatim)


def evaluate_trec(qrels: Any, run: Any, measures: str | Iterable[str] = "official", *, missing: Missing = "zero",
                  rel_level: float = 1.0, max_ret: int | None = None) -> TrecResult:
    """Evaluate ``run`` against ``qrels`` and keep every per-query value (see :func:`trec_evaluate`)."""
    resolved = resolve_measures(measures)
    sources = (qrels, run) if isinstance(qrels, Mapping) and isinstance(run, Mapping) else None
    tb = build_batch(as_qrels(qrels), as_run(run), rel_level=rel_level, max_ret=max_ret, missing=missing,
                     sources=sources)
    order = np.argsort(tb.qids)  # report queries in strcmp order, as trec_eval
    values = {m.name: np.asarray(m.compute(tb), dtype=np.float64)[order] for m in resolved}
    return TrecResult(tuple(resolved), tb.qids[order], values, tb.runid)


def trec_evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, per_query: bool = False,
                  missing: Missing = "zero", rel_level: float = 1.0, max_ret: int | None = None) -> dict[str, Any]:
    """Evaluate a run with trec_eval's measures and semantics.

    Parameters
    ----------
    qrels, run:
        ``{qid: {docid: rel}}`` / ``{qid: {docid: score}}`` dicts, pandas DataFrames or pyarrow
        Tables with columns ``qid``, ``docid``, ``rel`` / ``score``, :class:`~ragmeter.trec.Qrels` /
        :class:`~ragmeter.trec.Run` objects, or paths of TREC files (``.gz`` allowed).
    measures:
        trec_eval names (``map``, ``P_10``, ``ndcg_cut_10``, ``recip_rank``, ``Rprec``,
        ``success_5``, ``map_cut_100``, ``recall_100``, ``ndcg``, ``num_q``, ``num_ret``,
        ``num_rel``, ``num_rel_ret``), trec_eval's parameter syntax (``P.5,10``), the nicknames
        ``official`` / ``all_trec``, or ragmeter names (``ndcg@10``, ``mrr``).
    per_query:
        Return ``{measure: {qid: value}}`` instead of ``{measure: mean}``.
    missing:
        Qrels queries with no results: ``"zero"`` scores them 0 and counts them (trec_eval ``-c``),
        ``"skip"`` leaves them out (trec_eval's default, pytrec_eval), ``"error"`` raises.
    rel_level:
        Grade at or above which a judgement is relevant for the binary measures (trec_eval ``-l``).
    max_ret:
        Evaluate only the first ``max_ret`` documents of each ranking (trec_eval ``-M``).

    Returns
    -------
    dict
        Means (sums for num_ret / num_rel / num_rel_ret, the count for num_q), or per-query values.

    Raises
    ------
    UnknownMetricError
        A measure name that is not supported (the message lists close matches).
    InputError
        Bad input (a malformed line, a duplicate docid, no query in common...).

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
    >>> trec_evaluate(qrels, run, ["P_2", "recip_rank", "num_rel"])
    {'num_rel': 2, 'recip_rank': 1.0, 'P_2': 0.5}
    """
    result = evaluate_trec(qrels, run, measures, missing=missing, rel_level=rel_level, max_ret=max_ret)
    if per_query:
        return result.per_query()
    out = result.aggregate()
    out.pop("runid", None)
    return out
