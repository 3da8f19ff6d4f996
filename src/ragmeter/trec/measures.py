"""trec_eval's measures as one declarative table, trec_eval's parameter syntax, and output columns.

:data:`TABLE` maps each trec_eval 10.0 measure name, in trec_eval's output order, to a
:class:`TrecSpec`: its parameter kind and defaults, its kernel, how it is summarised over queries,
and its formula. A measure that a registered retrieval metric computes is read from the registry
(:func:`registry_metric`): the metric that declares the measure as its ``trec_name`` (with its
``trec_params``) supplies the kernel, so a metric added to :mod:`ragmeter.metrics.retrieval` with a
``trec_name`` is what ``ragmeter trec`` runs for that measure; the table names no ragmeter metric.
The other kernels live in :mod:`ragmeter.trec.kernels` and :mod:`ragmeter.trec.gains`; ``docs/trec.md``
renders the table.

Parameter kinds (trec_eval's ``meas_init.c``), given after the first ``.`` of a name:

* ``cut`` -- integer cutoffs, one column each (``P.5,10`` gives ``P_5``, ``P_10``): truncated to
  integers like ``atol`` (``23.4`` is ``23``), sorted, positive and distinct;
* ``cut_double`` -- fractional cutoffs, one column each, named with ``%3.2f`` (``iprec_at_recall..10,.20``
  gives ``iprec_at_recall_0.10``, ``_0.20``), sorted and distinct;
* ``double`` -- a list of numbers for one column (``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``set_F.0.5``,
  ``relstring.20``), kept in the order given; the column is named ``name_<params as typed>``;
* ``pairs`` -- ``level=gain`` pairs for one column (``ndcg.1=3,2=9``; ``rbp.p=0.8``), named the same way.

A parameter given twice keeps the first list, and explicit parameters replace the defaults of a
nickname (``-m all_trec -m P.5`` computes ``P_5`` only), as in trec_eval. The nicknames are
``official`` (trec_eval's default), ``all_trec`` and ``set``. A single column can also be named
directly: ``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.50``. ragmeter metric names (``ndcg@10``,
``mrr``, ``map@100``) run the same shared kernels with ragmeter's defaults and keep their canonical
name; they are printed after trec_eval's measures.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, UnknownMetricError
from . import gains as G
from . import kernels as K
from .engine import TrecBatch

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TENTHS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _cols(fn: Callable[[TrecBatch, int], np.ndarray]) -> Callable[[TrecBatch, tuple[int, ...]], np.ndarray]:
    """A per-cutoff kernel as a kernel returning one column per cutoff."""
    return lambda tb, ks: np.column_stack([fn(tb, k) for k in ks]) if ks else np.zeros((tb.batch.n, 0))


@dataclass(frozen=True)
class TrecSpec:
    """One trec_eval measure: ``kernel(tb)`` (``params="none"``) or ``kernel(tb, params)``.

    ``kernel`` is None when a registered metric computes the measure (see :func:`registry_metric`).

    ``param_note`` names a parameter the measure takes beside its kind's, with its default (rbp's
    ``p=persistence (0.9)``), for ``docs/trec.md`` and ``ragmeter metrics --trec``.

    ``summary``: ``mean`` (arithmetic mean over queries), ``gm`` (per-query value ``log(max(v, 1e-5))``,
    summary ``exp`` of its mean), ``sum``, ``count`` (num_q), ``runid``, or ``none`` (relstring:
    per-query only). ``per_query``: printed for each query with ``-q``. ``kind``: ``float`` (``%6.4f``),
    ``int`` (printed truncated to an integer), ``str``.
    """

    name: str
    formula: str
    kernel: Callable[..., Any] | None = field(repr=False)
    params: str = "none"
    default: tuple[Any, ...] = ()
    summary: str = "mean"
    per_query: bool = True
    kind: str = "float"
    param_note: str = ""


def _spec(name: str, formula: str, kernel: Callable[..., Any] | None, **kw: Any) -> tuple[str, TrecSpec]:
    return name, TrecSpec(name, formula, kernel, **kw)


#: Every measure trec_eval 10.0 computes from qrels and a TREC run, in trec_eval's output order.
TABLE: dict[str, TrecSpec] = dict([
    _spec("runid", "the run's name (tag of the last run line)", lambda tb: np.zeros(tb.batch.n),
          summary="runid", per_query=False, kind="str"),
    _spec("num_q", "number of queries evaluated", lambda tb: np.ones(tb.batch.n), summary="count",
          per_query=False, kind="int"),
    _spec("num_ret", "ret: documents retrieved (summary: sum)", lambda tb: tb.num_ret.astype(np.float64),
          summary="sum", kind="int"),
    _spec("num_rel", "R: judgements with grade >= l (summary: sum; with -c every grade > 0 in the qrels)",
          lambda tb: tb.num_rel, summary="sum", kind="int"),
    _spec("num_rel_ret", "rr: relevant documents retrieved (summary: sum)", lambda tb: tb.num_rel_ret,
          summary="sum", kind="int"),
    _spec("map", "(1/R) Σ_{rel_i} P(i); 0 when R = 0", None),
    _spec("gm_map", "geometric mean over queries of max(AP, 0.00001)",
          lambda tb: K.log_floor(column(tb, "map")), summary="gm", per_query=False),
    _spec("Rprec", "P(R): relevant in the top R / R", None),
    _spec("bpref", "(1/R) Σ_{rel_i} (1 - min(n_i, R) / min(N, R)), n_i judged non-relevant above i",
          None),
    _spec("recip_rank", "1 / rank of the first relevant document; 0 when none", None),
    _spec("iprec_at_recall", "max_{i >= rank of the c-th relevant} P(i), c = lround(f·R)", K.recall_points,
          params="cut_double", default=TENTHS),
    _spec("P", "relevant in the top k / k", None, params="cut", default=CUTS),
    _spec("relstring", "grades of the top N documents as a string (0-9, > above 9, - not in qrels, . unjudged)",
          lambda tb, p: K.relstring(tb, p[0]), params="double", default=(10.0,), summary="none", kind="str"),
    _spec("recall", "relevant in the top k / R; 0 when R = 0", None, params="cut",
          default=CUTS),
    _spec("infAP", "inferred AP (Yilmaz & Aslam): judged-only precision at each relevant, sampled pool",
          K.infap),
    _spec("gm_bpref", "geometric mean over queries of max(bpref, 0.00001)",
          lambda tb: K.log_floor(column(tb, "bpref")), summary="gm", per_query=False),
    _spec("Rprec_mult", "P(c) with c = ⌊m·R + 0.9⌋; 0 when c = 0", K.rprec_mult, params="cut_double",
          default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    _spec("utility", "c1·rr + c2·(ret - rr) + c3·(R - rr) + c4·(D + rr - ret - R)",
          lambda tb, c: K.utility(tb, c, tb._cache.get("num_docs", 0)), params="double",
          default=(1.0, -1.0, 0.0, 0.0)),
    _spec("11pt_avg", "mean interpolated precision at the recall fractions", K.eleven_pt_avg, params="double",
          default=TENTHS),
    _spec("binG", "(1/R) Σ_{rel_i} 1 / log2(2 + non-relevant above i)", K.bin_g),
    _spec("G", "Σ gain_i / log2(2 + cost_i - gain so far) / Σ ideal gains", G.g_measure, params="pairs"),
    _spec("dcg", "Σ gain_i / log2(i + 1)", lambda tb, p: _dcg(tb, p)[0], params="pairs"),
    _spec("ideal_dcg", "the DCG of the ideal ranking", lambda tb, p: _dcg(tb, p)[1], params="pairs"),
    _spec("ndcg", "DCG / ideal DCG (gains: the grade, or level=gain parameters); 0 when the ideal is 0",
          lambda tb, p: G.ndcg_gains(tb, p) if p else _registry_kernel(TABLE["ndcg"])(tb), params="pairs"),
    _spec("ndcg_rel", "nDCG averaged over the ideal (positive-gain) documents", G.ndcg_rel, params="pairs"),
    _spec("Rndcg", "nDCG averaged at the ideal ranking's gain boundaries", G.rndcg, params="pairs"),
    _spec("ndcg_cut", "DCG@k / ideal DCG@k, gains = grades", None, params="cut", default=CUTS),
    _spec("map_cut", "(1/R) Σ_{i <= k, rel_i} P(i)", None, params="cut", default=CUTS),
    _spec("relative_P", "relevant in the top k / min(k, R); 0 when R = 0", K.relative_p, params="cut",
          default=CUTS),
    _spec("success", "1 when a relevant document is in the top k", None,
          params="cut", default=(1, 5, 10)),
    _spec("set_P", "rr / ret", K.set_p),
    _spec("set_relative_P", "rr / min(ret, R)", K.set_relative_p),
    _spec("set_recall", "rr / R", K.set_recall),
    _spec("set_map", "rr² / (ret · R)", K.set_map),
    _spec("set_F", "(β + 1)·P·R / (β·P + R), P = rr/ret, R = rr/R", lambda tb, p: K.set_f(tb, p[0]),
          params="double", default=(1.0,)),
    _spec("num_nonrel_judged_ret", "retrieved documents judged non-relevant (summary: sum)",
          K.num_nonrel_judged_ret, summary="sum", kind="int"),
    _spec("rbp", "(1 - p) Σ_i gain_i · p^(i-1), gains rescaled to [0, 1], p = 0.9", G.rbp, params="pairs",
          param_note=f"p=persistence ({G.RBP_P:g})"),
    _spec("rbp_resid", "p^ret + (1 - p) Σ_{unjudged i} p^(i-1) (0 when all are judged)", G.rbp_resid,
          params="pairs", param_note=f"p=persistence ({G.RBP_P:g})"),
    _spec("unj", "documents in the top k without a judgement / k", K.unjudged, params="cut", default=(5, 10, 20)),
])

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
#: trec_eval measures that need another relevance format (-R prefs / qrels_jg), which ragmeter does not read.
OTHER_FORMATS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
                 "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
                 "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
                 "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "all_prefs", "prefs",
                 "qrels_jg")
_ORDER = {name: i for i, name in enumerate(TABLE)}

_COLUMN = re.compile(r"^(.+)_([^_]+)$")


def _dcg(tb: TrecBatch, pairs: G.Pairs) -> tuple[np.ndarray, np.ndarray]:
    gain, ioff, ival = G.gain_tables(tb, pairs)
    b = tb.batch
    dcg = np.bincount(b.seg, weights=gain / np.log2(b.rank + 1.0), minlength=b.n)
    irank = np.arange(len(ival)) - np.repeat(ioff[:-1], np.diff(ioff)) + 1
    iseg = np.repeat(np.arange(b.n), np.diff(ioff))
    return dcg, np.bincount(iseg, weights=ival / np.log2(irank + 1.0), minlength=b.n)


@dataclass(frozen=True)
class Measure:
    """One output column: its printed ``name``, how to compute it, how to summarise and print it.

    ``summary`` and ``kind`` are those of its :class:`TrecSpec` (``mean`` / ``float`` for ragmeter
    names); ``per_query`` says whether ``-q`` prints it; ``sort_key`` places it in trec_eval's order.
    """

    name: str
    compute: Callable[[TrecBatch], np.ndarray] = field(compare=False, repr=False)
    kind: str = "float"
    sort_key: tuple[int, float] = (len(TABLE), 0)
    summary: str = "mean"
    per_query: bool = True

    @property
    def summary_only(self) -> bool:
        """True for measures trec_eval prints only on the ``all`` line (num_q, runid, gm_map, gm_bpref)."""
        return not self.per_query


# ---- parameter parsing ----------------------------------------------------------------------------------------
def _numbers(base: str, text: str) -> list[float]:
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise InvalidParameterError(
                f"measure {base}.{text}: expected comma-separated numbers such as {base}.5,10, got {part!r}"
            ) from None
        if not np.isfinite(value):
            raise InvalidParameterError(f"measure {base}.{text}: expected finite numbers, got {part!r}")
        out.append(value)
    return out


def parse_cutoffs(base: str, text: str) -> tuple[int, ...]:
    """Parse trec_eval's ``-m base.k1,k2`` cutoffs: truncated to integers, sorted, positive, distinct."""
    out = sorted(int(v) for v in _numbers(base, text))  # trec_eval's atol: 23.4 -> 23
    if out[0] < 1:
        raise InvalidParameterError(f"measure {base}.{text}: cutoffs must be >= 1")
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"measure {base}.{text}: duplicate cutoffs (after truncation to integers)")
    return tuple(out)


