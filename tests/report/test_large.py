"""A 100,000-sample retrieval-only run: the report embeds a selection and stays under 20 MB.

Before: every sample was embedded (a 100k-row run made a ~136 MB report.html). The memory side
(peak RSS of `ragmeter eval` with and without the report) is measured by
``bench/report_memory.py``, not here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ragmeter.report import write_report
from ragmeter.results import RunWriter
from ragmeter.types import ErrorInfo, MetricResult

N = 100_000
METRICS = ["recall@5", "ndcg@5", "mrr"]


def test_hundred_thousand_rows_make_a_report_under_20_mb(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    first = rng.integers(1, 8, size=N)  # rank of the first relevant context; 6 and 7: none retrieved
    w = RunWriter(METRICS, out_dir=tmp_path / "run", keep_records=False)
    with open(tmp_path / "data.jsonl", "w", encoding="utf-8") as fh:
        for i in range(N):
            k = int(first[i])
            ranks = [k] if k <= 5 else []
            det = {"relevance_from": "labels", "relevant_ranks": ranks, "retrieved": 5}
            rr = 1.0 / k if ranks else 0.0
            res = {"recall@5": MetricResult(name="recall@5", score=1.0 if ranks else 0.0, version="1",
                                            reason=f"relevant at rank(s) {ranks}", details=det),
                   "ndcg@5": MetricResult(name="ndcg@5", score=float(1 / np.log2(k + 1)) if ranks else 0.0,
                                          version="1", reason="", details=det),
                   "mrr": MetricResult(name="mrr", score=rr, version="1", reason="", details=det)}
            if i % 997 == 0:  # a few errors, every 997th sample
                res["mrr"] = MetricResult(name="mrr", score=None, version="1", reason="error",
                                          error=ErrorInfo(type="InputError", message="bad contexts"))
            w.add(f"q{i}", res)
            fh.write(json.dumps({"id": f"q{i}", "query": f"question {i} " + "about backups " * 5,
                                 "contexts": [{"id": f"d{i}-{c}", "text": "passage text " * 20} for c in range(5)],
                                 "relevant": [f"d{i}-{k - 1}"] if ranks else ["elsewhere"]}) + "\n")
    w.finish({"ragmeter_version": "0.1.0"})
    out = write_report(tmp_path / "run", tmp_path / "report.html", data=tmp_path / "data.jsonl")
    size = out.stat().st_size
    assert size < 20e6, size
    html = out.read_text(encoding="utf-8")
    assert "Showing 2,000 of 100,000 samples" in html
    payload = json.loads(re.search(r'id="ragmeter-data">(.*?)</script>', html, re.S).group(1))
    assert payload["total"] == N and len(payload["samples"]) == 2000
    shown = {s["id"]: s for s in payload["samples"]}
    # every errored sample is embedded (101 of them: well under half the budget) with its error
    errored = [f"q{i}" for i in range(0, N, 997)]
    assert all(sid in shown and shown[sid]["x"] for sid in errored)
    # texts come along for the embedded samples
    assert shown["q0"]["q"].startswith("question 0 ")
    # aggregates cover all samples: the recall@5 card's n is the number of samples with a rank <= 5
    n_rel = int((first <= 5).sum())
    mean = n_rel / N
    assert f"{mean:.3f}" in html.split('data-metric="recall@5"')[1].split("</article>")[0]
    # the diagnosis ran over every sample: the position analysis counted them
    assert "rules checked" in html
