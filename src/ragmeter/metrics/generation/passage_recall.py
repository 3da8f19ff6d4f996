"""Passage recall: the ESSENTIAL/BONUS grader of how much of a ground-truth passage the answer contains.

The ground truth is a passage made of sections marked ``[ESSENTIAL PASSAGE]`` and
``[BONUS PASSAGE]`` (in the sample's ``reference``), or a structured field
``metadata.passages = {"essential": [...], "bonus": [...]}``; the answer is the returned passage.
Each section gets a score, ESSENTIAL on 1-5 and BONUS on 0-5, and ragmeter, not the judge,
computes the final score with :func:`passage_recall_score`:

.. math:: \\text{final} = \\min\\Big(5, \\frac{\\sum e}{E} + \\frac{\\sum b}{2EB}\\Big), \\qquad
   \\text{score} = \\text{final} / 5

**Per-section decisions** (``scale=binary``, the default): a yes/no decision per section, "does
the returned passage state everything this section says?"; a section's score is then
:math:`e_i = 1 + 4p_i` (ESSENTIAL) or :math:`b_j = 5p_j` (BONUS), with :math:`p` = P(yes) /
(P(yes) + P(no)) of its verdict token where log-probabilities exist, else 1 for yes and 0 for no.
``details.sections`` keeps each hard decision and its ``p_yes``; ``hard_final`` the final of the
hard decisions. Two forms:

- ``decision=direct`` (the default): one call **per section**, prompt ``passage_section_direct``,
  answered with one word (:func:`._verdict.word_verdict`). The question and the returned passage
  come first and the section last, so a sample's calls share their prompt up to the section (a
  server that keeps the previous prompt's state reads the shared part once). Chosen by a rule
  written before its run (bench/results/README.md, "passage_recall: one word per section"): with
  Qwen2.5-Coder-1.5B on the 24 labelled rows, Spearman's rho 0.69 against the human final and
  AUROC 0.83 for ``complete``, against the graded form's 0.28 and 0.61; on the 14 held-out rows
  rho 0.72, AUROC 0.81.
- ``decision=reasoned``: one call for all sections, prompt ``passage_contains``, a JSON reply with
  a short comparison before each decision (on the 24 rows: rho -0.12, AUROC 0.47; the judge said
  "yes" to 67 of 72 sections).

**Graded section scores** (``scale=graded``): one call; the judge scores each section, reasoning
step by step first. With ``scoring=auto`` (the default) and log-probabilities, each section's
score is G-Eval's mean over the alternatives of the token where its ``"score"`` value starts,

.. math:: e_i = \\frac{\\sum_{k=1}^{5} k \\, P_i(k)}{\\sum_{k=1}^{5} P_i(k)}, \\qquad
   b_j = \\frac{\\sum_{k=0}^{5} k \\, P_j(k)}{\\sum_{k=0}^{5} P_j(k)}

(:mod:`._verdict`; an ESSENTIAL section's 0 is off its scale), and the final is computed from
these as from the hard scores. A section whose token cannot be located, or has no score among its
alternatives, keeps its hard score. The hard scores stay in ``details.essential`` /
``details.bonus`` and the final they give in ``hard_final``; ``weighted_essential`` /
``weighted_bonus`` hold the weighted ones (None where hard), each section its ``distribution``;
``details.scoring`` is "probability" (every section), "hard" (none; always without
log-probabilities or with ``scoring=hard``) or "mixed".

Edge cases: no ground-truth passage or no ESSENTIAL section -> undefined; empty answer -> every
essential section 1, bonus 0 (no call); a section the judge did not score, or a score out of
range, is unreadable output (one repair, then a recorded JudgeParseError) — never a guessed score.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, create_model, model_validator

from ...contract import PlannedStep
from ...errors import JudgeParseError
from ...registry import LabelCheck
from ...types import MetricResult, Sample
from ._base import DECISION, SCALE, JudgedEvaluator, check_decision, register_judged
from ._prompting import numbered, reply_shape, template
from ._schema import YesNo, scale, sized
from ._verdict import (
    HARD_FALLBACK,
    SCORING,
    WeightedRating,
    asked_logprobs,
    field_ratings,
    reply_yes_shares,
    scoring_of,
    word_verdict,
)
from .passage_recall_math import passage_recall_score

_MARK = re.compile(r"\[(ESSENTIAL|BONUS) PASSAGE\]", re.IGNORECASE)


def split_sections(sample: Sample) -> tuple[list[str], list[str]] | None:
    """The essential and bonus sections of the sample's ground truth (None when it has none)."""
    passages: Any = sample.metadata.get("passages")
    if isinstance(passages, dict):
        ess = [str(x) for x in passages.get("essential", []) if str(x).strip()]
        bon = [str(x) for x in passages.get("bonus", []) if str(x).strip()]
        return (ess, bon) if ess else None
    text = sample.reference or ""
    marks = list(_MARK.finditer(text))
    if not marks:
        return None
    ess, bon = [], []
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        body = text[m.end(): nxt.start() if nxt else len(text)].strip()
        if body:
            (ess if m.group(1).upper() == "ESSENTIAL" else bon).append(body)
    return (ess, bon) if ess else None


