"""``ragmeter trec QRELS RUN``: a drop-in for trec_eval 10.0.

Same output as trec_eval (``measure<TAB>qid|all<TAB>value``), same options: ``-m`` (repeatable,
trec_eval's parameter syntax ``P.5,10`` / ``ndcg.1=3,2=9``, nicknames ``official`` (the default),
``all_trec``, ``set``), ``-q``, ``-c``, ``-n``, ``-l``, ``-M``, ``-J``, ``-N``, ``-R qrels``,
``-T trec_results``. Without ``-c``, qrels queries missing from the run are left out of the mean
(trec_eval 9 and pytrec_eval; trec_eval 10.0 stops with an error instead); with it they are
evaluated as trec_eval does. ``--format json`` prints ``{"runid", "all", "per_query"}`` instead.
"""

from __future__ import annotations

import json

import click

from ..errors import InvalidParameterError
from ..trec.api import evaluate
from ._app import main


@main.command("trec")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure to compute (repeatable): map, P.5,10, ndcg.1=3,2=9, all_trec, official, ndcg@10...")
@click.option("-q", "per_query", is_flag=True, help="Also print every query's values.")
@click.option("-c", "complete", is_flag=True,
              help="Average over every qrels query; queries without results are evaluated as an empty ranking.")
@click.option("-n", "no_summary", is_flag=True, help="Print no summary ('all') lines.")
@click.option("-l", "rel_level", type=float, default=1.0, show_default=True, metavar="LEVEL",
              help="Relevance level: grades >= LEVEL are relevant for the binary measures.")
@click.option("-M", "max_ret", type=click.IntRange(min=1), default=None, metavar="N",
              help="Evaluate only the first N documents of each ranking.")
@click.option("-J", "judged_only", is_flag=True,
              help="Judged documents only: drop retrieved documents absent from the qrels or graded negative.")
@click.option("-N", "num_docs", type=int, default=0, metavar="N", help="Documents in the collection (utility).")
@click.option("-R", "rel_format", default="qrels", metavar="FORMAT",
              help="Relevance format; only 'qrels' is supported.")
@click.option("-T", "results_format", default="trec_results", metavar="FORMAT",
              help="Results format; only 'trec_results' is supported.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def trec_cmd(qrels: str, run: str, measures: tuple[str, ...], per_query: bool, complete: bool, no_summary: bool,
             rel_level: float, max_ret: int | None, judged_only: bool, num_docs: int, rel_format: str,
             results_format: str, fmt: str) -> None:
    """Evaluate the TREC run RUN against the qrels QRELS, as trec_eval does."""
    if rel_format != "qrels":
        raise InvalidParameterError(
            f"-R {rel_format}: not supported; ragmeter reads the 'qrels' format only "
            "(trec_eval's prefs, qrels_prefs and qrels_jg formats and their measures are not implemented)")
    if results_format != "trec_results":
        raise InvalidParameterError(f"-T {results_format}: not supported; ragmeter reads 'trec_results' only")
    result = evaluate(qrels, run, list(measures) or "official", missing="zero" if complete else "skip",
                           rel_level=rel_level, max_ret=max_ret, judged_only=judged_only, num_docs=num_docs,
                           qrels_num_rel=complete)
    if fmt == "json":
        doc = {"runid": result.runid, "all": None if no_summary else result.aggregate(),
               "per_query": result.per_query() if per_query else None}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo("\n".join(result.to_trec_lines(per_query, summary=not no_summary)))
