"""Hard values of judge-check: the score a judged metric would have from the judge's hard verdicts
and ratings (kept in a result's details beside a probability-weighted score).

:func:`hard_value` per row, :func:`chunk_ratings` per chunk; :mod:`ragmeter.judges.check` pairs
them with the human labels (``auroc_hard``, the ``NAME [hard]`` rows of its separation table).
"""

from __future__ import annotations

from typing import Any


def hard_score(details: dict[str, Any]) -> float | None:
    """The hard-verdict faithfulness of a probability-weighted faithfulness result: the direct
    verdict as 1/0, or the share of claims with a hard "supported" verdict; None when the result
    has no hard verdict beside its score (it already is the hard score)."""
    if details.get("scoring") == "probability" and "verdict" in details:
        return 1.0 if details["verdict"] == "yes" else 0.0
    claims = details.get("claims") or []
    if claims and any(c.get("p_yes") is not None for c in claims):
        return sum(c["supported"] is True for c in claims) / len(claims)
    return None


def hard_value(base: str, details: dict[str, Any]) -> float | None:
    """The score metric ``base`` would have from the hard verdicts or ratings in a result's
    ``details`` (on the score's own scale; for hallucination_rate the hard *faithfulness*, see
    :func:`hard_score`), None when the details keep none (the score already is the hard one, or
    the result has no judge rating: an embedder score, an empty-answer shortcut).

    faithfulness, hallucination_rate: :func:`hard_score`; correctness (graded, or the reasoned
    decisions) and answer_relevancy(scale=graded): ``rating / 10``; correctness's one-word decision
    (the default): ``same_answer`` as 1/0; answer_relevancy (binary, the default): ``responds``
    as 1/0; answer_grade: ``(grade - 1) / 4``; passage_recall: ``hard_final / 5``;
    a rubric (:mod:`ragmeter.metrics.generation.rubric`, found in the registry): on a ``LOW-HIGH``
    scale ``(rating - LOW) / (HIGH - LOW)`` of the hard ``rating``, on yes/no the hard ``verdict``
    as 1/0. Chunk metrics are per chunk: :func:`chunk_ratings`."""
    if base in ("faithfulness", "hallucination_rate"):
        return hard_score(details)
    if base in ("correctness", "answer_relevancy") and isinstance(details.get("rating"), int | float):
        return float(details["rating"]) / 10
    if base == "answer_relevancy" and isinstance(details.get("responds"), bool):
        return float(details["responds"])
    if base == "correctness" and isinstance(details.get("same_answer"), bool):  # the one-word decision
        return float(details["same_answer"])
    if base == "answer_grade" and isinstance(details.get("grade"), int | float):
        return (float(details["grade"]) - 1) / 4
    if base == "passage_recall" and isinstance(details.get("hard_final"), int | float):
        return float(details["hard_final"]) / 5
    return _rubric_hard(base, details)


def _rubric_hard(base: str, details: dict[str, Any]) -> float | None:
    """The hard value of a rubric result (see :func:`hard_value`); None for any other metric."""
    from ..metrics.generation.rubric import Rubric
    from ..registry import lookup_spec

    spec = lookup_spec(base)
    rubric = spec.extra.get("rubric") if spec is not None else None
    if not isinstance(rubric, Rubric):
        return None
    if rubric.bounds is None:
        return {"yes": 1.0, "no": 0.0}.get(str(details.get("verdict")))
    low, high = rubric.bounds
    rating = details.get("rating")
    return (float(rating) - low) / (high - low) if isinstance(rating, int | float) else None


def chunk_ratings(base: str, details: dict[str, Any]) -> tuple[list[float], list[float]]:
    """``(ratings, hard ratings)`` per chunk (0-10) of a chunk metric's details: context_relevancy's
    ``chunks[i]`` (``rating``; hard: ``hard_rating``, or ``relevant`` as 10/0 on the binary scale),
    context_precision_llm's ``ratings`` / ``hard_ratings``; an unrated chunk counts 0, a chunk
    without a hard value its rating."""
    if base == "context_precision_llm":
        used = [float(r or 0.0) for r in details.get("ratings") or []]
        hard = details.get("hard_ratings") or used
        return used, [float(h) if h is not None else u for h, u in zip(hard, used, strict=True)]
    used, hard = [], []
    for chunk in details.get("chunks") or []:
        used.append(float(chunk["rating"]) if chunk.get("rating") is not None else 0.0)
        if chunk.get("hard_rating") is not None:
            hard.append(float(chunk["hard_rating"]))
        elif isinstance(chunk.get("relevant"), bool):
            hard.append(10.0 if chunk["relevant"] else 0.0)
        else:
            hard.append(used[-1])
    return used, hard