def parse_params(spec: TrecSpec, text: str) -> tuple[Any, ...]:
    """Parse the text after the first ``.`` of ``spec.name.text`` by the measure's parameter kind."""
    if spec.params == "cut":
        return parse_cutoffs(spec.name, text)
    if spec.params == "cut_double":
        out = sorted(_numbers(spec.name, text))
        if len(set(out)) != len(out):
            raise InvalidParameterError(f"measure {spec.name}.{text}: duplicate cutoffs")
        return tuple(out)
    if spec.params == "double":
        values = tuple(_numbers(spec.name, text))
        if spec.name == "utility" and len(values) != 4:
            raise InvalidParameterError(f"measure utility.{text}: expected 4 coefficients, got {len(values)}")
        return values
    if spec.params == "pairs":
        return G.parse_pairs(spec.name, text)
    raise InvalidParameterError(f"measure {spec.name}.{text}: {spec.name} takes no parameters")


# ---- the registry's metrics ----------------------------------------------------------------------------------
def registry_metric(spec: TrecSpec) -> str | None:
    """The ragmeter metric that computes trec_eval measure ``spec`` (``name@k`` for a cutoff measure), or None.

    The registered retrieval metric whose ``trec_name`` is ``spec.name``, else (trec_eval's naming: ``B_cut``
    is ``B`` at cutoff k) whose ``trec_name`` is ``B`` for measure ``B_cut`` or ``B_cut`` for measure ``B``;
    named with its ``trec_params`` (``ndcg(gain=linear)@k``). A cutoff measure needs a metric that takes a
    cutoff. Its kernel then computes the measure, replacing the table's own: the registry is the single
    source of such a measure. A measure with gain pairs (``ndcg``) keeps its kernel, which runs the metric
    when no pairs are given.
    """
    if spec.params not in ("none", "cut", "pairs"):
        return None
    from ..names import MetricName
    from ..registry import list_metrics

    cut = spec.params == "cut"
    for trec in (spec.name, spec.name.removesuffix("_cut") if cut else f"{spec.name}_cut"):
        for metric in list_metrics():
            if metric.trec_name != trec or metric.kernel is None:
                continue
            name = str(MetricName(metric.name, tuple(sorted(metric.trec_params))))
            if cut and metric.cutoff != "none":
                return f"{name}@k"
            if not cut and metric.cutoff != "required":
                return name
    return None