class SectionScore(BaseModel):
    """One section's reasoning and score."""

    section: str
    reasoning: str
    score: int = scale(0, 5)


class SectionScores(BaseModel):
    """Reply of ``passage_recall``."""

    sections: list[SectionScore]


@cache
def scores_for(n: int, n_essential: int | None = None) -> type[SectionScores]:
    """The reply model for ``n`` sections: exactly ``n`` entries, so a grammar-enforcing server
    cannot stop early and any other server's short reply gets the judge layer's repair request.
    With ``n_essential``, an ESSENTIAL section (label ``E...``, else one of the first
    ``n_essential`` entries) scored below 1 is invalid too, and likewise asked again once; the
    schema sent then says so (:func:`_section_items`), so a grammar-enforcing server cannot write
    it."""

    def essential_at_least_1(value: SectionScores) -> SectionScores:
        if n_essential is not None:
            for i, item in enumerate(value.sections):
                label = item.section.strip().upper().strip("[]")
                essential = label.startswith("E") if label[:1] in ("E", "B") else i < n_essential
                if essential and item.score < 1:
                    raise ValueError(f"section {item.section or i + 1} is ESSENTIAL: its score is 1-5, got "
                                     f"{item.score}")
        return value

    return create_model(f"SectionScores{n}", __base__=SectionScores,
                        __validators__={"essential": model_validator(mode="after")(essential_at_least_1)},  # type: ignore[dict-item]
                        sections=(list[SectionScore], Field(min_length=n, max_length=n,
                                                            json_schema_extra=_section_items(n, n_essential))))


def _section_items(n: int, n_essential: int | None) -> dict[str, Any] | None:
    """The ``items`` schema sent for ``n`` sections of which the first ``n_essential`` are ESSENTIAL:
    an entry is an ESSENTIAL one (``section`` one of ``E1``.., ``score`` 1-5) or a BONUS one
    (``B1``.., 0-5). None (the plain :class:`SectionScore` items) without ``n_essential``. Validation
    is the model's (lenient about how the label is written); this only narrows what a
    grammar-enforcing server lets the judge write."""
    if n_essential is None:
        return None

    def entry(labels: list[str], low: int) -> dict[str, Any]:
        props = {"section": {"type": "string", "enum": labels}, "reasoning": {"type": "string"},
                 "score": {"type": "integer", "minimum": low, "maximum": 5, "enum": list(range(low, 6))}}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    kinds = [entry([f"E{i}" for i in range(1, n_essential + 1)], 1)] if n_essential else []
    if n > n_essential:
        kinds.append(entry([f"B{i}" for i in range(1, n - n_essential + 1)], 0))
    return {"items": kinds[0] if len(kinds) == 1 else {"anyOf": kinds}}


class SectionVerdict(BaseModel):
    """One section's reasoning and yes/no decision (``scale=binary``)."""

    section: str
    reasoning: str
    contains: YesNo


class SectionVerdicts(BaseModel):
    """Reply of ``passage_contains`` (``scale=binary``)."""

    sections: list[SectionVerdict]


