"""TREC measure names, trec_eval's parameter syntax, and the kernel behind each measure.

Every value is computed by a vectorised kernel of :mod:`ragmeter.metrics.retrieval` over the
:class:`~ragmeter.metrics.retrieval._batch.RelevanceBatch` that :mod:`ragmeter.trec.engine` builds.
``R`` is the number of relevant judgements of the query, ``rel_i`` whether rank ``i`` is relevant,
``g_i`` the grade at rank ``i`` (0 when unjudged or negative):

============== =================================================================== ==================
trec_eval name  formula (per query; ``all`` = mean over queries unless noted)        kernel
============== =================================================================== ==================
num_q           number of evaluated queries (``all`` only)                          --
num_ret         documents retrieved (``all``: sum)                                  batch lengths
num_rel         relevant judgements R (``all``: sum)                                batch.num_rel
num_rel_ret     relevant documents retrieved (``all``: sum)                         sum of batch.rel
map             (1/R) Σ_{rel_i} P@i; 0 when R = 0                                   average_precision
map_cut_k       (1/R) Σ_{i<=k, rel_i} P@i; 0 when R = 0                            average_precision(k)
Rprec           |relevant in top R| / R; 0 when R = 0                               r_precision
recip_rank      1 / rank of the first relevant; 0 when none                         mrr
P_k             |relevant in top k| / k (k even when fewer were retrieved)          precision(k)
recall_k        |relevant in top k| / R; 0 when R = 0                               recall(k)
ndcg            Σ g_i/log2(i+1) / ideal, ideal from every positive grade; 0 if none ndcg(gain=linear)
ndcg_cut_k      as ndcg over the top k (ideal cut at k too)                         ndcg(k, linear)
success_k       1 when a relevant document is in the top k, else 0                  hit_rate(k)
============== =================================================================== ==================

Names: ``map``, ``P_10``, ``ndcg_cut_10``; trec_eval's parameter syntax ``P.5,10`` (cutoffs are
truncated to integers like trec_eval's ``strtol``: ``23.4`` is ``23`` -- rank <= 23.4 is rank <= 23 --
sorted, and must be positive and distinct); a bare ``P`` means trec_eval's default cutoffs; the
nicknames ``official`` and ``all_trec`` mean the supported part of trec_eval's lists. ragmeter
names (``ndcg@10``, ``mrr``, ``map@100``, ``recall@100``, ``precision@10``, ``hit_rate@5``) run the
same kernels with ragmeter's own defaults (``ndcg`` uses exponential gain unless
``ndcg(gain=linear)``) and keep their canonical name as key.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, UnknownMetricError
from ..metrics.retrieval.average_precision import average_precision
from ..metrics.retrieval.hit_rate import hit_rate
from ..metrics.retrieval.mrr import mrr
from ..metrics.retrieval.ndcg import ndcg
from ..metrics.retrieval.precision import precision
from ..metrics.retrieval.r_precision import r_precision
from ..metrics.retrieval.recall import recall
from .engine import TrecBatch

Kernel = Callable[[TrecBatch], np.ndarray]
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: trec_eval's measures that ragmeter computes, in trec_eval's output order.
SCALAR: dict[str, Kernel] = {
    "num_q": lambda tb: np.ones(tb.batch.n),
    "num_ret": lambda tb: tb.num_ret.astype(np.float64),
    "num_rel": lambda tb: tb.num_rel,
    "num_rel_ret": lambda tb: tb.num_rel_ret,
    "map": lambda tb: average_precision(tb.batch),
    "Rprec": lambda tb: r_precision(tb.batch),
    "recip_rank": lambda tb: mrr(tb.batch),
    "ndcg": lambda tb: ndcg(tb.batch, None, gain="linear"),
}
CUT: dict[str, tuple[Callable[[TrecBatch, int], np.ndarray], tuple[int, ...]]] = {
    "P": (lambda tb, k: precision(tb.batch, k), DEFAULT_CUTOFFS),
    "recall": (lambda tb, k: recall(tb.batch, k), DEFAULT_CUTOFFS),
    "ndcg_cut": (lambda tb, k: ndcg(tb.batch, k, gain="linear"), DEFAULT_CUTOFFS),
    "map_cut": (lambda tb, k: average_precision(tb.batch, k), DEFAULT_CUTOFFS),
    "success": (lambda tb, k: hit_rate(tb.batch, k), (1, 5, 10)),
}
ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P", "recall",
         "ndcg", "ndcg_cut", "map_cut", "success")
INT_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret"})
SUMMARY_ONLY = frozenset({"runid", "num_q"})
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P"),
    "all_trec": ORDER,
}
#: trec_eval measures that exist but ragmeter does not compute (named in the error message).
UNSUPPORTED = ("gm_map", "bpref", "iprec_at_recall", "relstring", "infAP", "gm_bpref", "Rprec_mult", "utility",
               "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "relative_P", "set_P", "set_relative_P",
               "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid")

_RAGMETER_KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "map": average_precision,
    "ndcg": ndcg,
    "precision": precision,
    "r_precision": r_precision,
    "recall": recall,
    "mrr": mrr,
    "hit_rate": hit_rate,
}
_CUT_NAME = re.compile(r"^(P|recall|ndcg_cut|map_cut|success)_(\d+)$")
_PARAM_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.(.*)$")


@dataclass(frozen=True)
class Measure:
    """One output column: its printed ``name``, how to compute it, how to aggregate it.

    ``kind`` is ``"float"`` (mean over queries, printed ``%6.4f``), ``"int"`` (sum over queries,
    printed as an integer) or ``"count"`` (``num_q``: the number of queries). ``sort_key`` places
    it in trec_eval's output order.
    """

    name: str
    compute: Kernel = field(compare=False, repr=False)
    kind: str = "float"
    sort_key: tuple[int, int] = (len(ORDER), 0)

    @property
    def summary_only(self) -> bool:
        """True for measures trec_eval prints only on the ``all`` line (``num_q``)."""
        return self.name in SUMMARY_ONLY


def parse_cutoffs(base: str, text: str) -> tuple[int, ...]:
    """Parse trec_eval's ``-m base.k1,k2`` cutoffs: truncated to integers, sorted, positive, distinct."""
    out: list[int] = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise InvalidParameterError(
                f"measure {base}.{text}: expected comma-separated positive cutoffs such as {base}.5,10, got {part!r}"
            ) from None
        if not np.isfinite(value) or int(value) < 1:
            raise InvalidParameterError(f"measure {base}.{text}: cutoffs must be >= 1, got {part!r}")
        out.append(int(value))  # trec_eval's strtol: 23.4 -> 23
    out.sort()
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"measure {base}.{text}: duplicate cutoffs (after truncation to integers)")
    return tuple(out)