def _from_registry(name: str) -> Callable[[TrecBatch], np.ndarray]:
    """The kernel of ragmeter metric ``name`` (with its parameters and cutoff) over a TrecBatch."""
    from ..registry import resolve_name

    spec, canonical = resolve_name(name)
    if spec.kernel is None or spec.category != "retrieval":
        raise UnknownMetricError(name, [n for n in (spec.trec_name, "ndcg@10", "map") if n][:3], kind="measure")
    kernel, params = spec.kernel, canonical.kwargs
    if spec.cutoff != "none" and canonical.cutoff is not None:
        params["k"] = canonical.cutoff
    return lambda tb: kernel(tb.batch, **params)


def _registry_kernel(spec: TrecSpec) -> Callable[[TrecBatch], np.ndarray]:
    """The kernel of the registry's metric for parameterless measure ``spec`` (see :func:`registry_metric`)."""
    metric = registry_metric(spec)
    if metric is None:
        raise InvalidParameterError(f"measure {spec.name}: no registered metric computes it")
    return _from_registry(metric)


def _kernel(spec: TrecSpec) -> Callable[..., np.ndarray]:
    """What computes ``spec``: the registry's metric when one does (see :func:`registry_metric`), else the
    table's kernel (always for a measure with gain pairs)."""
    metric = registry_metric(spec)
    if metric is None or spec.params == "pairs":
        if spec.kernel is None:
            raise InvalidParameterError(f"measure {spec.name}: no registered metric computes it")
        return spec.kernel
    if spec.params == "cut":
        base = metric.removesuffix("@k")
        return _cols(lambda tb, k: _from_registry(f"{base}@{k}")(tb))
    return _from_registry(metric)


