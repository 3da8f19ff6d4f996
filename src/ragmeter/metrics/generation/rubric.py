"""Rubric metrics: a judged metric defined by its criteria, in ``ragmeter.yaml`` or in Python.

A rubric is a name, the criteria text, optional evaluation steps, the inputs it reads
(``question``, ``answer``, ``contexts``, ``reference``) and a scale (``1-5``, ``0-10``, any
``LOW-HIGH`` with ``0 <= LOW < HIGH <= 10``, or ``yes/no``), after DeepEval's GEval (criteria ->
evaluation steps -> probability-weighted score) and RAGAS's AspectCritic (a yes/no aspect)::

    rag:
      eval:
        metrics: [politeness, cites_context]
        rubrics:
          - name: politeness
            criteria: The answer is courteous and never blames the user.
            inputs: [question, answer]
            scale: 1-5
          - name: cites_context
            criteria: Every fact in the answer is taken from the contexts.
            steps: [List the facts of the answer., Find each one in the contexts.]
            inputs: [answer, contexts]
            scale: yes/no

or ``Rubric("politeness", "The answer is courteous ...").register()`` in Python. Either registers a
judged metric under the rubric's name, with version ``rubric-<12 hex>``: the SHA-256 of the
criteria, steps, inputs, scale and prompt versions, so editing the criteria changes the version
(and the prompt, hence the judge cache key): results never mix two definitions.

**Evaluation steps.** When none are given, the judge writes 3-5 steps from the criteria once
(prompt ``rubric_steps``; memoised per run and kept in the judge cache across runs, as G-Eval
generates its chain of thought once) and every sample is graded with those; the result's
details hold the steps and ``steps_from`` ("rubric" or "judge").

**Score.** The judge writes a short reason, then the rating (or verdict). With a ``LOW-HIGH``
scale, for the rating r

.. math:: s = \\frac{r - LOW}{HIGH - LOW}, \\qquad
   r = \\frac{\\sum_k k\\,P(k)}{\\sum_k P(k)} \\text{ (probability-weighted)}

where P(k) is the probability of the rating token reading k, over the ratings k on the scale
(:func:`._verdict.rating_distribution`, which also says how "1" is split between 1 and 10 for a
tokenizer that writes "10" as "1", "0") when ``scoring=auto`` and the backend returns
log-probabilities; otherwise r is the hard rating (``details.scoring`` says which). With
``yes/no``, s = P(yes) / (P(yes) + P(no)) of the verdict token, or 1/0 from the hard verdict. The
hard rating or verdict stays in the details (``rating`` / ``verdict``), with the weighted rating and
its distribution.

**Contexts past the judge's window.** A rubric that reads the contexts and is rejected as too long
is sent again with the context sentences that fit, those most related to the answer's
check-worthy sentences, the question and the reference first (of the inputs it reads; the criteria
when it reads the contexts alone): :func:`._fit.fitted_call`, recorded in ``context_fit`` and
said in the reason. The rating is then the judge's reading of that excerpt.

Edge cases: an input the rubric reads that is empty in the sample (no answer, no context, no
reference) -> undefined (None) with the reason naming it, no call; a reply that is not the
asked JSON, a rating off the scale or a verdict other than yes/no -> one repair, then a recorded
:class:`~ragmeter.errors.JudgeParseError` on that sample (never 0); the same for a steps reply with
no step.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, create_model, field_validator

from ...errors import InvalidParameterError
from ...judges import Message, PromptTemplate, ReplyShape
from ...registry import LabelCheck, MetricSpec
from ...types import MetricResult, Sample
from ._base import JudgedEvaluator, register_judged
from ._fit import answer_queries, excerpt_clause, fitted_call
from ._memo import shared
from ._prompting import numbered, template
from ._schema import YesNo, scale
from ._verdict import SCORING, asked_logprobs, field_verdict_share, rating_details, reply_rating

#: rubric input -> the sample field it reads (and the data tag it is shown in: the input's name)
INPUTS = {"question": "query", "answer": "answer", "contexts": "contexts", "reference": "reference"}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SCALE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
YES_NO = ("yes/no", "yes-no", "binary")


class RubricSteps(BaseModel):
    """Reply of ``rubric_steps``: the evaluation steps written from the criteria."""

    steps: list[str] = Field(min_length=1)

    @field_validator("steps")
    @classmethod
    def _no_blank_step(cls, v: list[str]) -> list[str]:
        if any(not s.strip() for s in v):
            raise ValueError("every step needs text, got a blank step")
        return v


class RubricRating(BaseModel):
    """Reply of ``rubric`` on a numeric scale: the reason first, then the rating."""

    reason: str
    rating: int


class RubricVerdict(BaseModel):
    """Reply of ``rubric`` on the yes/no scale: the reason first, then the verdict."""

    reason: str
    verdict: YesNo


@cache
def rating_model(low: int, high: int) -> type[RubricRating]:
    """:class:`RubricRating` with the rating constrained to ``[low, high]`` (in the schema sent, so a
    grammar-enforcing server cannot write another number, and in validation)."""
    return create_model("RubricRating", __base__=RubricRating, rating=(int, scale(low, high)))


def _literal(text: str) -> str:
    """``text`` as literal template text (``$`` doubled for :class:`string.Template`)."""
    return text.replace("$", "$$")


@dataclass(frozen=True)
class Rubric:
    """One rubric metric's definition (see the module docstring). Validated on construction:
    :class:`~ragmeter.errors.InvalidParameterError` names the rubric and the field."""

    name: str
    criteria: str
    steps: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ("question", "answer")
    scale: str = "1-5"

    def __post_init__(self) -> None:
        where = f"rubric {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidParameterError(f"{where}: name: expected lower-case letters, digits and _ starting with a "
                                        f"letter (a metric name such as 'politeness'), got {self.name!r}")
        if not isinstance(self.criteria, str) or not self.criteria.strip():
            raise InvalidParameterError(f"{where}: criteria: expected the text the judge grades against, got "
                                        f"{self.criteria!r}")
        steps = (self.steps,) if isinstance(self.steps, str) else tuple(self.steps or ())
        if any(not isinstance(s, str) or not s.strip() for s in steps):
            raise InvalidParameterError(f"{where}: steps: expected non-empty strings, got {list(steps)!r}")
        inputs = (self.inputs,) if isinstance(self.inputs, str) else tuple(self.inputs)
        bad = [i for i in inputs if i not in INPUTS]
        if bad or not inputs or len(set(inputs)) != len(inputs):
            raise InvalidParameterError(f"{where}: inputs: expected distinct names among {', '.join(INPUTS)}, "
                                        f"got {list(inputs)!r}")
        object.__setattr__(self, "steps", tuple(" ".join(s.split()) for s in steps))
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "scale", self._parse_scale(str(self.scale), where))

    @staticmethod
    def _parse_scale(scale: str, where: str) -> str:
        if scale.strip().lower() in YES_NO:
            return "yes/no"
        m = _SCALE.match(scale)
        if m and 0 <= int(m.group(1)) < int(m.group(2)) <= 10:
            return f"{int(m.group(1))}-{int(m.group(2))}"
        raise InvalidParameterError(f"{where}: scale: expected 'LOW-HIGH' with 0 <= LOW < HIGH <= 10 (e.g. '1-5', "
                                    f"'0-10') or 'yes/no', got {scale!r}")

    @property
    def bounds(self) -> tuple[int, int] | None:
        """``(LOW, HIGH)`` of a numeric scale; None for yes/no."""
        if self.scale == "yes/no":
            return None
        low, high = self.scale.split("-")
        return int(low), int(high)

    @property
    def version(self) -> str:
        """``rubric-<12 hex>``: SHA-256 of everything that decides the judgement (not the name)."""
        text = json.dumps({"criteria": self.criteria, "steps": list(self.steps), "inputs": list(self.inputs),
                           "scale": self.scale, "prompts": [template("rubric").cache_version,
                                                            template("rubric_steps").cache_version]},
                          ensure_ascii=False, sort_keys=True)
        return "rubric-" + hashlib.sha256(text.encode()).hexdigest()[:12]

    def register(self) -> MetricSpec:
        """Register this rubric as a metric under its name (replacing an earlier rubric of that
        name; a built-in metric's name is refused)."""
        from ...registry import lookup_spec

        existing = lookup_spec(self.name)
        if existing is not None and not isinstance(existing.extra.get("rubric"), Rubric):
            raise InvalidParameterError(f"rubric {self.name!r}: name: {existing.name!r} is a built-in metric; "
                                        "choose another name")
        reads = tuple(INPUTS[i] for i in self.inputs)
        scale = ("P(yes)/(P(yes)+P(no)) of the verdict (hard 1/0 without log-probabilities)" if self.bounds is None
                 else f"(rating - {self.bounds[0]}) / {self.bounds[1] - self.bounds[0]}, rating = sum_k k P(k) / sum_k "
                      "P(k) over the rating token's alternatives on the scale when log-probabilities exist, else hard")
        return register_judged(
            self.name, RubricMetric, role="answer" if "answer" in self.inputs else "context",
            summary=f"Rubric ({self.scale}): {' '.join(self.criteria.split())[:160]}",
            formula=scale,
            edge_cases=("an input it reads is empty -> undefined", "an unreadable reply or a rating off the scale "
                        "-> JudgeParseError after one repair"),
            requires=reads, calls="1 (+1 per run to write the evaluation steps when the rubric gives none)",
            params=(SCORING,), undefined="undefined (None) when an input the rubric reads is empty",
            version=self.version, extra={"rubric": self}, default_names=(), check=LabelCheck(hard=self.hard_value),
        )

    def hard_value(self, details: Mapping[str, Any]) -> float | None:
        """The hard value of a result (judge-check): on a ``LOW-HIGH`` scale
        ``(rating - LOW) / (HIGH - LOW)`` of the hard ``rating``, on yes/no the hard ``verdict`` as 1/0."""
        if self.bounds is None:
            return {"yes": 1.0, "no": 0.0}.get(str(details.get("verdict")))
        low, high = self.bounds
        rating = details.get("rating")
        return (float(rating) - low) / (high - low) if isinstance(rating, int | float) else None

    def grading_prompt(self, steps: list[str]) -> PromptTemplate:
        """The ``rubric`` template with this rubric's inputs, criteria, steps and scale filled in."""
        t = template("rubric")
        if self.bounds is None:
            asks = 'the verdict: "yes" if the data meets the criteria, "no" if it does not'
        else:
            asks = (f"the rating: a whole number from {self.bounds[0]} (does not meet the criteria at all) to "
                    f"{self.bounds[1]} (fully meets them)")
        user = (t.user.replace("@@INPUTS@@", "\n\n".join(f"${i}" for i in self.inputs))
                .replace("@@CRITERIA@@", _literal(self.criteria)).replace("@@STEPS@@", _literal(numbered(steps)))
                .replace("@@SCALE@@", asks))
        return replace(t, user=user)

    def steps_prompt(self) -> PromptTemplate:
        """The ``rubric_steps`` template with this rubric's criteria and inputs filled in."""
        t = template("rubric_steps")
        user = t.user.replace("@@CRITERIA@@", _literal(self.criteria)).replace("@@INPUTS@@", ", ".join(self.inputs))
        return replace(t, user=user)


async def evaluation_steps(judge: Any, rubric: Rubric, tag: str) -> tuple[list[str], str]:
    """The rubric's steps and where they came from: its own (``"rubric"``), or written by the judge
    from the criteria once per run (``"judge"``, one call shared by every sample)."""
    if rubric.steps:
        return list(rubric.steps), "rubric"
    t = rubric.steps_prompt()
    shape = ReplyShape(json.dumps({"steps": ["<step 1>", "<step 2>", "<step 3>"]}))

    async def run() -> list[str]:
        r = await judge.judge(t.messages(shape=shape), RubricSteps, tag=tag, template_version=t.cache_version)
        return [" ".join(s.split()) for s in r.value.steps]

    return await shared(judge, t.cache_version, (rubric.criteria, rubric.inputs), run), "judge"


class RubricMetric(JudgedEvaluator):
    """A rubric's evaluator (see the module docstring); the rubric is ``spec.extra["rubric"]``."""

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        rubric: Rubric = self.spec.extra["rubric"]
        values = {"question": sample.query, "answer": sample.answer or "", "reference": sample.reference or "",
                  "contexts": numbered([t for t in sample.context_texts if t.strip()])}
        empty = [i for i in rubric.inputs if not values[i].strip()]
        if empty:
            return self.result(None, f"undefined: the rubric reads {', '.join(empty)}, empty in this sample")
        steps, source = await evaluation_steps(self.judge, rubric, rubric.name)
        t = rubric.grading_prompt(steps)
        bounds = rubric.bounds
        weighted = self.params["scoring"] == "auto"
        if bounds is None:
            model: type[BaseModel] = RubricVerdict
            slot = {"reason": "<short reason>", "verdict": "<yes or no>"}
        else:
            model, slot = rating_model(*bounds), {"reason": "<short reason>",
                                                   "rating": f"<whole number {bounds[0]}-{bounds[1]}>"}
        shape = ReplyShape(json.dumps(slot))
        version = f"{t.cache_version}/{rubric.version}"

        def messages(context: str | None) -> list[Message]:
            given = values if context is None else {**values, "contexts": context}
            return t.messages(shape=shape, **{i: given[i] for i in rubric.inputs})

        async def send(context: str | None) -> Any:
            return await self.judge.judge(messages(context), model, tag=rubric.name, template_version=version,
                                          top_logprobs=asked_logprobs(self.params["scoring"]))

        fit = None
        if "contexts" in rubric.inputs:
            r, fit = await fitted_call(self.judge, sample, f"rubric/{version}/{self.params['scoring']}",
                                       ranked_for(rubric, sample), send,
                                       lambda context: sum(len(m.content) for m in messages(context)),
                                       tag=rubric.name, items="text the rubric reads")
        else:
            r = await send(None)
        common = {"explanation": r.value.reason, "steps": steps, "steps_from": source, "scale": rubric.scale}
        read = ""
        if fit is not None:
            common["context_fit"] = fit
            read = excerpt_clause(fit, "the judge")
        if bounds is None:
            hard = bool(r.value.verdict)
            p = field_verdict_share(r.logprobs, r.raw, "verdict", hard) if weighted else None
            how = f"P(yes) = {p:.3f}" if p is not None else "hard verdict"
            return self.result(p if p is not None else float(hard), f"{'yes' if hard else 'no'} ({how}): "
                               f"{r.value.reason[:300]}{read}", verdict="yes" if hard else "no", p_yes=p,
                               scoring="probability" if p is not None else "hard", **common)
        low, high = bounds
        rating = int(r.value.rating)
        w = reply_rating(r, "rating", rating, bounds, self.params["scoring"])
        value = w.mean if w is not None else float(rating)
        how = f"probability-weighted {w.mean:.2f}" if w is not None else "hard rating"
        return self.result((value - low) / (high - low), f"rating {rating} on {rubric.scale} ({how}): "
                           f"{r.value.reason[:300]}{read}", **rating_details(rating, w), **common)


def ranked_for(rubric: Rubric, sample: Sample) -> list[str]:
    """The texts the context sentences are ranked for when a rubric's call does not fit the judge's
    window (:func:`._fit.fitted_call`): the answer's check-worthy sentences, the question and the
    reference, of those the rubric reads; the criteria when it reads the contexts alone."""
    texts = answer_queries(sample) if "answer" in rubric.inputs else []
    texts += [t for i, t in (("question", sample.query), ("reference", sample.reference or ""))
              if i in rubric.inputs and t.strip()]
    return texts or [rubric.criteria]


def register_rubric(name: str, criteria: str, *, steps: tuple[str, ...] | list[str] = (),
                    inputs: tuple[str, ...] | list[str] = ("question", "answer"), scale: str = "1-5") -> MetricSpec:
    """Define and register a rubric metric in one call (see :class:`Rubric`); returns its spec."""
    return Rubric(name, criteria, tuple(steps), tuple(inputs), scale).register()
