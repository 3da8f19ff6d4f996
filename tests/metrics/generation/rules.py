"""A rule-based fake judge: answers by the reply schema asked for, like a careful, literal judge.

The rule reads *which* reply the client wants from the request's schema name
(:attr:`ChatCall.schema_name`: ``response_format.json_schema.name``, or the schema's title in
the other structured-output modes; a sized model such as ``Verdicts3`` counts as ``Verdicts``)
and the evaluated texts from their data tags (``<answer>``, ``<context>``...). It never matches
a prompt's instruction sentences, so rewording a prompt does not change its replies
(``test_reworded_prompts_get_the_same_replies``).

Deterministic rules (so tests can compute expected scores by hand):
- AnswerAnalysis (analyse_answer): claims = the answer's sentences; no_facts = no sentence;
  questions = ["Q: <first claim>?"]; evasive = the answer contains "don't know".
- Claims (decompose_answer): claims = the answer's sentences.
- Questions (generate_questions): ["Q: <answer>?"], evasive as above.
- Verdicts (verify_claims): a statement is supported when its lower-cased text occurs in the
  context (its evidence is then the statement itself, else "none").
- CappedVerdicts (verify_claims_short with verdicts=capped_quotes): as Verdicts.
- BareVerdicts (verify_claims_bare, verdicts_after_quotes): as Verdicts, without the evidence.
- Quotes (quote_claims): as Verdicts' evidence, without the verdicts.
- InlineClaims (check_answer_claims): claims = the answer's sentences, each checked as in
  Verdicts; no_facts = no sentence.
- Ratings (rate_chunks, graded): a passage's rating is given by the number in "[rating N]"
  inside it, else 0.
- ChunkVerdicts (chunk_relevance, binary): a passage is relevant when its "[rating N]" has N >= 5.
- Graded (answer_match, correctness): rating given by "[rating N]" inside the answer, else 0.
- Responds (answer_addresses): responds when the answer's "[rating N]" has N >= 5.
- Agreement (answer_agrees): same_answer when the answer contains "[same]", conflicts when it
  contains "[conflict]".
- Grade (answer_grade): grade given by "[grade N]" inside the answer.
- SectionScores (passage_recall): a section scores 5 when its text occurs in the returned
  passage, else 1 (essential) or 0 (bonus).
- SectionVerdicts (passage_recall, scale=binary): a section is contained ("yes") when its text
  occurs in the returned passage, else "no".
- RubricSteps (rubric_steps): two fixed steps, "Read the data." and "Check the criteria.".
- RubricRating (rubric): rating given by "[rating N]" anywhere in the user message, else 0.
- RubricVerdict (rubric, yes/no): "yes" when the user message contains "[yes]", else "no".
- No schema (a one-word yes/no request, ``max_tokens`` 1): with a ``<section>`` block
  (passage_recall's per-section decision) "yes" when the section's text occurs in the
  ``<returned>`` passage; with a ``<passage>`` block (the chunk
  metrics' default, one chunk a request) "yes" when the passage's "[rating N]" has N >= 5; with a
  ``<context>`` block (faithfulness(mode=direct)) "yes" when every sentence of the answer occurs in
  the context (one claim's check, with a ``<statement>`` block and no answer: when the statement's
  sentences do); otherwise (the default decisions of answer_relevancy and correctness) "yes" when
  the answer's "[rating N]" has N >= 5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from tests.judges.fake_server import ChatCall, Reply


def block(text: str, tag: str) -> str:
    """The content of the data block ``<tag>...</tag>`` ("" when absent)."""
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.S)
    return m.group(1) if m else ""


def items(text: str) -> list[str]:
    """The items of a numbered list ``1. a\\n2. b``."""
    return [re.sub(r"^\d+\.\s*", "", line) for line in text.splitlines() if re.match(r"^\d+\.", line)]


def number(text: str, word: str) -> int | None:
    """N of the marker ``[word N]`` in ``text``."""
    m = re.search(rf"\[{word} (\d+)\]", text)
    return int(m.group(1)) if m else None


def schema_of(call: ChatCall) -> str:
    """The requested reply model's name without a sized model's count (``Verdicts3`` -> ``Verdicts``)."""
    return re.sub(r"\d+$", "", call.schema_name or "")


def _sentences(answer: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]


def _analysis(u: str) -> dict[str, Any]:
    answer = block(u, "answer")
    claims = _sentences(answer)
    return {"claims": claims, "no_facts": "no" if claims else "yes",
            "questions": [f"Q: {claims[0]}?"] if claims else [],
            "evasive": "yes" if "don't know" in answer else "no"}


def _claims(u: str) -> dict[str, Any]:
    claims = _sentences(block(u, "answer"))
    return {"claims": claims, "no_facts": "no" if claims else "yes"}


def _questions(u: str) -> dict[str, Any]:
    answer = block(u, "answer")
    return {"questions": [f"Q: {answer}?"], "evasive": "yes" if "don't know" in answer else "no"}


def _verdicts(u: str) -> dict[str, Any]:
    ctx = block(u, "context").lower()
    return {"verdicts": [{"statement": i, "evidence": s if s.lower() in ctx else "none",
                          "supported": "yes" if s.lower() in ctx else "no"}
                         for i, s in enumerate(items(block(u, "statements")), start=1)]}


def _bare_verdicts(u: str) -> dict[str, Any]:
    return {"verdicts": [{"statement": v["statement"], "supported": v["supported"]} for v in _verdicts(u)["verdicts"]]}


def _quotes(u: str) -> dict[str, Any]:
    return {"quotes": [{"statement": v["statement"], "evidence": v["evidence"]} for v in _verdicts(u)["verdicts"]]}


def _inline(u: str) -> dict[str, Any]:
    ctx = block(u, "context").lower()
    claims = _sentences(block(u, "answer"))
    return {"claims": [{"claim": c, "evidence": c if c.lower() in ctx else "none",
                        "supported": "yes" if c.lower() in ctx else "no"} for c in claims],
            "no_facts": "no" if claims else "yes"}


def _ratings(u: str) -> dict[str, Any]:
    return {"ratings": [{"passage": i, "reason": "r", "rating": number(p, "rating") or 0}
                        for i, p in enumerate(items(block(u, "passages")), start=1)]}


def _chunk_verdicts(u: str) -> dict[str, Any]:
    return {"passages": [{"passage": i, "reason": "r", "relevant": "yes" if (number(p, "rating") or 0) >= 5 else "no"}
                         for i, p in enumerate(items(block(u, "passages")), start=1)]}


def _agreement(u: str) -> dict[str, Any]:
    answer = block(u, "answer")
    return {"reason": "rule", "same_answer": "yes" if "[same]" in answer else "no",
            "conflicts": "yes" if "[conflict]" in answer else "no"}


def _sections(u: str) -> dict[str, Any]:
    returned = block(u, "returned").lower()
    out = []
    for line in items(block(u, "sections")):
        m = re.match(r"\[(\w+)\] (ESSENTIAL|BONUS): (.*)", line)
        assert m, line
        label, kind, text = m.groups()
        score = 5 if text.lower() in returned else (1 if kind == "ESSENTIAL" else 0)
        out.append({"section": label, "reasoning": "r", "score": score})
    return {"sections": out}


def _section_verdicts(u: str) -> dict[str, Any]:
    return {"sections": [{"section": s["section"], "reasoning": "r", "contains": "yes" if s["score"] == 5 else "no"}
                         for s in _sections(u)["sections"]]}


#: reply model name -> the reply, from the user message
REPLIES: dict[str, Callable[[str], dict[str, Any]]] = {
    "AnswerAnalysis": _analysis,
    "Claims": _claims,
    "Questions": _questions,
    "Verdicts": _verdicts,
    "CappedVerdicts": _verdicts,
    "BareVerdicts": _bare_verdicts,
    "Quotes": _quotes,
    "InlineClaims": _inline,
    "Ratings": _ratings,
    "ChunkVerdicts": _chunk_verdicts,
    "Graded": lambda u: {"reason": "rule", "rating": number(block(u, "answer"), "rating") or 0},
    "Responds": lambda u: {"reason": "rule",
                           "responds": "yes" if (number(block(u, "answer"), "rating") or 0) >= 5 else "no"},
    "Agreement": _agreement,
    "Grade": lambda u: {"reasoning": "step by step", "grade": number(block(u, "answer"), "grade") or 1},
    "SectionScores": _sections,
    "SectionVerdicts": _section_verdicts,
    "RubricSteps": lambda u: {"steps": ["Read the data.", "Check the criteria."]},
    "RubricRating": lambda u: {"reason": "rule", "rating": number(u, "rating") or 0},
    "RubricVerdict": lambda u: {"reason": "rule", "verdict": "yes" if "[yes]" in u else "no"},
}


def _one_word(u: str) -> str:
    ctx = block(u, "context").lower()
    answer = block(u, "answer") or block(u, "statement")
    passage = block(u, "passage")
    section = block(u, "section")
    if section:
        return "yes" if section.strip() in block(u, "returned") else "no"
    if passage:
        return "yes" if (number(passage, "rating") or 0) >= 5 else "no"
    if ctx:
        return "yes" if all(s.lower() in ctx for s in _sentences(answer)) else "no"
    return "yes" if (number(answer, "rating") or 0) >= 5 else "no"


def judge_rule(call: ChatCall) -> Reply | dict:
    """The reply to ``call`` by the rules of the module docstring; an unknown schema gets prose."""
    if not call.schema_name and call.body.get("max_tokens") == 1:
        return Reply(content=_one_word(call.user_text))
    reply = REPLIES.get(schema_of(call))
    return reply(call.user_text) if reply is not None else Reply.malformed(f"unknown schema {call.schema_name!r}")


def answering(schema: str, reply: Any, otherwise: Callable[[ChatCall], Any] = judge_rule) -> Callable[[ChatCall], Any]:
    """A rule that sends ``reply`` to requests for reply model ``schema`` (sized or not) and asks
    ``otherwise`` for the rest."""

    def rule(call: ChatCall) -> Any:
        return reply if schema_of(call) == schema else otherwise(call)

    return rule


def tokens(*parts: tuple[str, dict[str, float]]) -> list[dict[str, Any]]:
    """OpenAI ``logprobs.content`` from (token, {alternative: probability}) parts (a token missing
    from its own alternatives gets probability 0.5)."""
    return [{"token": t, "logprob": math.log(alts.get(t, 0.5)),
             "top_logprobs": [{"token": a, "logprob": math.log(p)} for a, p in alts.items()]} for t, alts in parts]


def spelled(parts: list[tuple[str, dict[str, float]]]) -> Reply:
    """A reply whose text is exactly the tokens' concatenation, with their log-probabilities."""
    return Reply(content="".join(t for t, _ in parts), logprobs=tokens(*parts))
