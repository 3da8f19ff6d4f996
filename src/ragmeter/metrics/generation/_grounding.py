"""Claim grounding: does the answer make the claim the judge extracted from it? (no model)

A small judge asked for an answer's claims sometimes invents claims the answer never made (a
one-fact answer about when a landmark was completed came back with the landmark's height and
location too), and those are then verified as if the answer had made them. Every extracted claim
is therefore checked against the answer, deterministically:

.. math:: g(c) = \\frac{|W(c) \\setminus W(q) \\,\\cap\\, W(a)|}{|W(c) \\setminus W(q)|}

where :math:`W(x)` are the content words of ``x`` (case-folded word tokens minus English function
words, :func:`ragmeter.metrics.lexical.lexical_faithfulness.content_tokens`; a word also matches
when one is the other plus a plural/verb suffix, "towers" ~ "tower", "completed" ~ "complete"),
:math:`q` the question and :math:`a` the answer. Words the claim shares with the question do not
count: a self-contained claim restates the subject the question names ("the Eiffel Tower") even
when the answer says only "it". A claim is grounded when :math:`g(c) \\ge` :data:`GROUNDING_THRESHOLD`
(0.5: at least half of what the claim adds beyond the question is in the answer). Edge case: a claim
with no content word beyond the question's has :math:`g = 1` (it adds nothing to check).

The other way round, a small judge's claim list sometimes leaves out a sentence of the answer, and
the fact it states is then never checked (a dialogue reply's one changed fact among several right
ones was left out twice in twenty). :func:`uncovered_sentences` finds the answer's sentences that
state a number or a name (the :mod:`._checkworthy` claims that ``fact_consistency``'s number and
name rules would read) and whose content words beyond the question's the claims hold less than
:data:`GROUNDING_THRESHOLD` of, the same measure read from the sentence's side:

.. math:: \\mathrm{cov}(s) = \\frac{|W(s) \\setminus W(q) \\,\\cap\\, \\bigcup_{c} W(c)|}{|W(s) \\setminus W(q)|}

A sentence is uncovered too when one of its numbers (by value, ``fact_consistency``'s
:func:`~ragmeter.metrics.lexical.fact_consistency.numbers`) is in no claim and not in the
question, or one of its name runs (:func:`~ragmeter.metrics.lexical.fact_consistency.names`) has
content words beyond the question's of which no claim holds any: a changed fact in a sentence
that otherwise repeats a listed claim ("won the Nobel Prize in Chemistry in 1911" against the
claim "won the Nobel Prize in 1911").
Such sentences are split into claims in one more claim call of their own (``decompose_answer``
with those sentences as the answer); its grounded, check-worthy claims join the others.
"""

from __future__ import annotations

from typing import Any

from ..lexical.fact_consistency import names, numbers
from ..lexical.lexical_faithfulness import content_tokens
from ._checkworthy import split_claims

#: minimum share of a claim's new content words (beyond the question's) that the answer contains
GROUNDING_THRESHOLD = 0.5

_SUFFIXES = ("ing", "ed", "es", "s", "d")


def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if len(word) > len(suf) + 2 and word.endswith(suf):
            return word[: -len(suf)]
    return word


def grounding(claim: str, answer: str, question: str = "") -> float:
    """:math:`g(c)` of the module docstring: the share of the claim's content words beyond the
    question's that the answer contains (1.0 when there are none)."""
    asked = {_stem(w) for w in content_tokens(question)}
    said = {_stem(w) for w in content_tokens(answer)}
    new = [w for w in {_stem(w) for w in content_tokens(claim)} if w not in asked]
    if not new:
        return 1.0
    return sum(w in said for w in new) / len(new)


def grounded_mask(claims: list[str], answer: str, question: str = "",
                  threshold: float = GROUNDING_THRESHOLD) -> tuple[list[bool], list[dict[str, Any]]]:
    """``(per claim: kept?, [{"claim", "grounding"} of each dropped one])``, order kept; a claim is
    kept when :func:`grounding` >= ``threshold``."""
    mask: list[bool] = []
    dropped: list[dict[str, Any]] = []
    for c in claims:
        g = grounding(c, answer, question)
        mask.append(g >= threshold)
        if not mask[-1]:
            dropped.append({"claim": c, "grounding": round(g, 3)})
    return mask, dropped


def split_grounded(claims: list[str], answer: str, question: str = "",
                   threshold: float = GROUNDING_THRESHOLD) -> tuple[list[str], list[dict[str, Any]]]:
    """``(grounded claims, [{"claim", "grounding"} of each dropped one])``, order kept."""
    mask, dropped = grounded_mask(claims, answer, question, threshold)
    return [c for c, keep in zip(claims, mask, strict=True) if keep], dropped


def source_span(claim: str, answer: str) -> tuple[int, int] | None:
    """The ``[start, end)`` of the answer sentence a claim was taken from (the sentences of
    :func:`._checkworthy.split_claims`): the one holding the largest share of the claim's content
    words, the first on a tie; None when no sentence holds any (for the report's marks)."""
    best, share = None, 0.0
    for s in split_claims(answer):
        g = grounding(claim, s.text)
        if g > share:
            best, share = (s.start, s.end), g
    return best


def uncovered_sentences(claims: list[str], answer: str, question: str = "",
                        threshold: float = GROUNDING_THRESHOLD) -> list[str]:
    """The answer's check-worthy sentences (:func:`._checkworthy.split_claims`) that state a number
    or a name and whose content words beyond the question's ``claims`` hold less than ``threshold``
    of (:math:`\\mathrm{cov}(s)` of the module docstring), or with a number or a name no claim
    holds (the module docstring), in answer order; a sentence with no content word beyond the
    question's is never returned."""
    asked = {_stem(w) for w in content_tokens(question)}
    held = {_stem(w) for c in claims for w in content_tokens(c)}
    asked_values = {v for v, _, _ in numbers(question)}
    held_values = {v for c in claims for v, _, _ in numbers(c)}
    out: list[str] = []
    for s in split_claims(answer):
        found, runs = numbers(s.text), names(s.text)
        if not s.checkworthy or not (found or runs):
            continue
        new = {_stem(w) for w in content_tokens(s.text)} - asked
        if not new:
            continue
        unheld_number = any(v not in held_values | asked_values for v, _, _ in found)
        unheld_name = any((words := {_stem(w) for w in content_tokens(r)} - asked) and not words & held
                          for r in runs)
        if len(new & held) / len(new) < threshold or unheld_number or unheld_name:
            out.append(s.text)
    return out
