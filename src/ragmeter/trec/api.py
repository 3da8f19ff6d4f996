"""The Python entry point of the TREC side: :func:`evaluate` (``ragmeter.trec.evaluate``).

``evaluate(qrels, run, ["map", "P.5,10", "ndcg_cut_10"])`` returns a :class:`TrecResult`: its
:meth:`~TrecResult.aggregate` is ``{"map": 0.17, "P_5": ..., "runid": ...}``, its
:meth:`~TrecResult.per_query` ``{measure: {qid: value}}``, and :meth:`~TrecResult.to_trec_lines`
trec_eval's text output (what ``ragmeter trec`` prints). :func:`trec_evaluate` (also
``ragmeter.trec_evaluate``) and :func:`evaluate_trec` are aliases of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .engine import Missing, build_batch
from .ids import compact_strings
from .io import as_qrels, as_run
from .measures import Measure, resolve_measures


@dataclass(frozen=True)
class TrecResult:
    """Per-query values of every measure, for the evaluated queries (in ``strcmp`` order of qid).

    ``num_rel_all`` -- trec_eval's ``num_rel`` summary under ``-c`` (every grade > 0 in the qrels), else None.
    """

    measures: tuple[Measure, ...]
    qids: NDArray[Any]
    values: dict[str, NDArray[Any]]
    runid: str
    num_rel_all: int | None = None

    def aggregate(self) -> dict[str, Any]:
        """``{measure: value}`` over all queries: the mean; exp of the mean for gm_map / gm_bpref; a sum
        for num_ret / num_rel / num_rel_ret / num_nonrel_judged_ret (Python ints); the query count for
        num_q; ``runid`` is the run's name. relstring (per query only) is left out."""
        out: dict[str, Any] = {}
        for m in self.measures:
            v = self.values[m.name]
            if m.summary == "runid":
                out[m.name] = self.runid
            elif m.summary == "count":
                out[m.name] = len(self.qids)
            elif m.summary == "sum":
                total = _seq_sum(v)
                if m.name == "num_rel" and self.num_rel_all is not None:
                    total = float(self.num_rel_all)
                out[m.name] = int(total)
            elif m.summary == "gm":
                out[m.name] = float(np.exp(_seq_sum(v) / len(v))) if len(v) else 0.0
            elif m.summary == "mean":
                out[m.name] = _seq_sum(v) / len(v) if len(v) else 0.0
        return out

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{measure: {qid: value}}``: the measures trec_eval prints per query, plus gm_map / gm_bpref as
        their per-query ``log(max(v, 0.00001))`` (as pytrec_eval); num_q and runid are left out."""
        qids = compact_strings(self.qids.tolist())
        out: dict[str, dict[str, Any]] = {}
        for m in self.measures:
            if m.summary in ("count", "runid"):
                continue
            v = self.values[m.name]
            vals = np.trunc(v).astype(np.int64).tolist() if m.kind == "int" else v.tolist()
            out[m.name] = dict(zip(qids, vals, strict=True))
        return out

    def to_trec_lines(self, per_query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output: ``measure<TAB>qid|all<TAB>value``, name padded to 22, floats ``%6.4f``.

        Per-query lines (all measures of a query, then the next query) precede the ``all`` lines;
        ``summary=False`` (trec_eval ``-n``) leaves the ``all`` lines out.
        """
        lines: list[str] = []
        if per_query:
            shown = [m for m in self.measures if m.per_query]
            cols = [self.values[m.name] for m in shown]
            for i, q in enumerate(self.qids.tolist()):
                for m, col in zip(shown, cols, strict=True):
                    lines.append(f"{m.name:<22}\t{q}\t{_fmt(m.kind, col[i])}")
        if summary:
            agg = self.aggregate()
            for m in self.measures:
                if m.name in agg:
                    value = agg[m.name]
                    text = value if m.summary == "runid" else _fmt(m.kind, value)
                    lines.append(f"{m.name:<22}\tall\t{text}")
        return lines


def _seq_sum(v: NDArray[Any]) -> float:
    """Sum in query order, one addition at a time (trec_eval's accumulation, to the last bit)."""
    return float(np.cumsum(v)[-1]) if len(v) else 0.0


def _fmt(kind: str, value: Any) -> str:
    if kind == "str":
        return f"'{value}'"
    if kind == "int":
        return str(int(value))
    if value != value:  # NaN: glibc prints the sign bit (0/0 is -nan on x86), padded to the width 6
        return "%6s" % ("-nan" if np.signbit(value) else "nan")  # noqa: UP031
    return "%6.4f" % value  # noqa: UP031  (trec_eval's printf format, kept verbatim)


