"""RAGAS side of ``bench/vs_ragas.py``: runs in the RAGAS venv (not ragmeter's), one metric at a time.

    /path/to/ragas-venv/bin/python bench/vs_ragas_runner.py JOB.json OUT.json

``JOB.json`` (written by ``bench/vs_ragas.py``)::

    {"base_url": "http://127.0.0.1:PORT/v1",   # the counting proxy in front of the judge
     "control_url": "http://127.0.0.1:PORT/__phase__",
     "model": "qwen", "api_key": "none", "embedder_path": "/.../all-MiniLM-L6-v2",
     "rows": [{"id", "query", "contexts", "answer", "reference"}, ...],
     "runs": [{"phase": "ragas/defaults/faithfulness", "metric": "faithfulness",
               "setting": "defaults" | "best", "timeout": 600}, ...]}

For each run it tells the proxy which phase the next requests belong to (``POST control_url``),
builds the RAGAS metric, and calls ``ragas.evaluate`` on the rows with a fresh LLM:
``LangchainLLMWrapper(ChatOpenAI(...))`` at the proxy, and ``LangchainEmbeddingsWrapper`` around
a LangChain ``Embeddings`` that encodes with the same sentence-transformers model directory as
ragmeter's ``st:all-MiniLM-L6-v2`` (L2-normalised, as ragmeter's). Settings: ``defaults`` is
``RunConfig()`` (16 workers, 180 s timeout, 10 retries); ``best`` is
``RunConfig(max_workers=1, timeout=T)``. RAGAS turns a failed job into NaN and logs
``Exception raised in Job[i]``; a logging handler records that exception per row, so an error
and a NaN from unparseable output are told apart. Writes ``OUT.json``: per phase the per-row
score (null for NaN) and error, the evaluate() wall time, and the versions.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sys
import time
import urllib.request
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no usage telemetry from the bench
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_JOB = re.compile(r"Exception raised in Job\[(\d+)\]: (.*)", re.S)


class JobErrors(logging.Handler):
    """Collects RAGAS's ``Exception raised in Job[i]: Type(message)`` log records by job index."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.by_job: dict[int, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        m = _JOB.match(record.getMessage())
        if m:
            self.by_job[int(m.group(1))] = m.group(2)[:500]


def make_embeddings(path: str) -> Any:
    """A RAGAS embeddings object around the sentence-transformers model in ``path``."""
    from langchain_core.embeddings import Embeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from sentence_transformers import SentenceTransformer

    class STEmbeddings(Embeddings):
        # RAGAS's usage tracking reads ``.model`` as a model *name* (a string); the encoder is ``_st``
        model = "all-MiniLM-L6-v2"

        def __init__(self) -> None:
            self._st = SentenceTransformer(path, device="cpu")

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self._st.encode(list(texts), normalize_embeddings=True).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    emb = STEmbeddings()
    emb.embed_query("warm up")  # load the weights before any timed run
    return LangchainEmbeddingsWrapper(emb)


def make_metric(name: str) -> Any:
    """The RAGAS metric object for a bench metric name, at its defaults."""
    from ragas import metrics as m

    return {"faithfulness": m.Faithfulness, "answer_relevancy": m.ResponseRelevancy,
            "context_precision": m.LLMContextPrecisionWithReference,
            "context_recall": m.LLMContextRecall}[name]()


def run_one(job: dict[str, Any], run: dict[str, Any], embeddings: Any, errors: JobErrors) -> dict[str, Any]:
    """One metric over every row at one setting; per-row score/error and wall time."""
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, SingleTurnSample, evaluate
    from ragas.llms import LangchainLLMWrapper

    req = urllib.request.Request(job["control_url"], data=run["phase"].encode(), method="POST")
    urllib.request.urlopen(req, timeout=10).read()
    llm = LangchainLLMWrapper(ChatOpenAI(model=job["model"], base_url=job["base_url"], api_key=job["api_key"]))
    config = RunConfig() if run["setting"] == "defaults" else RunConfig(max_workers=1, timeout=int(run["timeout"]))
    data = EvaluationDataset([SingleTurnSample(user_input=r["query"], retrieved_contexts=r["contexts"],
                                               response=r["answer"], reference=r["reference"]) for r in job["rows"]])
    metric = make_metric(run["metric"])
    errors.by_job.clear()
    t0 = time.perf_counter()
    failure = None
    try:
        result = evaluate(data, metrics=[metric], llm=llm, embeddings=embeddings, run_config=config,
                          show_progress=False)
        scores = [s.get(metric.name) for s in result.scores]
    except Exception as exc:  # a whole-run failure: every row is an error, the bench goes on
        failure, scores = f"{type(exc).__name__}: {exc}"[:500], [None] * len(job["rows"])
    seconds = time.perf_counter() - t0
    rows = []
    for i, (r, s) in enumerate(zip(job["rows"], scores, strict=True)):
        ok = isinstance(s, (int, float)) and not math.isnan(float(s))
        rows.append({"id": r["id"], "score": float(s) if ok else None,
                     "error": failure or errors.by_job.get(i)})
    return {"phase": run["phase"], "metric": run["metric"], "ragas_metric": metric.name,
            "setting": run["setting"], "run_config": {k: getattr(config, k) for k in
                                                      ("max_workers", "timeout", "max_retries")},
            "seconds": seconds, "failure": failure, "rows": rows}


def main() -> None:
    """Read the job, run every run in order, write the results."""
    job_path, out_path = sys.argv[1], sys.argv[2]
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    import langchain_community
    import ragas

    errors = JobErrors()
    logging.getLogger("ragas").addHandler(errors)
    # only ResponseRelevancy reads embeddings: a faithfulness-only job needs no sentence-transformers
    needs = any(run["metric"] == "answer_relevancy" for run in job["runs"])
    embeddings = make_embeddings(job["embedder_path"]) if needs else None
    out: dict[str, Any] = {"ragas_version": ragas.__version__,
                           "langchain_community_version": langchain_community.__version__, "runs": []}
    for run in job["runs"]:
        out["runs"].append(run_one(job, run, embeddings, errors))
        with open(out_path, "w", encoding="utf-8") as f:  # after every run: nothing finished is lost
            json.dump(out, f, indent=1)
        print(f"ragas {run['phase']}: {out['runs'][-1]['seconds']:.1f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
