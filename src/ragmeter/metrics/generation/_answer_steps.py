"""Steps that read the answer: its claims, back-generated questions and the noncommittal flag.

- :func:`analyse_answer`: prompt ``analyse_answer.prompt``, reply :class:`AnswerAnalysis`; used by
  answer_relevancy(method=questions) (questions, noncommittal) and, with ``steps=shared``, by the
  claim metrics (claims).
- :func:`decompose`: the claims, from prompt ``decompose_answer.prompt`` with reply :class:`Claims`
  (``steps=separate``, the default of faithfulness, hallucination_rate and faithfulness_nli) or
  from the shared analysis (``steps=shared``).

A non-empty answer with no claim is scored only when the judge says so explicitly
(``no_facts: yes``); otherwise the claim metrics are undefined with the reason
(:data:`NO_CLAIM_UNDEFINED`).
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, Field

from ...contract import PlannedStep
from ...judges.base import NO_REPEAT_PENALTY
from ...types import Sample
from ._memo import shared
from ._prompting import template
from ._schema import YesNo


class AnswerAnalysis(BaseModel):
    """Reply of ``analyse_answer`` (the prompt calls the noncommittal flag ``evasive``).

    ``no_facts`` is the judge's explicit statement that the answer makes no factual claim: only
    with it does an empty ``claims`` list mean "nothing to check" (see :func:`no_claim_result`).
    """

    claims: list[str]
    no_facts: YesNo
    questions: list[str]
    noncommittal: YesNo = Field(validation_alias=AliasChoices("evasive", "noncommittal"))


class Claims(BaseModel):
    """Reply of ``decompose_answer``."""

    claims: list[str]
    no_facts: YesNo


#: Why a non-empty answer with no claim and without the judge's explicit "no fact" is undefined.
NO_CLAIM_UNDEFINED = ("undefined: the judge listed no claim for a non-empty answer but did not state that it "
                      "makes no factual claim (no_facts was 'no')")


def analysis_budget(answer: str, judge_max: int) -> int:
    """The analysis reply's token limit: ``min(judge_max, 384 + len(answer) // 2)``.

    The claims restate the answer (about a token per 4 characters), with up to three questions and
    the JSON around them, so a reply that does not loop stays well under it (the 58 readable
    analysis replies of the 1.5B bench judge on the held-out short, dialogue and summary rows,
    2026-12-03, used at most 61% of it; summaries at most 45%). Asked with no repetition penalty, a small judge
    sometimes runs away, adding claims until the limit (5 of those 20 analyses): the limit is what
    such a reply costs before its length repair (:func:`~ragmeter.judges.parsing.length_repair_note`),
    which goes with the server's own penalty.
    """
    return min(judge_max, 384 + len(answer) // 2)


async def analyse_answer(judge: Any, sample: Sample, tag: str) -> AnswerAnalysis:
    """Claims, back-generated questions and the noncommittal flag, in one shared call, asked with
    no repetition penalty (:data:`~ragmeter.judges.base.NO_REPEAT_PENALTY`: claims copy the answer's
    words, which a penalty pushes out) and at most :func:`analysis_budget` tokens."""
    t = template("analyse_answer")

    async def run() -> AnswerAnalysis:
        r = await judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), AnswerAnalysis,
                              tag=tag, template_version=t.cache_version, repeat_penalty=NO_REPEAT_PENALTY,
                              max_tokens=analysis_budget(sample.answer or "", judge.max_tokens))
        return r.value

    return await shared(judge, t.cache_version, (sample.query, sample.answer), run)


def decompose_step(sample: Sample, steps: str) -> PlannedStep:
    """The call :func:`decompose` makes (keyed as it is shared: the analysis with ``steps="shared"``)."""
    return PlannedStep(("analyse_answer" if steps == "shared" else "decompose_answer", sample.query, sample.answer))


async def decompose(judge: Any, sample: Sample, tag: str, steps: str) -> tuple[list[str], bool]:
    """The answer's atomic claims (from the shared analysis, or a dedicated call; both asked with no
    repetition penalty) and the judge's explicit ``no_facts`` statement (True: "the answer makes no
    factual claim")."""
    if steps == "shared":
        a = await analyse_answer(judge, sample, tag)
        return [c for c in a.claims if c.strip()], a.no_facts
    t = template("decompose_answer")

    async def run() -> tuple[list[str], bool]:
        r = await judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Claims,
                              tag=tag, template_version=t.cache_version, repeat_penalty=NO_REPEAT_PENALTY,
                              max_tokens=analysis_budget(sample.answer or "", judge.max_tokens))
        return [c for c in r.value.claims if c.strip()], r.value.no_facts

    return await shared(judge, t.cache_version, (sample.query, sample.answer), run)