#: trec_eval -c: after evaluating an absent query's one-document stand-in ranking, these exact column
#: names are reset (trec_eval.c matches ``num_ret``, ``utility``, ``relstring``, ``rbp_resid`` exactly and
#: every name starting with ``unj``; parameterised columns such as ``utility_2,-1,0,0`` keep their value).
def _reset_absent(name: str) -> Any:
    if name == "relstring":
        return ""
    if name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj"):
        return 0.0
    return None


def evaluate(qrels: Any, run: Any, measures: str | Iterable[str] = "official", *, missing: Missing = "zero",
             rel_level: float = 1.0, max_ret: int | None = None, judged_only: bool = False, num_docs: int = 0,
             qrels_num_rel: bool = False) -> TrecResult:
    """Evaluate a run with trec_eval's measures and semantics; every per-query value is kept.

    Parameters
    ----------
    qrels, run:
        ``{qid: {docid: rel}}`` / ``{qid: {docid: score}}`` dicts, pandas DataFrames or pyarrow
        Tables with columns ``qid``, ``docid``, ``rel`` / ``score``, :class:`~ragmeter.trec.Qrels` /
        :class:`~ragmeter.trec.Run` objects, or paths of TREC files (``.gz`` allowed).
    measures:
        Any trec_eval 10.0 measure (``map``, ``bpref``, ``P_10``, ``iprec_at_recall_0.50``, ``infAP``,
        ``ndcg``, ``rbp``... see docs/trec.md), trec_eval's parameter syntax (``P.5,10``,
        ``ndcg.1=3,2=9``, ``Rprec_mult.0.2``), the nicknames ``official`` (default) / ``all_trec`` /
        ``set``, or ragmeter names (``ndcg@10``, ``mrr``).
    missing:
        Qrels queries with no results: ``"zero"`` scores them 0 and counts them (trec_eval ``-c``),
        ``"skip"`` leaves them out (trec_eval's default, pytrec_eval), ``"error"`` raises.
    rel_level:
        Grade at or above which a judgement is relevant for the binary measures (trec_eval ``-l``).
    max_ret:
        Evaluate only the first ``max_ret`` documents of each ranking (trec_eval ``-M``).
    judged_only:
        Drop retrieved documents without a judgement (absent from the qrels or a negative grade)
        before evaluating (trec_eval ``-J``).
    num_docs:
        Number of documents in the collection, used only by ``utility`` (trec_eval ``-N``).
    qrels_num_rel:
        With ``missing="zero"``, report trec_eval ``-c``'s ``num_rel`` summary: the judgements with
        grade > 0 in the whole qrels whatever ``rel_level`` (the command line sets it).

    Returns
    -------
    TrecResult
        ``aggregate()``: means (sums for num_ret / num_rel / num_rel_ret, the count for num_q, the
        run's name for runid); ``per_query()``: ``{measure: {qid: value}}``; ``to_trec_lines()``.

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
    >>> evaluate(qrels, run, ["P_2", "recip_rank", "num_rel"]).aggregate()
    {'num_rel': 2, 'recip_rank': 1.0, 'P_2': 0.5}
    """
    resolved = resolve_measures(measures)
    sources = (qrels, run) if isinstance(qrels, Mapping) and isinstance(run, Mapping) else None
    tb = build_batch(as_qrels(qrels), as_run(run), rel_level=rel_level, max_ret=max_ret, missing=missing,
                     judged_only=judged_only, sources=sources)
    tb._cache["num_docs"] = num_docs
    order = np.argsort(tb.qids, kind="stable")  # report queries in strcmp order, as trec_eval
    bogus = tb.bogus[order]
    values: dict[str, NDArray[Any]] = {}
    for m in resolved:
        col = np.asarray(m.compute(tb))
        col = col[order] if col.dtype == object else col.astype(np.float64)[order]
        reset = _reset_absent(m.name)
        if reset is not None and bogus.any():
            col = col.copy()
            col[bogus] = reset
        values[m.name] = col
    num_rel_all = tb.num_rel_positive if missing == "zero" and qrels_num_rel else None
    return TrecResult(tuple(resolved), tb.qids[order], values, tb.runid, num_rel_all)


#: An alias of :func:`evaluate` (its name before ``ragmeter.trec.evaluate``).
evaluate_trec = evaluate


def trec_evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, per_query: bool = False,
                  **options: Any) -> dict[str, Any]:
    """``evaluate(qrels, run, measures, **options).aggregate()`` without ``runid``, or with
    ``per_query=True`` its ``per_query()`` (:func:`evaluate`; ``ragmeter.trec_evaluate``).

    >>> trec_evaluate({"q1": {"d1": 1}}, {"q1": {"d2": 0.9, "d1": 0.5}}, ["recip_rank"])
    {'recip_rank': 0.5}
    """
    result = evaluate(qrels, run, measures, **options)
    if per_query:
        return result.per_query()
    out = result.aggregate()
    out.pop("runid", None)
    return out
