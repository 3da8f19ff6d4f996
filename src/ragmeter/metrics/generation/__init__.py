"""Generation metrics judged by an LLM (faithfulness, answer relevancy, ...) and their pure arithmetic.

Importing this package registers every judged metric; each module holds one metric, its prompt
templates live in ``prompts/`` beside them (versioned; the version is part of every cache key).
"""

from . import (  # noqa: F401  (importing registers the metrics)
    answer_grade,
    answer_relevancy,
    context_precision_llm,
    context_relevancy,
    correctness,
    faithfulness,
    faithfulness_nli,
    hallucination_rate,
    passage_recall,
)