def column(tb: TrecBatch, name: str) -> np.ndarray:
    """The per-query values of parameterless measure ``name`` on ``tb`` (computed once per batch)."""
    return _cached(TABLE[name], ())(tb)


# ---- columns ----------------------------------------------------------------------------------------------------
def _cached(spec: TrecSpec, params: tuple[Any, ...]) -> Callable[[TrecBatch], np.ndarray]:
    def run(tb: TrecBatch) -> np.ndarray:
        key = ("measure", spec.name, params)
        if key not in tb._cache:
            kernel = _kernel(spec)
            tb._cache[key] = kernel(tb) if spec.params == "none" else kernel(tb, params)
        return tb._cache[key]

    return run


def columns(spec: TrecSpec, params: tuple[Any, ...] | None, printable: str | None) -> list[Measure]:
    """The output columns of ``spec`` with ``params`` (None: its defaults); ``printable`` is the parameter
    text as typed (it names the column of ``double`` / ``pairs`` measures)."""
    values = spec.default if params is None else params
    run = _cached(spec, values)
    idx = _ORDER[spec.name]
    common: dict[str, Any] = {"kind": spec.kind, "summary": spec.summary, "per_query": spec.per_query}
    if spec.params in ("cut", "cut_double"):
        out = []
        for j, v in enumerate(values):
            label = f"{spec.name}_{v}" if spec.params == "cut" else f"{spec.name}_{v:3.2f}"
            # mypy cannot infer a lambda that binds ``j`` as a default argument against a one-argument Callable
            out.append(Measure(label, lambda tb, j=j: run(tb)[:, j], sort_key=(idx, j), **common))  # type: ignore[misc]
        return out
    label = f"{spec.name}_{printable}" if printable is not None else spec.name
    return [Measure(label, run, sort_key=(idx, 0), **common)]


