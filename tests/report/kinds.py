"""The runs behind the report's tests and screenshots: every kind of report built from run directories
written with the real :class:`~ragmeter.results.RunWriter`, no judge and no network.

``tests/report/`` (the browser tests) and ``scripts/screenshots.py`` (the images in ``docs/img``)
both build their pages with :func:`build_reports`, so the pages photographed for the docs are the
pages the tests check. No pytest here: the script imports this module outside a test session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragmeter.report import write_report
from ragmeter.results import RunWriter
from ragmeter.types import ErrorInfo, MetricResult

XSS_ANSWER = "Paris <script>window.__pwned = 1; document.title = 'pwned'</script>"
XSS_CONTEXT = 'Paris is the capital. <img src=x onerror="window.__pwned = 2; document.title = \'pwned\'">'
XSS_QUERY = "</script><script>window.__pwned = 3</script> capital of France?"
XSS_REASON = "<b>bold</b> \u2028 line separator <!-- comment"
N_SAMPLES = 150


def ndcg_score(i: int) -> float | None:
    """The ndcg@5 score of sample ``i`` in the rich run (None: undefined every 13th sample)."""
    return None if i % 13 == 5 else round((i * 37 % 101) / 100, 2)


def faith_score(i: int) -> float | None:
    """The faithfulness score of sample ``i`` (None: errored every 17th sample)."""
    return None if i % 17 == 3 else round((i * 53 % 97) / 96, 3)


def sample_id(i: int, *, hostile: bool = True) -> str:
    """The id of sample ``i`` (sample 7 is the hostile one, unless ``hostile`` is False)."""
    return "xss" if i == 7 and hostile else f"s{i:03d}"


def write_rich_run(out: Path, *, shift: float = 0.0, hostile: bool = True) -> tuple[Path, Path]:
    """A run of :data:`N_SAMPLES` samples with two metrics, errors, undefined scores, claims and XSS texts.

    Returns ``(run_dir, data_file)``. ``shift`` moves every ndcg@5 score (for a comparison run).
    ``hostile=False`` leaves the XSS texts out (sample 7 is then an ordinary sample): the same run
    for the documentation's screenshots.
    """
    run_dir, data = out / "run", out / "data.jsonl"
    w = RunWriter(["ndcg@5", "faithfulness"], out_dir=run_dir)
    rows: list[dict[str, Any]] = []
    for i in range(N_SAMPLES):
        sid = sample_id(i, hostile=hostile)
        contexts = [{"id": f"{sid}-c{k}", "text": f"context {k} of {sid}"} for k in range(1, 4)]
        row: dict[str, Any] = {"id": sid, "query": f"question number {i}", "answer": f"answer {i}",
                               "contexts": contexts, "reference": f"reference {i}", "relevant": [f"{sid}-c2"]}
        if i == 7 and hostile:
            row.update(query=XSS_QUERY, answer=XSS_ANSWER)
            contexts[1]["text"] = XSS_CONTEXT
        rows.append(row)
        n = ndcg_score(i)
        if n is not None:
            n = min(1.0, max(0.0, n + shift))
        ndcg = MetricResult(
            name="ndcg@5", score=n, version="1",
            reason="undefined: no labelled relevant chunks" if n is None else "relevant at rank(s) [2] of 3 retrieved",
            details={"relevance_from": "labels", "relevant_ranks": [2], "retrieved": 3,
                     "matched_by": [None, "id", None]},
        )
        f = faith_score(i)
        if f is None:
            faith = MetricResult(name="faithfulness", score=None, version="2", reason="error: judge timed out",
                                 error=ErrorInfo(type="JudgeTimeout", message="no answer within 30 s"))
        else:
            faith = MetricResult(
                name="faithfulness", score=f, version="2",
                reason=XSS_REASON if i == 7 and hostile else "2 of 3 claims supported",
                details={"claims": [
                    {"claim": "Paris is the capital" if i != 7 or not hostile else "<script>window.__pwned=4</script>",
                     "verdict": "supported"},
                    {"claim": "It has 2 million people", "verdict": "supported"},
                    {"claim": "It is in Spain", "verdict": "unsupported"},
                ]},
            )
        w.add(sid, {"ndcg@5": ndcg, "faithfulness": faith})
    w.finish({
        "ragmeter_version": "0.1.0",
        "metrics": {"ndcg@5": {"version": "1"}, "faithfulness": {"version": "2"}},
        "started": "2026-11-29T12:00:00Z",
        "dataset": "tiny-qa <script>" if hostile else "tiny-qa",
        "judge": {"model": "openai:gpt-4o-mini", "temperature": 0},
        "calls": 140, "cache_hits": 10, "tokens": 51234, "cost": 0.0123,
        "diagnosis": [{"severity": "warning", "title": "Low recall", "message": "<i>contexts</i> miss answers"}],
    })
    with open(data, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    # the summary gains a CI the way the stats module will write it
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["metrics"]["ndcg@5"]["ci"] = [round(min(1.0, max(0.0, v + shift)), 3) for v in (0.41, 0.55)]
    summary["metrics"]["ndcg@5"]["ci_method"] = "bootstrap"
    summary_path.write_text(json.dumps(summary))
    return run_dir, data


#: The metrics of the offline (retrieval, lexical, embedding) runs: 14 columns, a wide table.
OFFLINE_METRICS = ["recall@5", "recall@10", "recall@20", "ndcg@5", "ndcg@10", "mrr", "map", "precision@5",
                   "hit_rate@5", "context_recall", "context_precision", "token_f1", "rouge_l",
                   "semantic_similarity(normalize=baseline)"]

#: Every kind of report, in the order the docs show them: kind -> the slug of its file names.
KINDS = {
    "single run": "single",
    "judged run": "judged",
    "failing gate": "gate",
    "20k rows": "20k",
    "two-run comparison": "compare2",
    "three-run comparison": "compare3",
    "empty run": "empty",
}


def write_offline_run(out: Path, n: int) -> Path:
    """A run of ``n`` samples scored on :data:`OFFLINE_METRICS` (long ids, a long data path); returns ``out``."""
    w = RunWriter(OFFLINE_METRICS, out_dir=out, keep_records=n <= 1000)
    for i in range(n):
        w.add(f"sample-with-a-long-identifier-{i:06d}",
              {m: MetricResult(name=m, score=((i * 7 + k) % 11) / 10, version="1", reason="relevant at rank(s) [2]")
               for k, m in enumerate(OFFLINE_METRICS)})
    w.finish({"ragmeter_version": "0.1.0", "data": "/a/rather/long/path/to/the/data/file/of/this/run/qa.jsonl"})
    return out


def build_reports(tmp: Path, *, hostile: bool = True) -> dict[str, Path]:
    """Write the report of every kind in :data:`KINDS` under ``tmp``; return kind -> HTML file.

    The judged runs are :func:`write_rich_run` (the comparisons: its baseline with every ndcg@5
    score 0.1 higher, and a third run 0.2 higher); the others :func:`write_offline_run` (40 rows,
    20,000 rows, none). ``hostile`` as in :func:`write_rich_run`.
    """
    judged, data = write_rich_run(tmp / "judged", hostile=hostile)
    base, _ = write_rich_run(tmp / "base", shift=0.1, hostile=hostile)
    third, _ = write_rich_run(tmp / "third", shift=0.2, hostile=hostile)
    single = write_offline_run(tmp / "single", 40)
    big = write_offline_run(tmp / "big", 20_000)
    empty = write_offline_run(tmp / "empty", 0)
    gate = {"recall@5": 0.9, "mrr": 0.8, "semantic_similarity": 0.95}
    return {
        "single run": write_report(single, tmp / "single.html"),
        "judged run": write_report(judged, tmp / "judged.html", data=data),
        "failing gate": write_report(single, tmp / "gate.html", fail_under=gate),
        "20k rows": write_report(big, tmp / "big.html"),
        "two-run comparison": write_report(judged, tmp / "compare.html", data=data, baseline=base),
        "three-run comparison": write_report(judged, tmp / "compare3.html", data=data, compare_with=[base, third]),
        "empty run": write_report(empty, tmp / "empty.html"),
    }
