"""``ragmeter trec QRELS RUN``: a drop-in for trec_eval on the measures ragmeter supports.

Same output as trec_eval (``measure<TAB>qid|all<TAB>value``), same options: ``-m`` (repeatable,
trec_eval's ``P.5,10`` syntax, ``all_trec``, ``official``), ``-q``, ``-c``, ``-l``, ``-M``. Without
``-c``, qrels queries missing from the run are left out of the mean, as in trec_eval; with it they
count as 0. ``--format json`` prints ``{"runid", "all", "per_query"}`` instead.
"""

from __future__ import annotations

import json

import click

from ..trec.api import evaluate_trec
from ._app import main


@main.command("trec")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure to compute (repeatable): map, P.5,10, ndcg_cut.10, all_trec, official, ndcg@10...")
@click.option("-q", "per_query", is_flag=True, help="Also print every query's values.")
@click.option("-c", "complete", is_flag=True,
              help="Average over every qrels query; queries without results count as 0.")
@click.option("-l", "rel_level", type=float, default=1.0, show_default=True, metavar="LEVEL",
              help="Relevance level: grades >= LEVEL are relevant for the binary measures.")
@click.option("-M", "max_ret", type=click.IntRange(min=1), default=None, metavar="N",
              help="Evaluate only the first N documents of each ranking.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def trec_cmd(qrels: str, run: str, measures: tuple[str, ...], per_query: bool, complete: bool,
             rel_level: float, max_ret: int | None, fmt: str) -> None:
    """Evaluate the TREC run RUN against the qrels QRELS, as trec_eval does."""
    result = evaluate_trec(qrels, run, list(measures) or "official", missing="zero" if complete else "skip",
                           rel_level=rel_level, max_ret=max_ret)
    if fmt == "json":
        doc = {"runid": result.runid, "all": result.aggregate(),
               "per_query": result.per_query() if per_query else None}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo("\n".join(result.to_trec_lines(per_query)))