def _single_column(text: str) -> Measure | None:
    """``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.50``: one column of a cutoff measure."""
    m = _COLUMN.match(text)
    spec = TABLE.get(m.group(1)) if m else None
    if m is None or spec is None or spec.params not in ("cut", "cut_double"):
        return None
    if spec.params == "cut":
        if not m.group(2).isdigit():
            return None
        (k,) = parse_cutoffs(spec.name, m.group(2))
        col = columns(spec, (k,), None)[0]
    else:
        (v,) = _numbers(spec.name, m.group(2))
        col = columns(spec, (v,), None)[0]
    return Measure(text, col.compute, col.kind, (_ORDER[spec.name], float(m.group(2))), col.summary,
                   col.per_query)


def _all_names() -> list[str]:
    from ..registry import _ALIASES, _ensure_loaded

    _ensure_loaded()
    return [*TABLE, *NICKNAMES, *(f"{b}_{k}" for b in ("P", "recall", "ndcg_cut", "map_cut") for k in (5, 10)),
            *_ALIASES]


def _ragmeter_measure(text: str) -> Measure:
    from ..registry import resolve_name

    try:
        canonical = resolve_name(text)[1]
    except UnknownMetricError:
        raise UnknownMetricError(text, difflib.get_close_matches(text, _all_names(), n=4, cutoff=0.5),
                                 kind="measure") from None
    if "rel_level" in canonical.kwargs:
        raise InvalidParameterError(
            f"measure {text!r}: rel_level is set once per evaluation (rel_level=... in Python, -l on the command line)"
        )
    return Measure(str(canonical), _from_registry(str(canonical)), "float", (len(TABLE), 0))


