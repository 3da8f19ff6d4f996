"""The RAGAS and DeepEval adapters against the real libraries (the test suite uses look-alike classes).

RAGAS and DeepEval are not test dependencies: their installs pull langchain / grpc / OpenTelemetry,
and DeepEval registers a pytest plugin that would load into every test session. This script runs
the checks of tests/io/test_adapters.py on the real classes, in an environment of its own::

    pip install --no-deps --target /tmp/rl ragas==0.4.3 langchain-core deepeval==4.3.1 \\
        pydantic-settings python-dotenv tenacity nest-asyncio portalocker
    cd /tmp && DEEPEVAL_TELEMETRY_OPT_OUT=YES PYTHONPATH=/path/to/ragmeter/src:/tmp/rl \\
        python /path/to/ragmeter/bench/adapters_real_libs.py

(``--no-deps`` is enough for DeepEval's data classes, which is all ragmeter touches; run it from
a scratch directory: importing deepeval creates ``.deepeval/`` in the current one.) RAGAS needs
its real install (langchain-community, instructor, ...: ``--no-deps`` is not enough to build an
``EvaluationDataset``); with one in another venv, run only its part there::

    PYTHONPATH=/path/to/ragmeter/src /path/to/ragas-venv/bin/python bench/adapters_real_libs.py ragas

It prints one line per check and exits 1 when any fails.
"""

from __future__ import annotations

import math
import sys

import ragmeter
from ragmeter import InputError

HAMLET = "Hamlet is a tragedy written by William Shakespeare."
PARIS = "Paris is the capital of France."
NILE = "The Nile flows north into the Mediterranean Sea."
WATER = "Water boils at one hundred degrees Celsius at sea level."
# (query, answer, reference, retrieved, relevant): the labelled text at rank 2, 1, 3 -> RR 1/2, 1, 1/3
ROWS = [
    ("Who wrote Hamlet?", "Shakespeare.", "William Shakespeare", [PARIS, HAMLET], [HAMLET]),
    ("Where does the Nile flow?", "North.", "North to the Mediterranean", [NILE], [NILE]),
    ("When does water boil?", "At 100 C.", "100 degrees Celsius",
     ["Gold is a chemical element with symbol Au.", "Copper conducts electricity well.", WATER], [WATER]),
]
RR = [0.5, 1.0, 1 / 3]
FAILED: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(name)


def same_rr(run: ragmeter.RunResult) -> bool:
    return all(math.isclose(a, b) for a, b in zip(run.scores["mrr"].tolist(), RR, strict=True))


def ragas_checks() -> None:
    import ragas
    from ragas import EvaluationDataset, SingleTurnSample

    samples = [SingleTurnSample(user_input=q, response=a, reference=r, retrieved_contexts=c, reference_contexts=g)
               for q, a, r, c, g in ROWS]
    ds = EvaluationDataset(samples=samples)
    print(f"ragas {ragas.__version__}")
    run = ragmeter.evaluate(samples, ["mrr"])
    check("RAGAS list of SingleTurnSample", same_rr(run), str(run.scores["mrr"].tolist()))
    run = ragmeter.evaluate(ds, ["mrr"])
    check("RAGAS EvaluationDataset", same_rr(run), str(run.scores["mrr"].tolist()))
    run = ragmeter.evaluate(ds.to_pandas(), ["mrr"])
    check("RAGAS EvaluationDataset.to_pandas()", same_rr(run), str(run.scores["mrr"].tolist()))
    run = ragmeter.evaluate(ds.to_hf_dataset(), ["mrr"])
    check("RAGAS EvaluationDataset.to_hf_dataset()", same_rr(run), str(run.scores["mrr"].tolist()))
    ids = SingleTurnSample(user_input="q", retrieved_contexts=[PARIS, HAMLET], retrieved_context_ids=["p", "h"],
                           reference_context_ids=["h"])
    run = ragmeter.evaluate([ids], ["mrr"])
    check("RAGAS context ids", run.scores["mrr"].tolist() == [0.5], str(run.scores["mrr"].tolist()))
    df = ragmeter.evaluate(ds, ["mrr"]).to_pandas(inputs=True)
    check("to_pandas(inputs=True) of a RAGAS run", df["contexts"].tolist()[0] == [PARIS, HAMLET]
          and df.columns.tolist()[-2:] == ["mrr", "mrr_reason"], str(df.columns.tolist()))


def deepeval_checks() -> None:
    import deepeval
    from deepeval.dataset import EvaluationDataset, Golden
    from deepeval.test_case import LLMTestCase

    print(f"deepeval {getattr(deepeval, '__version__', '?')}")
    cases = [LLMTestCase(input=q, actual_output=a, expected_output=r, retrieval_context=c, context=g)
             for q, a, r, c, g in ROWS]
    run = ragmeter.evaluate(cases, ["mrr"])
    check("DeepEval list of LLMTestCase", same_rr(run), str(run.scores["mrr"].tolist()))
    ds = EvaluationDataset(goldens=[Golden(input=q, expected_output=r, retrieval_context=c, context=g)
                                    for q, _a, r, c, g in ROWS])
    run = ragmeter.evaluate(ds, ["mrr"])
    check("DeepEval EvaluationDataset of goldens", same_rr(run), str(run.scores["mrr"].tolist()))
    try:
        bad = LLMTestCase(input="q", actual_output="a", retrieval_context=[PARIS])
        object.__setattr__(bad, "retrieval_context", PARIS)  # what a wrong upstream value looks like
        ragmeter.evaluate([cases[0], bad], ["mrr"])
        check("DeepEval bad case is an InputError", False, "no error")
    except InputError as exc:
        check("DeepEval bad case is an InputError", exc.line == 2 and exc.field == "contexts"
              and "[LLMTestCase.retrieval_context]" in str(exc), str(exc))


def main(argv: list[str]) -> int:
    which = argv or ["ragas", "deepeval"]
    for fn in [{"ragas": ragas_checks, "deepeval": deepeval_checks}[w] for w in which]:
        try:
            fn()
        except ImportError as exc:
            check(fn.__name__, False, f"cannot import the library: {exc}")
    print("all passed" if not FAILED else f"{len(FAILED)} failed: {FAILED}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
