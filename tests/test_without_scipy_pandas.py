"""Every module of ragmeter imports, and a run, a comparison and a report work, with scipy and pandas
absent (neither is a core dependency: ``sys.modules[name] = None`` makes importing it fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys
sys.modules["scipy"] = None
sys.modules["pandas"] = None
from tests.optional_deps import import_every_module

walk = import_every_module()
imported, left_out, failed = walk["imported"], walk["left_out"], walk["failed"]

import tempfile
from pathlib import Path
from ragmeter import evaluate
from ragmeter.report import write_report
from ragmeter.stats import agreement, compare, mcnemar_test, paired_ttest
from ragmeter.errors import MissingBackendError

tmp = Path(tempfile.mkdtemp())
rows = [json.loads(line) for line in open(DATA, encoding="utf-8")]
worse = tmp / "worse.jsonl"
with open(worse, "w", encoding="utf-8") as fh:
    for r in rows:
        half = r["answer"][: len(r["answer"]) // 2]
        fh.write(json.dumps({**r, "contexts": r["contexts"][::-1], "answer": half}) + "\n")
metrics = ["mrr", "ndcg@5", "hit_rate@1", "recall@5", "token_f1", "rouge_l"]
a = evaluate(DATA, metrics, out_dir=tmp / "a")
b = evaluate(str(worse), metrics, out_dir=tmp / "b")
out = {"summary": a.summary()["mrr"]["mean"]}
for test in ("auto", "t-test", "mcnemar"):
    c = compare(a, b, test=test, metrics=["hit_rate@1"] if test == "mcnemar" else None)
    out[test] = [[r["metric"], r["test"], r["p_value"]] for r in c.metrics]
report = write_report(tmp / "a", tmp / "report.html", baseline=tmp / "b")
out["report_bytes"] = report.stat().st_size
out["t_p"] = paired_ttest(T_A, T_B).p_value
out["mcnemar_p"] = mcnemar_test(M_A, M_B).p_value
ag = agreement(LABELS, SCORES)
out["agreement"] = [ag["spearman"], ag["spearman_p"], ag["kendall"], ag["kendall_p"]]
import numpy as np
import pyarrow as pa
from ragmeter.stats import bootstrap_ci
from ragmeter.trec import Qrels, Run
for key, call in (("to_pandas", a.to_pandas), ("to_dataframe", Qrels.from_dict({"q": {"d": 1}}).to_dataframe),
                  ("statistic", lambda: bootstrap_ci([1.0, 2.0, 4.0], statistic=np.median))):
    try:
        call()
        out[key] = "no error"
    except MissingBackendError as exc:
        out[key] = str(exc)
import io
import pyarrow.csv as pa_csv
# read with Arrow's CSV reader: pa.array(list) would go through pyarrow's pandas shim, which takes the
# None placed in sys.modules for pandas
table = pa_csv.read_csv(io.BytesIO(b"qid,docid,score\nq1,d1,0.5\nq1,d2,0.7\nq2,d1,0.1\n"),
                        convert_options=pa_csv.ConvertOptions(auto_dict_encode=True))
assert pa.types.is_dictionary(table.schema.field("docid").type)
out["arrow_run"] = Run.from_pandas(table).to_dict()
print(json.dumps({"imported": imported, "left_out": left_out, "failed": failed, "out": out,
                  "loaded": [m for m in ("scipy", "pandas") if sys.modules.get(m) is not None]}))
"""


T_A, T_B = [1.0, 2.0, 3.0, 4.0, 2.5], [2.0, 4.0, 5.0, 5.0, 2.0]
M_A, M_B = [1, 1, 0, 0, 0, 1, 0], [1, 0, 1, 1, 1, 1, 1]
LABELS, SCORES = [0, 1, 2, 3, 2, 1, 3], [0.1, 0.3, 0.9, 0.8, 0.4, 0.2, 0.7]


def test_ragmeter_runs_without_scipy_and_pandas():
    code = PROBE
    for name, value in (("DATA", str(ROOT / "examples" / "rag_samples.jsonl")), ("T_A", T_A),
                        ("T_B", T_B), ("M_A", M_A), ("M_B", M_B), ("LABELS", LABELS), ("SCORES", SCORES)):
        code = code.replace(name, repr(value))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["failed"] == [], res["failed"]
    assert res["loaded"] == []
    assert len(res["imported"]) > 100
    assert {"ragmeter._dist", "ragmeter.stats.slices", "ragmeter.trec.io"} <= set(res["imported"])
    assert {name for name, _ in res["left_out"]} <= {"ragmeter.engines.ray_engine", "ragmeter.embedders.st"}, res
    out = res["out"]
    assert 0 < out["summary"] <= 1 and out["report_bytes"] > 10_000
    tests = {test: {row[1] for row in out[test]} for test in ("auto", "t-test", "mcnemar")}
    assert tests["t-test"] == {"t-test"} and tests["mcnemar"] <= {"mcnemar-exact", "mcnemar-chi2"}, tests
    assert all(0 <= row[2] <= 1 for test in ("auto", "t-test", "mcnemar") for row in out[test] if row[2] is not None)
    assert "pip install pandas" in out["to_pandas"] and "pip install pandas" in out["to_dataframe"]
    assert "pip install scipy" in out["statistic"]
    assert out["arrow_run"] == {"q1": {"d1": 0.5, "d2": 0.7}, "q2": {"d1": 0.1}}
    try:
        from scipy import stats
    except ImportError:  # the numbers below are checked where scipy (the dev extra) is installed
        return
    assert out["t_p"] == _approx(stats.ttest_rel(T_B, T_A).pvalue)
    n01 = sum(x == 0 and y == 1 for x, y in zip(M_A, M_B, strict=True))
    n10 = sum(x == 1 and y == 0 for x, y in zip(M_A, M_B, strict=True))
    assert out["mcnemar_p"] == _approx(stats.binomtest(n01, n01 + n10, 0.5).pvalue)
    sp, kt = stats.spearmanr(LABELS, SCORES), stats.kendalltau(LABELS, SCORES)
    assert out["agreement"] == _approx([sp.statistic, sp.pvalue, kt.statistic, kt.pvalue])


def _approx(v):
    import pytest

    return pytest.approx(v, rel=1e-10, abs=0)
