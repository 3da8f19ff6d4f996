"""Judge calls per sample for every judged metric, counted against the loopback test server.

Each metric (and the canonical set together) is evaluated on the same samples with a fresh,
cache-less judge against ``tests/judges/fake_server.py`` with the rule-based judge of
``tests/metrics/generation/rules.py``; the table is the number of HTTP requests the server
received divided by the number of samples. Nothing is estimated.

Usage::

    python bench/calls_per_sample.py [--samples 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from tests.judges.fake_server import FakeLLMServer  # noqa: E402
from tests.metrics.generation.rules import judge_rule  # noqa: E402

import ragmeter  # noqa: E402
from ragmeter.judges import from_spec  # noqa: E402


class HashEmbedder:
    """A deterministic stand-in embedder (the count is of judge calls; embeddings are not judge calls)."""

    async def aembed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 16))
        for i, t in enumerate(texts):
            out[i, hash(t) % 16] = 1.0
        return out


SETS = [
    ["faithfulness"], ["hallucination_rate"], ["faithfulness", "hallucination_rate"],
    ["answer_relevancy"], ["answer_relevancy(method=questions)"], ["context_relevancy"],
    ["context_precision_llm"], ["context_relevancy", "context_precision_llm"], ["correctness"],
    ["answer_grade"], ["passage_recall"],
    ["faithfulness", "answer_relevancy", "context_relevancy", "context_recall"],
    ["faithfulness", "answer_relevancy(method=questions)", "context_relevancy", "context_recall"],
    ["faithfulness(steps=separate)", "answer_relevancy(method=questions,steps=separate)", "context_relevancy",
     "context_recall"],
]


def samples(n: int) -> list[ragmeter.Sample]:
    """n distinct samples with every field the judged metrics read."""
    return [
        ragmeter.Sample(
            id=str(i), query=f"What is fact {i}?", answer=f"Fact {i} is true. It was found in {1900 + i}.",
            contexts=[f"Fact {i} is true. [rating 9]", f"Unrelated {i}. [rating 1]", f"More on {i}. [rating 5]"],
            reference=f"[ESSENTIAL PASSAGE] Fact {i} is true. [BONUS PASSAGE] It was found in {1900 + i}.",
            relevant=[f"Fact {i} is true."],
        )
        for i in range(n)
    ]


def main() -> None:
    """Print the calls-per-sample table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()
    data = samples(args.samples)
    print(f"{'metrics':<92}{'calls/sample':>13}")
    with FakeLLMServer(judge_rule) as server:
        for metric_set in SETS:
            server.clear_log()
            judge = from_spec(f"openai:fake@{server.url}", cache=False)
            run = ragmeter.evaluate(data, metric_set, judge=judge, embedder=HashEmbedder())
            errors = sum(v["errors"] for v in run.summary().values())
            note = f"  ({errors} errors)" if errors else ""
            print(f"{', '.join(metric_set):<92}{len(server.log) / len(data):>13.2f}{note}")


if __name__ == "__main__":
    main()