class PassageRecall(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_decision(self.name, self.params, self.params["scale"] == "binary")

    def direct(self) -> bool:
        """Whether each section is one call answered with one word (``scale=binary,decision=direct``)."""
        return self.params["scale"] == "binary" and self.params["decision"] == "direct"

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """One call per section (``decision=direct``), else one; none without an answer or an
        ESSENTIAL section."""
        parts = split_sections(sample)
        if parts is None or not (sample.answer or "").strip():
            return []
        key = (self.name, sample.id, sample.query, sample.answer, sample.reference)
        return [PlannedStep(key, len(parts[0]) + len(parts[1]) if self.direct() else 1)]

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        parts = split_sections(sample)
        if parts is None:
            return self.result(None, "no ground-truth passage with an [ESSENTIAL PASSAGE] section")
        ess, bon = parts
        if not (sample.answer or "").strip():
            final = passage_recall_score([1] * len(ess), [0] * len(bon))
            return self.result(final / 5, "empty answer", final=final, essential=[1] * len(ess),
                               bonus=[0] * len(bon))
        labels = [f"E{i}" for i in range(1, len(ess) + 1)] + [f"B{i}" for i in range(1, len(bon) + 1)]
        if self.direct():
            return await self._words(sample, ess + bon, labels, len(ess))
        kinds = ["ESSENTIAL"] * len(ess) + ["BONUS"] * len(bon)
        shown = numbered([f"[{lab}] {kind}: {text}" for lab, kind, text in zip(labels, kinds, ess + bon,
                                                                                 strict=True)])
        if self.params["scale"] == "binary":
            return await self._binary(sample, shown, labels, len(ess))
        t = template("passage_recall")
        shape = reply_shape("sections", [
            {"section": lab, "reasoning": "<step by step>",
             "score": "<whole number 1-5>" if kind == "ESSENTIAL" else "<whole number 0-5>"}
            for lab, kind in zip(labels, kinds, strict=True)])
        r = await self.judge.judge(t.messages(sections=shown, returned=sample.answer, shape=shape),
                                   scores_for(len(labels), len(ess)), tag="passage_recall",
                                   template_version=t.cache_version,
                                   top_logprobs=asked_logprobs(self.params["scoring"]))
        order = self._order(r.value.sections, labels, r.raw)  # reply position of each label's section
        scores = [r.value.sections[i].score for i in order]
        e_scores, b_scores = scores[: len(ess)], scores[len(ess):]
        if any(s < 1 for s in e_scores):
            raise JudgeParseError("an ESSENTIAL section was scored 0; the scale is 1-5", raw=r.raw)
        weighted = self._weighted(r, order, len(ess))
        used = [w.mean if w is not None else float(s) for s, w in zip(scores, weighted, strict=True)]
        hard_final = passage_recall_score(e_scores, b_scores)
        final = passage_recall_score(used[: len(ess)], used[len(ess):])
        how = "" if final == hard_final else f"; hard scores give {hard_final}"
        sections = [{"section": lab, "score": s, "weighted_score": w.mean if w else None,
                     "reasoning": r.value.sections[i].reasoning} | (w.details() if w else {})
                    for lab, s, w, i in zip(labels, scores, weighted, order, strict=True)]
        return self.result(final / 5, f"final {final}/5 (essential {e_scores}, bonus {b_scores}{how})", final=final,
                           hard_final=hard_final, essential=e_scores, bonus=b_scores,
                           weighted_essential=[w.mean if w else None for w in weighted[: len(ess)]],
                           weighted_bonus=[w.mean if w else None for w in weighted[len(ess):]],
                           scoring=scoring_of([w is not None for w in weighted]), sections=sections)

    async def _words(self, sample: Sample, texts: list[str], labels: list[str], n_ess: int) -> MetricResult:
        """``scale=binary,decision=direct``: one one-word yes/no call per section, mapped onto the
        section scales (ESSENTIAL ``1 + 4p``, BONUS ``5p``; ``p`` = P(yes) share, or the hard 1/0)."""
        t = template("passage_section_direct")
        verdicts = await asyncio.gather(*(
            word_verdict(self.judge, t.messages(question=sample.query, returned=sample.answer, section=text),
                         "passage_recall", t.cache_version, self.params["scoring"]) for text in texts))
        hard = [d["verdict"] == "yes" for d in verdicts]
        return self._decided(labels, n_ess, hard, [d["p_yes"] for d in verdicts], [""] * len(labels), "direct")

    async def _binary(self, sample: Sample, shown: str, labels: list[str], n_ess: int) -> MetricResult:
        """``scale=binary,decision=reasoned``: one JSON reply with a yes/no "contains" decision per
        section (each after a short comparison)."""
        t = template("passage_contains")
        shape = reply_shape("sections", [{"section": lab, "reasoning": "<short comparison>",
                                          "contains": "<yes or no>"} for lab in labels])
        scoring = self.params["scoring"]
        r = await self.judge.judge(t.messages(sections=shown, returned=sample.answer, shape=shape),
                                   sized(SectionVerdicts, len(labels)), tag="passage_recall",
                                   template_version=t.cache_version, top_logprobs=asked_logprobs(scoring))
        items = r.value.sections
        order = self._order(items, labels, r.raw)
        shares = reply_yes_shares(r, "contains", len(items), scoring)
        return self._decided(labels, n_ess, [items[i].contains for i in order], [shares[i] for i in order],
                             [items[i].reasoning for i in order], "reasoned")

    def _decided(self, labels: list[str], n_ess: int, hard: list[bool], p: list[float | None],
                 reasoning: list[str], decision: str) -> MetricResult:
        """The result of one yes/no decision per section (in ``labels`` order): each mapped onto
        its section's scale (ESSENTIAL ``1 + 4p``, BONUS ``5p``; ``p`` the P(yes) share, or the
        hard 1/0), the final computed from them."""
        used = [q if q is not None else float(h) for h, q in zip(hard, p, strict=True)]

        def on_scale(values: list[float]) -> tuple[list[float], list[float]]:
            return [1 + 4 * v for v in values[:n_ess]], [5 * v for v in values[n_ess:]]

        e_scores, b_scores = on_scale([float(h) for h in hard])
        hard_final = passage_recall_score(e_scores, b_scores)
        final = passage_recall_score(*on_scale(used))
        sections = [{"section": lab, "contains": h, "p_yes": q} | ({"reasoning": why} if why else {})
                    for lab, h, q, why in zip(labels, hard, p, reasoning, strict=True)]
        missing = [lab for lab, h in zip(labels[:n_ess], hard[:n_ess], strict=True) if not h]
        why = f"ESSENTIAL not contained: {', '.join(missing)}" if missing else "every ESSENTIAL section contained"
        return self.result(final / 5, f"final {final}/5 ({why})", final=final, hard_final=hard_final,
                           essential=[int(x) for x in e_scores], bonus=[int(x) for x in b_scores],
                           scoring=scoring_of([q is not None for q in p]), sections=sections, scale="binary",
                           decision=decision)

    def _weighted(self, r: Any, order: list[int], n_essential: int) -> list[WeightedRating | None]:
        """Each label's probability-weighted score (ESSENTIAL on 1-5, BONUS on 0-5), None where hard."""
        if self.params["scoring"] != "auto":
            return [None] * len(order)
        items = r.value.sections
        scale_at = {i: (1, 5) if k < n_essential else (0, 5) for k, i in enumerate(order)}
        found = field_ratings(r.logprobs, r.raw, "score", [x.score for x in items],
                              [scale_at[i] for i in range(len(items))])
        return [found[i] for i in order] if found else [None] * len(order)

    @staticmethod
    def _order(items: Sequence[SectionScore | SectionVerdict], labels: list[str], raw: str) -> list[int]:
        """The reply position of each label's section: by the section labels when every label is
        there, else by order (the reply is sized: one entry per label)."""
        found = {s.section.strip().upper().strip("[]"): i for i, s in enumerate(items)}
        if all(lab in found for lab in labels):
            return [found[lab] for lab in labels]
        if len(items) == len(labels):
            return list(range(len(items)))
        raise JudgeParseError(f"expected a score for each of {labels}, got {len(items)} section(s)", raw=raw)


def hard_recall(details: Mapping[str, Any]) -> float | None:
    """The hard value: ``hard_final / 5`` (the 1-5 final from the judge's hard section scores)."""
    final = details.get("hard_final")
    return float(final) / 5 if isinstance(final, int | float) else None


def human_finals(details: Mapping[str, Any], labels: Mapping[str, Any]) -> tuple[float, float, float]:
    """``(judged final, judged hard final, human final)`` on 1-5: the human final is the one the
    labelled row's section coverage gives (``labels.essential_covered`` / ``bonus_covered``)."""
    human = float(passage_recall_score(labels["essential_covered"], labels["bonus_covered"]))
    return float(details["final"]), float(details.get("hard_final", details["final"])), human


register_judged(
    "passage_recall",
    PassageRecall,
    role="answer",
    summary="ESSENTIAL/BONUS passage-recall grader: a yes/no decision per section, ragmeter computes the 1-5 "
            "final (score = final / 5).",
    formula="final = min(5, sum(E)/|E| + sum(B)/(2|E||B|)), half-up to 2 decimals; score = final / 5; "
            "E_i = 1 + 4 p_i, B_j = 5 p_j, p = P(yes)/(P(yes)+P(no)) of the section's yes/no verdict; scale=graded "
            "with log-probabilities: each section score = sum_k k P(k) / sum_k P(k) over its score token's "
            "alternatives",
    edge_cases=("no [ESSENTIAL PASSAGE] section -> undefined", "B = 0 -> bonus term 0",
                "empty answer -> essential 1, bonus 0, no call",
                "a missing or out-of-range section score -> JudgeParseError (never guessed)",
                "a section's P(yes) where its verdict token is located, else its hard verdict",
                "scale=graded, per section: " + HARD_FALLBACK),
    requires=("answer", "reference"),
    calls="1 per section (scale=binary,decision=reasoned or scale=graded: 1)",
    undefined="undefined (None) when the ground truth has no ESSENTIAL section",
    params=(replace(SCALE, default="binary", description="binary (default): a yes/no decision per section, "
                    "ESSENTIAL 1 + 4p, BONUS 5p (p = P(yes) share, or the hard 1/0); graded: the judge scores "
                    "each section 1-5 (ESSENTIAL) or 0-5 (BONUS)"), DECISION, SCORING),
    version="4",
    check=LabelCheck(label="complete", data="passage_recall_validation.jsonl", default=True,
                     needs=("essential_covered", "bonus_covered"), hard=hard_recall, finals=human_finals),
)