def _cut_measure(base: str, k: int) -> Measure:
    fn = CUT[base][0]
    return Measure(f"{base}_{k}", lambda tb, fn=fn, k=k: fn(tb, k), "float", (ORDER.index(base), k))


def _scalar_measure(base: str) -> Measure:
    kind = "count" if base == "num_q" else "int" if base in INT_MEASURES else "float"
    if base == "runid":
        return Measure("runid", lambda tb: np.zeros(tb.batch.n), "runid", (0, 0))
    return Measure(base, SCALAR[base], kind, (ORDER.index(base), 0))


def _all_names() -> list[str]:
    from ..registry import _ALIASES, _ensure_loaded

    _ensure_loaded()
    return [*ORDER, *NICKNAMES, *(f"{b}_{k}" for b in CUT for k in (5, 10)), *_ALIASES]


def _ragmeter_measure(text: str) -> Measure:
    from ..registry import resolve_name

    try:
        spec, canonical = resolve_name(text)
    except UnknownMetricError:
        raise UnknownMetricError(text, difflib.get_close_matches(text, _all_names(), n=4, cutoff=0.5),
                                 kind="measure") from None
    kernel = _RAGMETER_KERNELS.get(spec.name)
    if kernel is None:
        raise UnknownMetricError(
            text, [n for n in (spec.trec_name, "ndcg@10", "map") if n][:3], kind="measure"
        ) from None
    params: dict[str, Any] = canonical.kwargs
    if "rel_level" in params:
        raise InvalidParameterError(
            f"measure {text!r}: rel_level is set once per evaluation (rel_level=... in Python, -l on the command line)"
        )
    if spec.cutoff != "none":
        params["k"] = canonical.cutoff
    name = str(canonical)
    return Measure(name, lambda tb: kernel(tb.batch, **params), "float", (len(ORDER), 0))


def resolve_measures(names: str | Iterable[str]) -> list[Measure]:
    """Resolve measure names (trec_eval or ragmeter style) into an ordered, duplicate-free list.

    As in trec_eval, a parameterised measure given twice uses the first parameter list, and
    explicit parameters replace the default cutoffs of a bare name (``-m all_trec -m P.5`` computes
    ``P_5`` only). trec_eval measures come first, in trec_eval's order; ragmeter names follow in the
    order given.

    Raises :class:`UnknownMetricError` (``kind="measure"``) for a name that is neither.
    """
    if isinstance(names, str):
        names = [names]
    marked: set[str] = set()
    params: dict[str, tuple[int, ...]] = {}
    explicit: dict[str, Measure] = {}
    extra: dict[str, Measure] = {}
    queue = [str(n).strip() for n in names]
    if not queue:
        raise InvalidParameterError("measures: expected at least one measure name, e.g. ['map', 'P_10']")
    while queue:
        text = queue.pop(0)
        if text in NICKNAMES:
            marked.update(NICKNAMES[text])
            continue
        m = _PARAM_NAME.match(text)
        if m and m.group(1) in CUT:
            base = m.group(1)
            marked.add(base)
            params.setdefault(base, parse_cutoffs(base, m.group(2)))
            continue
        if m and m.group(1) in (*SCALAR, "runid"):
            raise InvalidParameterError(f"measure {text!r}: {m.group(1)} takes no parameters")
        if m and "@" not in text and "(" not in text:
            close = difflib.get_close_matches(m.group(1), list(CUT), n=3, cutoff=0.5)
            raise UnknownMetricError(text, [f"{c}.{m.group(2)}" for c in close], kind="measure")
        m = _CUT_NAME.match(text)
        if m:
            k = int(m.group(2))
            if k < 1:
                raise InvalidParameterError(f"measure {text!r}: cutoffs must be >= 1")
            explicit.setdefault(text, _cut_measure(m.group(1), k))
            continue
        if text in SCALAR or text == "runid" or text in CUT:
            marked.add(text)
            continue
        if text in UNSUPPORTED:
            raise UnknownMetricError(text, [], kind="measure")
        measure = _ragmeter_measure(text)
        extra.setdefault(measure.name, measure)
    out: dict[str, Measure] = dict(explicit)
    for base in marked:
        if base in CUT:
            for k in params.get(base, CUT[base][1]):
                out.setdefault(f"{base}_{k}", _cut_measure(base, k))
        else:
            out.setdefault(base, _scalar_measure(base))
    trec = sorted(out.values(), key=lambda m: m.sort_key)
    return trec + [m for name, m in extra.items() if name not in out]