def resolve_measures(names: str | Iterable[str]) -> list[Measure]:
    """Resolve measure names (trec_eval or ragmeter style) into an ordered, duplicate-free list of columns.

    trec_eval measures come first, in trec_eval's order; ragmeter names follow in the order given.
    Raises :class:`UnknownMetricError` (``kind="measure"``) for a name that is neither, and
    :class:`InvalidParameterError` for malformed parameters.
    """
    if isinstance(names, str):
        names = [names]
    queue = [str(n).strip() for n in names]
    if not queue:
        raise InvalidParameterError("measures: expected at least one measure name, e.g. ['map', 'P_10']")
    marked: list[str] = []
    params: dict[str, tuple[tuple[Any, ...], str]] = {}
    single: dict[str, Measure] = {}
    extra: dict[str, Measure] = {}
    for text in queue:
        if text in NICKNAMES:
            marked.extend(NICKNAMES[text])
            continue
        if text in TABLE:
            marked.append(text)
            continue
        col = _single_column(text)
        if col is not None:
            single.setdefault(col.name, col)
            continue
        base, dot, rest = text.partition(".")
        if dot and base in TABLE:
            if not rest:
                raise InvalidParameterError(f"measure {text!r}: expected parameters after '.'")
            params.setdefault(base, (parse_params(TABLE[base], rest), rest))
            marked.append(base)
            continue
        if base in NICKNAMES:
            raise InvalidParameterError(f"measure {text!r}: the nickname {base} takes no parameters")
        if base in OTHER_FORMATS:
            raise UnknownMetricError(text, ["map", "ndcg", "bpref"], kind="measure (it needs trec_eval's -R prefs "
                                     "or qrels_jg relevance format, which ragmeter does not read)")
        if dot and "@" not in text and "(" not in text:
            close = difflib.get_close_matches(base, list(TABLE), n=3, cutoff=0.5)
            raise UnknownMetricError(text, [f"{c}.{rest}" for c in close], kind="measure")
        measure = _ragmeter_measure(text)
        extra.setdefault(measure.name, measure)
    out: dict[str, Measure] = {}
    for base in dict.fromkeys(marked):
        given = params.get(base)
        for col in columns(TABLE[base], given[0] if given else None, given[1] if given else None):
            out.setdefault(col.name, col)
    for name, col in single.items():
        out.setdefault(name, col)
    trec = sorted(out.values(), key=lambda m: m.sort_key)
    return trec + [m for name, m in extra.items() if name not in out]


def trec_table() -> list[dict[str, str]]:
    """One row per trec_eval measure: name, parameters and defaults (and ``note``: see ``TrecSpec.param_note``),
    formula, summary, and the ragmeter equivalent read from the registry (:func:`registry_metric`)."""
    rows = []
    for spec in TABLE.values():
        default = ",".join(f"{v:g}" for v in spec.default) if spec.default else ""
        rows.append({"trec_eval": spec.name, "params": spec.params if spec.params != "none" else "",
                     "default": default, "note": spec.param_note, "formula": spec.formula,
                     "summary": spec.summary, "ragmeter": registry_metric(spec) or ""})
    return rows
