"""A rule-based fake judge: reads the rendered prompt and answers like a careful, literal judge.

Deterministic rules (so tests can compute expected scores by hand):
- analyse_answer: claims = the answer's sentences; no_facts = no sentence; questions =
  ["Q: <first claim>?"]; noncommittal = the answer contains "don't know".
- verify_claims: a statement is supported when its lower-cased text occurs in the context (its
  evidence is then the statement itself, else "none").
- rate_chunks (graded): a passage's rating is given by the number in "[rating N]" inside it, else 0.
- chunk_relevance (binary): a passage is relevant when its "[rating N]" has N >= 5.
- answer_match / correctness (graded): rating given by "[rating N]" inside the answer, else 0.
- answer_addresses (binary): responds when the answer's "[rating N]" has N >= 5.
- answer_agrees (binary): same_answer when the answer contains "[same]", conflicts when it
  contains "[conflict]".
- answer_grade: grade given by "[grade N]" inside the answer.
- passage_recall: a section scores 5 when its text occurs in the returned passage, else
  1 (essential) or 0 (bonus).
"""

from __future__ import annotations

import re

from tests.judges.fake_server import ChatCall, Reply


def block(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.S)
    return m.group(1) if m else ""


def items(text: str) -> list[str]:
    return [re.sub(r"^\d+\.\s*", "", line) for line in text.splitlines() if re.match(r"^\d+\.", line)]


def number(text: str, word: str) -> int | None:
    m = re.search(rf"\[{word} (\d+)\]", text)
    return int(m.group(1)) if m else None


def judge_rule(call: ChatCall) -> Reply | dict:
    u = call.user_text
    if "Do four things with the answer" in u:
        answer = block(u, "answer")
        claims = [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]
        return {"claims": claims, "no_facts": "no" if claims else "yes",
                "questions": [f"Q: {claims[0]}?"] if claims else [],
                "evasive": "yes" if "don't know" in answer else "no"}
    if "Split the answer into short" in u:
        answer = block(u, "answer")
        claims = [s.strip() for s in re.split(r"(?<=\.)\s+", answer) if s.strip()]
        return {"claims": claims, "no_facts": "no" if claims else "yes"}
    if "Do two things with the answer" in u:
        answer = block(u, "answer")
        return {"questions": [f"Q: {answer}?"], "evasive": "yes" if "don't know" in answer else "no"}
    if "decide whether the context supports the statement" in u:
        ctx = block(u, "context").lower()
        return {"verdicts": [{"statement": i, "evidence": s if s.lower() in ctx else "none",
                              "supported": "yes" if s.lower() in ctx else "no"}
                             for i, s in enumerate(items(block(u, "statements")), start=1)]}
    if "For each numbered passage, rate" in u:
        return {"ratings": [{"passage": i, "reason": "r", "rating": number(p, "rating") or 0}
                            for i, p in enumerate(items(block(u, "passages")), start=1)]}
    if "For each numbered passage, decide whether it is relevant" in u:
        return {"passages": [{"passage": i, "reason": "r", "relevant": "yes" if (number(p, "rating") or 0) >= 5
                              else "no"} for i, p in enumerate(items(block(u, "passages")), start=1)]}
    if "Decide whether the answer responds" in u:
        return {"reason": "rule", "responds": "yes" if (number(block(u, "answer"), "rating") or 0) >= 5 else "no"}
    if '"same_answer"' in u:
        answer = block(u, "answer")
        return {"reason": "rule", "same_answer": "yes" if "[same]" in answer else "no",
                "conflicts": "yes" if "[conflict]" in answer else "no"}
    if "Rate how directly the answer responds" in u or "agrees with the reference answer" in u:
        return {"reason": "rule", "rating": number(block(u, "answer"), "rating") or 0}
    if "Grade the factual accuracy" in u:
        return {"reasoning": "step by step", "grade": number(block(u, "answer"), "grade") or 1}
    if "For each ground-truth section" in u:
        returned = block(u, "returned").lower()
        out = []
        for line in items(block(u, "sections")):
            m = re.match(r"\[(\w+)\] (ESSENTIAL|BONUS): (.*)", line)
            assert m, line
            label, kind, text = m.groups()
            score = 5 if text.lower() in returned else (1 if kind == "ESSENTIAL" else 0)
            out.append({"section": label, "reasoning": "r", "score": score})
        return {"sections": out}
    return Reply.malformed("unknown prompt")
