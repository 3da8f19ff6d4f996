"""The TREC side of ragmeter: trec_eval's measures and semantics over TREC qrels and runs.

* :mod:`ragmeter.trec.io` -- :class:`Qrels` and :class:`Run` (columnar numpy arrays, symmetric I/O
  with TREC files, ``.gz``, dicts, pandas and pyarrow);
* :mod:`ragmeter.trec.engine` -- trec_eval's ranking and judging rules, building the
  :class:`~ragmeter.metrics.retrieval.RelevanceBatch` every kernel reads;
* :mod:`ragmeter.trec.measures` -- the declarative table of trec_eval 10.0's measures (name, parameters,
  kernel, summary, formula, ragmeter equivalent) and trec_eval's parameter syntax;
* :mod:`ragmeter.trec.kernels`, :mod:`ragmeter.trec.gains` -- the vectorised kernels of the measures
  ragmeter's own retrieval metrics do not cover (bpref, infAP, iprec_at_recall, G, rbp, ...);
* :mod:`ragmeter.trec.api` -- :func:`evaluate`, the entry point (``ragmeter.trec.evaluate``), and its
  aliases :func:`trec_evaluate` (``ragmeter.trec_evaluate``) and :func:`evaluate_trec`.

The command line twin is ``ragmeter trec QRELS RUN`` (a drop-in for trec_eval 10.0); see docs/trec.md.
"""

from .api import TrecResult, evaluate, evaluate_trec, trec_evaluate
from .engine import TrecBatch, build_batch
from .io import Qrels, Run, as_qrels, as_run
from .measures import Measure, resolve_measures

__all__ = [
    "Measure",
    "Qrels",
    "Run",
    "TrecBatch",
    "TrecResult",
    "as_qrels",
    "as_run",
    "build_batch",
    "evaluate",
    "evaluate_trec",
    "resolve_measures",
    "trec_evaluate",
]
