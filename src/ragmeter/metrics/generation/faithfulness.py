"""Faithfulness: how much of the answer the retrieved context supports.

``mode=claims`` (the default): the share of the answer's atomic claims that the context supports.

.. math:: \\mathrm{Faithfulness} = \\frac{1}{|C(a)|} \\sum_{c \\in C(a)} s(c)

where :math:`s(c)` is P(yes) / (P(yes) + P(no)) of the claim's verdict token when the backend
returns log-probabilities (``scoring=auto``), else 1 for a "yes" verdict and 0 for "no" (the share
of supported claims; ``scoring=hard`` always). Hard verdicts stay in the details.

(1) The judge decomposes the answer into atomic, self-contained claims C(a) (its own call,
``decompose_answer``; with ``steps=shared`` the answer analysis that also writes
answer_relevancy(method=questions)'s questions, one call for both metrics); offline, the claims that
are not claims to check (questions, greetings, opinions: the rules of :mod:`._checkworthy`, as in
``mode=sentences``) are left out of C(a) and listed in ``not_claims`` with their kind; an answer
sentence that states a number or a name and whose content words (beyond the question's) the claims
hold less than half of, or with a number or a name no claim holds
(:func:`._grounding.uncovered_sentences`: a fact the claim list left out), is
split into claims in one more call of the same prompt, with those sentences as the answer, and its
claims join C(a); (2) the judge checks
every claim against the joined contexts, yes or no per claim, all claims in one call, or, when the
joined contexts are longer than 1,500 characters (:data:`._fit.CLAIM_LIST_MAX_CHARS`) or the judge
rejects that call because they do not fit its context window, each claim alone, one yes/no word
scored by P(yes), against its evidence window, as ``verdicts=word`` does
(:func:`._fit.alone_call`; recorded in ``context_fit`` with its ``cause``, each claim's
``window`` in its details)
(both calls ask for no repetition penalty, :data:`~ragmeter.judges.base.NO_REPEAT_PENALTY`: a server that
penalises repeated tokens unasked, as llama-cpp-python's does, is told not to; measured with a
1.5B judge, bench/results/faithfulness_by_kind.md sections 22-23); (3) offline,
the **evidence veto** (``veto=auto``, which is ``evidence`` with ``mode=claims``): a claim whose
numbers conflict with the context sentence most related to it (the evidence windows' lexical
ranking, :mod:`._evidence`) has :math:`s(c) = 0` whatever the judge said. A conflict: for some
unit (a time of day, "20:00" or "8 pm"; else the unit, else the noun counted, else for a count of a
whole the whole's noun: "35 of the 70 card points" counts card points; else "year"; the units of
one dimension, such as metres and centimetres or minutes and seconds, count as one; two to twelve
written as words count as their digits: "two hearts" against "three hearts"; a share written as a
fraction, "about half", is a percentage, equal to another within 5 points), the claim has
a number the sentence lacks and the sentence one the claim lacks, two numbers being equal when one
is the other rounded, in one unit (:func:`._sentence_steps.number_conflicts`): "56 floors" against
"It has 58 floors above ground" conflicts, as do "open until 22:00" against "from 9:00 to 20:00"
and "15 metres" against "15 centimetres"; "May 2019" against "opened on 14 May 2019" does not,
nor "1.6 km" against "1 mile". The struck claims carry
``veto: true`` and the pairs in ``veto_conflicts``. ``veto=quote`` compares with the sentence the
judge quoted instead, ``quote_evidence`` with both (neither with ``verdicts=bare``), ``none`` turns it off;
(4) offline, the **answer checks** (``checks=auto``, which is ``numbers_names`` with ``mode=claims``):
the score is multiplied by the share of the numbers and name runs of the answer's check-worthy
sentences that ``fact_consistency``'s checks find in the contexts or the question
(:func:`answer_checks`; 1 when there is none), so a number or a name the answer brings from
nowhere lowers the score even where the judge's restatement of the claim lost it or the judge said
yes; the checks are in the details (``answer_checks``, ``answer_checks_share``) and the reason
names those not found. Chosen on design rows by a rule written before the run
(bench/results/faithfulness_by_kind.md, section 113); ``none`` turns it off.

.. math:: \\mathrm{Faithfulness} = \\frac{1}{|C(a)|} \\sum_{c \\in C(a)} s(c) \\cdot
   \\frac{|\\{x \\in X(a) : x \\text{ found}\\}|}{|X(a)|}

where :math:`X(a)` are those numbers and name runs (the fraction is 1 when :math:`X(a)` is empty).

Per claim the details hold its text (``claim``), the hard verdict (``supported``), the context
sentence the judge quoted (``quote``, "" for none), ``p_yes``, the ``support`` it counts with, and,
found offline for the report: the answer sentence it was taken from (``start``, ``end``, ``sentence``:
the sentence holding the largest share of its content words; absent when none holds any) and its
``evidence``, the two context sentences most related to it with their offsets, as ``mode=sentences``
records them.

Edge cases: empty answer -> 1.0 (nothing to be unfaithful about, no call); no context -> 0.0 (no
call); an answer none of whose sentences is a claim to check (greetings, opinions, questions by the
rules of :mod:`._checkworthy`) -> 1.0 with no call, its sentences in ``not_claims`` with their kind
and offsets (as in ``mode=sentences``; chosen by a rule written before the run,
bench/results/faithfulness_by_kind.md, section 111); otherwise an answer with no claim -> 1.0 only
when the judge states explicitly that it makes no factual claim (``no_facts: yes``), or when every
claim it extracted is a question, greeting or opinion (``not_claims``), else undefined with the
reason; extracted claims the answer does not make (:mod:`._grounding`) are dropped and listed in
``ungrounded_claims``, and undefined when none is left; a verdict reply with another number of
verdicts than claims, or a missing field, is unreadable output (one repair, then a recorded
JudgeParseError), never a score.

``verdicts=bare`` (with ``mode=claims`` or ``sentences``): the verdict list without the quotes, each
verdict a statement number and yes/no (prompt ``verify_claims_bare``): fewer tokens written in the
one call that asks for log-probabilities; ``quote`` is "". ``verdicts=after_quotes``: the quotes
and the verdicts in two calls of one conversation (prompts ``quote_claims``, then
``verdicts_after_quotes`` after the judge's own quotes): the quotes are written without
log-probabilities, the verdicts with them; ``quote`` as with ``verdicts=list``. Calls: 3 per sample.
``verdicts=given_quotes``: that conversation in one call, its quotes written offline and given as the
judge's turn (each claim's context sentence of most IDF-weighted content words in common, the
sentence the evidence veto reads; :func:`._claim_steps.given_quote`): the judge writes the yes/no
list alone; ``quote`` is the given sentence ("" for none). Calls: 2 per sample.
``verdicts=short_quotes``: the verdict list with the first five words of each quoted sentence
instead of the whole sentence (prompt ``verify_claims_short``), so fewer tokens are written;
``quote`` is the context sentence that opens with those words, or the words as written where none
does (:func:`._claim_steps.expand_quote`). Calls: 2 per sample. ``verdicts=capped_quotes``: the
same, each quote capped at 40 characters in the reply schema (``maxLength``), which a server that
enforces the schema with a grammar (llama.cpp, vLLM) keeps and others may not (a longer quote is
read as written). Calls: 2 per sample.

``verdicts=word`` (with ``mode=claims``): the same claims, each judged alone instead of all in one
call: one yes/no word per claim, scored by P(yes), against the claim's evidence window, the prompt
and window of ``mode=sentences`` (:func:`._sentence_steps.claim_words`). The claims of a sample share
every prompt token before the claim, so a one-slot server evaluates little more than the claim from
the second call on, and no call generates more than one token. No verdict quotes the context
(``quote`` is ""). Calls: 1 + one per claim.

``split=clauses`` (with ``mode=claims`` and a verdict list): no claim call where the claims go to one
verdict list over the whole context (joined contexts of at most 1,500 characters); the claims are the
answer's check-worthy sentences cut offline at the joints that start a new statement
(:mod:`._clauses`: semicolons, a comma before *and, but, so, which* ..., a bare *and* before a verb
or a pronoun), the parts that are not claims left out; the verdict list, the evidence veto and the
answer checks as with the judge's claims. One call per answer and about half the time on short
answers and dialogue; on design rows it scored below the claim call where the answer is one dense
sentence (bench/results/faithfulness_by_kind.md, sections 154-155), so it is an option.
``uncovered=clauses`` keeps the claim call and cuts only the sentences it left out that way, instead
of the second claim call, on the same contexts (section 161).

``mode=inline``: the same score from one call instead of two: the judge lists the answer's claims
and, for each as it writes it, the context sentence that states it and a yes/no verdict (prompt
``check_answer_claims``); grounding, P(yes) per claim, details and edge cases as in ``mode=claims``
(an empty answer, no context, ``no_facts``, every claim ungrounded). Not shared with
answer_relevancy's analysis call.

With ``mode=inline`` and ``mode=direct`` the one call reads the contexts whole; when the judge
rejects it because they do not fit its context window, it is sent again with the context sentences
that fit, ranked for the answer's check-worthy sentences (:func:`._fit.fitted_call`; recorded in
``context_fit`` and said in the reason).

``mode=direct``: one judge call per answer, "is every fact in the answer supported by the
context? yes or no" (``max_tokens`` 1), scored

.. math:: \\mathrm{Faithfulness_{direct}} = \\frac{P(\\text{yes})}{P(\\text{yes}) + P(\\text{no})}

from the verdict token's log-probabilities (:mod:`._verdict`), or 1/0 from the hard verdict where
the backend returns none (or with ``scoring=hard``); details hold ``verdict``, ``p_yes`` and
``scoring`` ("probability" or "hard"). Same edge cases for empty answer and no context; no claim
list, so never undefined.

``mode=sentences``: no decomposition call. The answer is cut into sentences offline; the sentences
that are not claims (questions, greetings, opinions: :mod:`._checkworthy`) are listed in
``not_claims``; each claim is judged alone, one yes/no word scored by P(yes), against its evidence
window (:mod:`._evidence`), and the offline number/name checks can veto it (``veto``); the score is
the mean support (:mod:`._sentence_steps`). Each claim's details hold its offsets in the answer, the
context sentences most related to it with their offsets (``evidence``), what the judge read
(``window``), P(yes), the offline checks and whether they vetoed. An answer with no check-worthy
sentence scores 1.0. Calls: one per check-worthy sentence. With ``verdicts=list``, one call for all of
them instead: the verdict list of ``mode=claims`` (a quoted context sentence, then yes/no, per
sentence; P(yes) at each verdict) against the union of the sentences' windows (the joined contexts
when they are short), the judge's quote in each claim's ``quote``; when the joined contexts are
longer than 8,000 characters or the judge rejects that list as longer than its context window,
each sentence is judged alone against its own window, as without ``verdicts=list``
(:func:`._fit.alone_call`, recorded in ``context_fit``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ...contract import PlannedStep
from ...errors import InvalidParameterError
from ...judges.base import NO_REPEAT_PENALTY
from ...registry import LabelCheck, Param
from ...types import MetricResult, Sample
from ..lexical.fact_consistency import check_facts
from ._answer_steps import NO_CLAIM_UNDEFINED, decompose, decompose_step
from ._base import CLAIM_STEPS, JUDGE_VALIDATION, JudgedEvaluator, register_judged
from ._checkworthy import checkworthy_claims, split_claims
from ._claim_steps import (
    QUOTING_FORMS,
    VERDICTS,
    check_inline,
    inline_prompt_chars,
    verdict_form,
    verify,
)
from ._clauses import answer_clauses
from ._evidence import Span, Window, context_sentences
from ._fit import CLAIM_LIST_MAX_CHARS, alone_call, answer_queries, excerpt_clause, fitted_call
from ._grounding import grounded_mask, source_span, split_grounded, uncovered_sentences
from ._prompting import joined_context
from ._sentence_steps import (
    CROSS_CHECK,
    EVIDENCE_VETOES,
    SENTENCE_VETOES,
    VETO,
    WINDOWS,
    claim_words,
    cross_check_applies,
    focus_spans,
    sentence_verdicts,
    veto_conflicts,
)
from ._verdict import MODE, SCORING, WORD_REPLY_TOKENS, direct_prompt_chars, direct_verdict, scoring_of


@dataclass
class ClaimVerdicts:
    """The grounded claims of an answer, their hard verdicts, the context sentence the judge quoted
    for each ("" when none), P(yes) per claim (None without log-probabilities), the judge's
    ``no_facts`` statement, and the claims dropped because the answer does not make them
    (:func:`._grounding.split_grounded`)."""

    claims: list[str]
    verdicts: list[bool]
    quotes: list[str]
    p_yes: list[float | None]
    no_facts: bool
    ungrounded: list[dict[str, Any]]
    #: with a sentence veto (``quote``, ``evidence``, ``quote_evidence``), per claim the number pairs
    #: that strike it (else None)
    conflicts: list[list[dict[str, str]]] | None = None
    veto: str = "none"
    #: the extracted claims that are not claims to check (questions, greetings, opinions), not verified;
    #: :meth:`locate` adds the answer sentence each was taken from where no checked claim comes from it
    not_claims: list[dict[str, Any]] = field(default_factory=list)
    #: per claim, for the report: the answer sentence it was taken from (``start``, ``end``, ``sentence``;
    #: absent when no sentence holds its words) and its ``evidence`` spans (:meth:`locate`)
    places: list[dict[str, Any]] | None = None
    #: the ``context_fit`` record when the claims were judged alone (:func:`._fit.alone_call`) or
    #: ``mode=inline`` read the context sentences that fit (:func:`._fit.fitted_call`); else None
    fit: dict[str, Any] | None = None

    def locate(self, answer: str, texts: list[str], spans: list[Span]) -> None:
        """Fill :attr:`places` offline: each claim's answer sentence (:func:`._grounding.source_span`)
        and the :data:`._sentence_steps.EVIDENCE_SENTENCES` context sentences most related to it, with
        their offsets (:func:`._sentence_steps.focus_spans`, as ``mode=sentences`` records them);
        ``texts`` are the contexts with text and ``spans`` their sentences. Each of :attr:`not_claims`
        gets its answer sentence too (``start``, ``end``, ``sentence``) unless a checked claim was
        taken from that sentence (the report marks a sentence as a claim or as what it is, not both)."""
        self.places = []
        for c in self.claims:
            place: dict[str, Any] = {}
            at = source_span(c, answer)
            if at is not None:
                place = {"start": at[0], "end": at[1], "sentence": answer[at[0]:at[1]]}
            self.places.append(place | {"evidence": [s.as_dict() for s in focus_spans(c, texts, spans)]})
        taken = {(p["start"], p["end"]) for p in self.places if "start" in p}
        for nc in self.not_claims:
            at = source_span(nc["text"], answer)
            if at is not None and at not in taken:
                nc.update(start=at[0], end=at[1], sentence=answer[at[0]:at[1]])

    def struck(self) -> list[bool]:
        """Per claim, whether the veto struck it."""
        return [bool(c) for c in self.conflicts] if self.conflicts is not None else [False] * len(self.claims)

    def supports(self) -> list[float]:
        """Each claim's support: 0 where the veto struck it, else P(yes) where known, else the hard
        verdict as 1/0."""
        return [0.0 if bad else (p if p is not None else float(v))
                for v, p, bad in zip(self.verdicts, self.p_yes, self.struck(), strict=True)]

    def supported(self) -> int:
        """How many claims have a "yes" verdict and no veto."""
        return sum(v and not bad for v, bad in zip(self.verdicts, self.struck(), strict=True))

    @property
    def scoring(self) -> str:
        """"probability" when every claim has a P(yes), "hard" when none has, else "mixed"."""
        return scoring_of([p is not None for p in self.p_yes])

    def details(self) -> dict[str, Any]:
        """Per-claim verdicts (with the context sentence the judge quoted and P(yes)), the scoring
        used and the dropped ungrounded claims, for the report."""
        rows = zip(self.claims, self.verdicts, self.quotes, self.p_yes, self.supports(), strict=True)
        claims: list[dict[str, Any]] = [{"claim": c, "supported": v, "quote": e, "p_yes": p, "support": s}
                                        for c, v, e, p, s in rows]
        for c, place in zip(claims, self.places or [{}] * len(claims), strict=True):
            c.update(place)
        out: dict[str, Any] = {"claims": claims, "scoring": self.scoring, "ungrounded_claims": self.ungrounded,
                               "not_claims": self.not_claims}
        if self.fit is not None:
            # claims judged alone (:func:`._fit.alone_call`): each claim's window on the claim
            out["context_fit"] = {k: v for k, v in self.fit.items() if k != "windows"}
            if "windows" in self.fit:
                for c, window in zip(claims, self.fit["windows"], strict=True):
                    c["window"] = window
        if self.conflicts is not None:
            for c, bad in zip(claims, self.conflicts, strict=True):
                c["veto_conflicts"], c["veto"] = bad, bool(bad)
            out["veto"] = self.veto
        return out


async def claim_verdicts(ev: JudgedEvaluator, sample: Sample) -> ClaimVerdicts | None:
    """The answer's grounded claims and their verdicts (see :class:`ClaimVerdicts`); None when the
    answer is empty or there is no context."""
    if not (sample.answer or "").strip() or not any(t.strip() for t in sample.context_texts):
        return None
    if ev.params["mode"] == "inline":
        return await _inline_claim_verdicts(ev, sample)
    if clauses_apply(ev, sample):
        claims, not_claims = answer_clauses(sample.answer or "")
        triples, fit = await _verdict_list(ev, sample, claims)
        return ClaimVerdicts(claims, [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples],
                             False, [], not_claims=not_claims, fit=fit)
    extracted, no_facts = await decompose(ev.judge, sample, "faithfulness", ev.params["steps"])
    grounded, ungrounded = split_grounded(extracted, sample.answer or "", sample.query)
    claims, not_claims = checkworthy_claims(grounded)
    missing = uncovered_sentences(claims, sample.answer or "", sample.query)
    # the answer's sentences no claim covers, split into claims in a call of their own (unless they
    # are every sentence of the answer and that call was the first one), or cut offline
    again = ev.params["steps"] == "separate" and len(missing) == len(split_claims(sample.answer or ""))
    if missing and uncovered_offline(ev, sample):
        more_claims, more_not = answer_clauses(" ".join(missing))
        claims += [c for c in more_claims if c not in claims]
        not_claims += [n for n in more_not if n not in not_claims]
    elif missing and not again:
        more, _ = await decompose(ev.judge, sample.model_copy(update={"answer": " ".join(missing)}),
                                  "faithfulness", "separate")
        more_grounded, more_ungrounded = split_grounded(more, sample.answer or "", sample.query)
        more_claims, more_not = checkworthy_claims(more_grounded)
        claims += [c for c in more_claims if c not in claims]
        ungrounded += [u for u in more_ungrounded if u not in ungrounded]
        not_claims += [n for n in more_not if n not in not_claims]
    if not claims:
        return ClaimVerdicts([], [], [], [], no_facts, ungrounded, not_claims=not_claims)
    fit = None
    if verdict_form(ev.params) == "word":
        triples = await claim_words(ev.judge, sample, claims, "faithfulness", ev.params["scoring"])
    else:
        triples, fit = await _verdict_list(ev, sample, claims)
    return ClaimVerdicts(claims, [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples],
                         no_facts, ungrounded, not_claims=not_claims, fit=fit)


def uncovered_offline(ev: JudgedEvaluator, sample: Sample) -> bool:
    """Whether ``uncovered=clauses`` cuts the sentences the claim call left out offline for
    ``sample`` (no second claim call): the claims go to one verdict list over the whole context,
    so with a verdict list and joined contexts of at most :data:`._fit.CLAIM_LIST_MAX_CHARS`
    characters; past that each claim is judged alone against its own window and needs the claim
    call's self-contained statements."""
    return (ev.params["uncovered"] == "clauses" and verdict_form(ev.params) != "word"
            and len(joined_context(sample)) <= CLAIM_LIST_MAX_CHARS)


def clauses_apply(ev: JudgedEvaluator, sample: Sample) -> bool:
    """Whether ``split=clauses`` takes the claims offline for ``sample``: with ``mode=claims``, a
    verdict list (not ``verdicts=word``) and joined contexts of at most
    :data:`._fit.CLAIM_LIST_MAX_CHARS` characters, where the claims go to one verdict list over the
    whole context; past that each claim is judged alone against its own evidence window and needs
    the claim call's self-contained statements."""
    return (ev.params["split"] == "clauses" and ev.params["mode"] == "claims" and verdict_form(ev.params) != "word"
            and len(joined_context(sample)) <= CLAIM_LIST_MAX_CHARS)


async def _verdict_list(ev: JudgedEvaluator, sample: Sample, claims: list[str]
                        ) -> tuple[list[tuple[bool, str, float | None]], dict[str, Any] | None]:
    """The verdict list of ``claims`` against the joined contexts or, when they are longer than
    :data:`._fit.CLAIM_LIST_MAX_CHARS` characters or the judge rejects the list as past its window,
    each claim's one word against its evidence window (:func:`._fit.alone_call`); and the
    ``context_fit`` record (None when the list was answered)."""
    form = verdict_form(ev.params)

    async def send(context: str | None) -> list[tuple[bool, str, float | None]]:
        # the verdict list copies context sentences and repeats its keys: no repetition penalty
        return await verify(ev.judge, sample, claims, "faithfulness", ev.params["scoring"], context=context,
                            repeat_penalty=NO_REPEAT_PENALTY, form=form)

    async def alone(windows: list[Window]) -> list[tuple[bool, str, float | None]]:
        return await claim_words(ev.judge, sample, claims, "faithfulness", ev.params["scoring"], windows)

    return await alone_call(ev.judge, sample, f"verify/{form}/{ev.params['scoring']}", claims, send, alone,
                            tag="faithfulness", max_chars=CLAIM_LIST_MAX_CHARS)


async def _inline_claim_verdicts(ev: JudgedEvaluator, sample: Sample) -> ClaimVerdicts:
    """``mode=inline``: claims and verdicts from one call (:func:`._claim_steps.check_inline`); a
    claim the answer does not make is dropped with its verdict, as in ``mode=claims``."""
    async def send(context: str | None) -> tuple[list[tuple[str, bool, str, float | None]], bool]:
        return await check_inline(ev.judge, sample, "faithfulness", ev.params["scoring"], context=context)

    (items, no_facts), fit = await fitted_call(
        ev.judge, sample, f"inline/{ev.params['scoring']}", answer_queries(sample), send,
        lambda context: inline_prompt_chars(sample, context), tag="faithfulness", items="answer sentence")
    mask, ungrounded = grounded_mask([it[0] for it in items], sample.answer or "", sample.query)
    kept = [it for it, keep in zip(items, mask, strict=True) if keep]
    return ClaimVerdicts([k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept], [k[3] for k in kept],
                         no_facts, ungrounded, fit=fit)


#: the expected share of answers of two check-worthy sentences or more whose claims leave out a
#: sentence, for which one more claim call is made (the run's plan of calls; version 16's replies
#: of the 1.5B judge on the design halves of faithfulness_by_kind.jsonl and its two more files,
#: cache off: 19 of 45 such answers, and 2 of 53 answers of one sentence, planned as none)
LEFT_OUT_SHARE = 0.5

#: judge calls of one verdict list, by its form (``verdicts``)
LIST_CALLS = {"list": 1, "bare": 1, "after_quotes": 2, "given_quotes": 1, "short_quotes": 1,
              "capped_quotes": 1}

#: why a claim metric is undefined when every extracted claim was dropped as ungrounded
ALL_UNGROUNDED = "undefined: every claim the judge extracted is absent from the answer (ungrounded_claims)"


@dataclass(frozen=True)
class SupportOutcome:
    """How far the context supports the answer: the one computation behind faithfulness and
    hallucination_rate, which report ``support`` and ``1 - support`` with their own wording.

    ``case`` is one of ``"empty_answer"`` (support 1.0, no call), ``"no_context"`` (0.0, no call),
    ``"direct"`` (the direct verdict's support; ``verdict``/``scoring`` set), ``"ungrounded"``
    (None: every extracted claim was dropped), ``"no_facts"`` (1.0: the judge states the answer
    makes no factual claim), ``"no_claim"`` (None: no claim without that statement) or
    ``"claims"`` (the mean support of ``n`` claims, ``supported`` of them with a "yes" verdict,
    times the answer checks' share where ``checks`` applies them). ``details`` are the result's
    details, the same for both metrics.
    """

    case: str
    support: float | None
    details: dict[str, Any] = field(default_factory=dict)
    verdict: str = ""
    scoring: str = ""
    supported: int = 0
    n: int = 0
    #: the claims' mean support before the answer checks (``checks``) multiply it
    claims_support: float | None = None


def support_steps(ev: JudgedEvaluator, sample: Sample) -> list[PlannedStep]:
    """The calls :func:`support_outcome` makes, keyed as faithfulness and hallucination_rate share
    them: none for an empty answer or no context; the direct verdict; one per check-worthy
    sentence; none for an answer with no check-worthy sentence; the inline call; or the claims and,
    when the judge finds any (not exact), their verdicts (one word per claim, as many as the
    answer's check-worthy sentences, with ``verdicts=word`` or contexts past
    :data:`._fit.CLAIM_LIST_MAX_CHARS`), and, expected for every other answer of two check-worthy
    sentences or more, the claim call for the sentences the claims leave out
    (:data:`LEFT_OUT_SHARE`)."""
    if not (sample.answer or "").strip() or not any(t.strip() for t in sample.context_texts):
        return []
    scoring, content = ev.params["scoring"], (sample.query, sample.answer, tuple(sample.context_texts))
    if ev.params["mode"] == "sentences":
        sentences = [s.text for s in split_claims(sample.answer or "") if s.checkworthy]
        form = verdict_form(ev.params)
        if form != "word":
            steps = [PlannedStep(("sentence_list", form, scoring, sample.query, tuple(sentences), content[2]),
                                 calls=LIST_CALLS[form])] if sentences else []
        else:
            steps = [PlannedStep(("sentence", scoring, sample.query, c, content[2])) for c in dict.fromkeys(sentences)]
        if cross_check_applies(sample, len(sentences), ev.params):  # counted as the run counts them
            steps.append(PlannedStep(("source_answer", sample.query, content[2])))
        return steps
    n = sum(s.checkworthy for s in split_claims(sample.answer or ""))
    if ev.params["mode"] == "direct":
        return [PlannedStep(("direct", scoring, *content))]
    if n == 0:  # no sentence to check: no call
        return []
    if ev.params["mode"] == "inline":
        return [PlannedStep(("inline", scoring, *content))]
    form = verdict_form(ev.params)
    if clauses_apply(ev, sample):  # the claims offline, one verdict list
        return [PlannedStep(("verify_clauses", form, scoring, *content), calls=LIST_CALLS[form])]
    # the claim call for the sentences the claims leave out, expected for every other answer of
    # two check-worthy sentences or more
    more = ([PlannedStep(("uncovered_claims", sample.query, sample.answer), calls=LEFT_OUT_SHARE, exact=False)]
            if n > 1 and not uncovered_offline(ev, sample) else [])
    # one per claim: as many as the answer's check-worthy sentences, most likely
    if verdict_form(ev.params) == "word" or len(joined_context(sample)) > CLAIM_LIST_MAX_CHARS:
        return [decompose_step(sample, ev.params["steps"]),
                PlannedStep(("claim_words", scoring, *content), calls=max(1, n), exact=False), *more]
    return [decompose_step(sample, ev.params["steps"]),
            PlannedStep(("verify_claims", form, scoring, *content), calls=LIST_CALLS[form], exact=False), *more]


async def support_outcome(ev: JudgedEvaluator, sample: Sample) -> SupportOutcome:
    """The :class:`SupportOutcome` of ``sample`` under ``ev``'s ``mode``, ``steps``, ``scoring`` and
    ``checks`` (the direct verdict and the claim steps are shared calls, so both metrics cost one set)."""
    return checked(ev, sample, await _support_outcome(ev, sample))


async def _support_outcome(ev: JudgedEvaluator, sample: Sample) -> SupportOutcome:
    """:func:`support_outcome` before the answer checks (:func:`checked`)."""
    if not (sample.answer or "").strip():
        return SupportOutcome("empty_answer", 1.0)
    if not any(t.strip() for t in sample.context_texts):
        return SupportOutcome("no_context", 0.0)
    if ev.params["mode"] == "direct":
        async def send(context: str | None) -> dict[str, Any]:
            return await direct_verdict(ev.judge, sample, "faithfulness", ev.params["scoring"], context=context)

        d, fit = await fitted_call(ev.judge, sample, f"direct/{ev.params['scoring']}", answer_queries(sample),
                                   send, lambda context: direct_prompt_chars(sample, context), tag="faithfulness",
                                   items="answer sentence", reply_tokens=WORD_REPLY_TOKENS)
        details = d if fit is None else {**d, "context_fit": fit}
        return SupportOutcome("direct", d["support"], details, verdict=d["verdict"], scoring=d["scoring"])
    if ev.params["mode"] == "sentences":
        sv = await sentence_verdicts(ev.judge, sample, "faithfulness", ev.params, ev.embedder)
        scoring = scoring_of([c["p_yes"] is not None for c in sv.claims])
        details = sv.details(scoring, ev.params["veto"])
        if not sv.claims:
            return SupportOutcome("no_checkworthy", 1.0, details)
        return SupportOutcome("claims", sv.score, details, scoring=scoring,
                              supported=sum(c["supported"] and not c["veto"] for c in sv.claims), n=len(sv.claims),
                              claims_support=sv.score)
    sentences = split_claims(sample.answer or "")
    if not any(s.checkworthy for s in sentences):  # nothing to check: no call (as mode=sentences)
        return SupportOutcome("no_checkworthy", 1.0, {"claims": [], "not_claims": [
            s.as_dict() | {"sentence": s.text} for s in sentences]})
    cv = await claim_verdicts(ev, sample)
    if cv is None:
        return SupportOutcome("no_context", 0.0)
    if not cv.claims:
        if cv.not_claims:
            cv.locate(sample.answer or "", [], [])
            return SupportOutcome("no_checkworthy", 1.0, cv.details())
        if cv.ungrounded:
            return SupportOutcome("ungrounded", None, cv.details())
        if cv.no_facts:
            return SupportOutcome("no_facts", 1.0, {"claims": [], "no_facts": True})
        return SupportOutcome("no_claim", None, {"claims": [], "no_facts": False})
    contexts = [t for t in sample.context_texts if t.strip()]
    spans = context_sentences(contexts)
    if ev.params["veto"] in SENTENCE_VETOES:
        cv.veto = ev.params["veto"]
        cv.conflicts = [veto_conflicts(cv.veto, c, e, contexts, spans)
                        for c, e in zip(cv.claims, cv.quotes, strict=True)]
    cv.locate(sample.answer or "", contexts, spans)
    mean = sum(cv.supports()) / len(cv.claims)
    return SupportOutcome("claims", mean, cv.details(), scoring=cv.scoring, supported=cv.supported(),
                          n=len(cv.claims), claims_support=mean)


def checked(ev: JudgedEvaluator, sample: Sample, o: SupportOutcome) -> SupportOutcome:
    """``o`` with ``checks=numbers_names`` applied: a defined support of an answer with a check-worthy
    sentence (the claims', or 1.0 where the judge states it makes no factual claim or every claim
    is an opinion, question or greeting) times :func:`answer_checks`' share, the checks in the
    details (``answer_checks``, ``answer_checks_share``); else ``o``."""
    if ev.params["checks"] != "numbers_names" or o.support is None or o.case in ("empty_answer", "no_context"):
        return o
    share, checks = answer_checks(sample)
    if not checks:
        return o
    details = {**o.details, "answer_checks": checks, "answer_checks_share": share}
    return replace(o, support=o.support * share, details=details)


def answer_checks(sample: Sample) -> tuple[float, list[dict[str, Any]]]:
    """``checks=numbers_names``: the share of the number and name checks of ``fact_consistency``
    (:func:`~ragmeter.metrics.lexical.fact_consistency.check_facts`) on the answer's check-worthy
    sentences (:func:`._checkworthy.split_claims`) that pass against the contexts and the question
    (1.0 when there is none), and those checks (``kind``, ``text``, ``passed``)."""
    text = "\n".join(s.text for s in split_claims(sample.answer or "") if s.checkworthy)
    known = [*(t for t in sample.context_texts if t.strip()), sample.query or ""]
    checks = [{k: c[k] for k in ("kind", "text", "passed")} for c in check_facts(text, known)["checks"]
              if c["kind"] in ("number", "name")] if text else []
    return (sum(c["passed"] for c in checks) / len(checks) if checks else 1.0), checks


#: where mode=claims takes its claims from: the claim call, or offline clauses (:mod:`._clauses`)
SPLIT = Param("split", str, "judge", "with mode=claims, where the claims come from: judge (the default: the "
              "claim call); clauses (each check-worthy sentence of the answer cut offline at the joints that start "
              "a new statement, no claim call, where the claims go to one verdict list: joined contexts of at "
              "most 1,500 characters; past that the claim call as with judge)",
              choices=("judge", "clauses"))
#: with the claim call, how the answer's sentences no claim covers become claims (:func:`uncovered_offline`)
UNCOVERED = Param("uncovered", str, "judge", "with mode=claims and the claim call, how the answer's sentences that "
                  "no claim covers (a number or a name no claim holds, or too few of their words) become claims: "
                  "judge (the default: one more claim call for them); clauses (cut offline at clause joints as "
                  "split=clauses cuts them, no call, where the claims go to one verdict list: joined contexts of "
                  "at most 1,500 characters; past that the claim call as with judge; 8% fewer calls and lower AUROC "
                  "on three of four design sets, bench/results/faithfulness_by_kind.md, section 161a)",
                  choices=("judge", "clauses"))
#: the answer's offline checks that multiply the support of an answer with claims (:func:`answer_checks`)
CHECKS = Param("checks", str, "auto", "the answer's offline checks that multiply the score of an answer with "
               "claims: auto (the default: numbers_names with mode=claims, none otherwise; chosen on design rows "
               "by a rule written before the run, bench/results/faithfulness_by_kind.md, section 113); "
               "numbers_names (the share of the numbers and name runs of the answer's check-worthy sentences that "
               "fact_consistency finds in the contexts or the question; with mode=claims or sentences); none (the "
               "claims' support alone)",
               choices=("auto", "numbers_names", "none"))

#: the reasons shared word for word by faithfulness and hallucination_rate
SHARED_REASONS = {"ungrounded": ALL_UNGROUNDED, "no_facts": "the judge states the answer makes no factual claim",
                  "no_claim": NO_CLAIM_UNDEFINED,
                  "no_checkworthy": "no sentence of the answer is a claim to check (greetings, headings, opinions, "
                                    "questions: not_claims)"}


def check_veto(ev: JudgedEvaluator) -> None:
    """Resolve ``veto=auto`` (``evidence`` with ``mode=claims``, else ``none``) and ``checks=auto``
    (``numbers_names`` with ``mode=claims``, else ``none``) in ``ev.params``, and
    refuse a ``veto`` the mode cannot apply (rather than ignore it): ``quote`` and ``quote_evidence```
    where no verdict quotes the context (``mode=direct``, one-word verdicts), ``evidence`` with
    ``mode=direct`` (no claims), ``numbers`` and ``numbers_names`` outside ``mode=sentences``, and
    ``checks=numbers_names`` outside ``mode=claims`` and ``mode=sentences``; and ``uncovered=clauses``
    without the claim call (``mode=claims`` with ``split=judge``)."""
    p = ev.params
    if p["veto"] == "auto":
        p["veto"] = "evidence" if p["mode"] == "claims" else "none"
    if p["checks"] == "auto":
        p["checks"] = "numbers_names" if p["mode"] == "claims" else "none"
    if p["checks"] == "numbers_names" and p["mode"] not in ("claims", "sentences"):
        raise InvalidParameterError(f"metric {ev.name!r}: checks=numbers_names applies to mode=claims and "
                                    "mode=sentences only")
    veto = p["veto"]
    quoting = p["mode"] == "inline" or (p["mode"] in ("claims", "sentences") and verdict_form(p) in QUOTING_FORMS)
    if veto in ("quote", "quote_evidence") and not quoting:
        raise InvalidParameterError(f"metric {ev.name!r}: veto={veto} reads the context sentence each verdict "
                                    "quotes, so it needs a verdict list that quotes: mode=claims or sentences with "
                                    "verdicts=list (mode=claims's default) or after_quotes, or mode=inline")
    if p["split"] == "clauses" and p["mode"] != "claims":
        raise InvalidParameterError(f"metric {ev.name!r}: split=clauses chooses the claims of mode=claims")
    if p["uncovered"] == "clauses" and (p["mode"] != "claims" or p["split"] == "clauses"):
        raise InvalidParameterError(f"metric {ev.name!r}: uncovered=clauses completes the claim call of mode=claims "
                                    "(split=judge)")
    if veto in EVIDENCE_VETOES and p["mode"] == "direct":
        raise InvalidParameterError(f"metric {ev.name!r}: veto={veto} checks each claim; mode=direct has none")
    if veto in ("numbers", "numbers_names") and p["mode"] != "sentences":
        raise InvalidParameterError(f"metric {ev.name!r}: veto={veto} applies to mode=sentences only")


class Faithfulness(JudgedEvaluator):
    """See the module docstring."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        check_veto(self)

    def planned_calls(self, sample: Sample) -> list[PlannedStep]:
        """The calls of :func:`support_outcome` (:func:`support_steps`)."""
        return support_steps(self, sample)

    async def ascore(self, sample: Sample) -> MetricResult:
        """Score one sample."""
        o = await support_outcome(self, sample)
        return self.result(o.support, self.reason(o), **o.details)

    @staticmethod
    def reason(o: SupportOutcome) -> str:
        """The result's reason for outcome ``o``."""
        if o.case == "empty_answer":
            return "empty answer: nothing to be unfaithful about"
        if o.case == "no_context":
            return "no retrieved context: no claim can be supported"
        if o.case == "direct":
            how = (f"P(yes) = {o.details['p_yes']:.3f}" if o.scoring == "probability"
                   else "hard verdict (no log-probabilities)")
            return f"direct verdict: {o.verdict}; {how}{fit_reason(o)}"
        if o.case == "claims":
            how = "" if o.scoring == "hard" else f"; mean P(yes) {o.claims_support:.3f}"
            return f"{o.supported} of {o.n} claims supported by the context{how}{checks_reason(o)}{fit_reason(o)}"
        return SHARED_REASONS[o.case] + checks_reason(o)


def fit_reason(o: SupportOutcome) -> str:
    """The reason's clause on a call whose contexts did not fit the judge's window (:mod:`._fit`):
    its claims judged alone, or the context sentences that fit read; empty when it read the
    contexts whole."""
    fit = o.details.get("context_fit")
    if not fit:
        return ""
    if fit.get("claims_alone"):
        why = (f"are longer than {fit['max_chars']:,} characters" if fit.get("cause") == "length"
               else "exceed the judge's context window")
        return f"; the contexts {why}: each claim judged alone against its evidence window (context_fit)"
    return excerpt_clause(fit, "the verdict" if o.case == "direct" else "the verdicts")


def checks_reason(o: SupportOutcome) -> str:
    """The reason's clause on the answer checks: empty when they do not apply or all pass."""
    share = o.details.get("answer_checks_share")
    if share is None or share == 1.0:
        return ""
    checks = o.details["answer_checks"]
    missing = ", ".join(repr(c["text"]) for c in checks if not c["passed"])
    return (f"; times {sum(c['passed'] for c in checks)} of {len(checks)} numbers and names found in the "
            f"context or the question ({share:.3f}; not found: {missing})")


def hard_score(details: Mapping[str, Any]) -> float | None:
    """The hard-verdict faithfulness of a probability-weighted faithfulness result: the direct
    verdict as 1/0, or the share of claims with a hard "supported" verdict; None when the result
    has no hard verdict beside its score (it already is the hard score)."""
    if details.get("scoring") == "probability" and "verdict" in details:
        return 1.0 if details["verdict"] == "yes" else 0.0
    claims = details.get("claims") or []
    if claims and any(c.get("p_yes") is not None for c in claims):
        return sum(c["supported"] is True for c in claims) / len(claims)
    return None


def claim_positions(details: Mapping[str, Any], labels: Mapping[str, Any]) -> list[tuple[float, float | None]]:
    """Per claim, in order, whether the judge found it supported (1/0); no human label per claim."""
    return [(float(c["supported"] is True), None) for c in details.get("claims") or []]


register_judged(
    "faithfulness",
    Faithfulness,
    role="answer",
    reference_level=0.5,
    summary="Share of the answer's atomic claims supported by the retrieved context (LLM judge).",
    formula="mode=claims or inline: supported claims / claims (mean P(yes) with log-probabilities), with "
            "mode=claims times the share of the answer's numbers and names found in the contexts or the question; "
            "mode=direct: P(yes) / (P(yes) + P(no)) of one yes/no verdict "
            "(hard 1/0 without log-probabilities)",
    edge_cases=("empty answer -> 1.0", "no context -> 0.0",
                "no check-worthy sentence (only greetings, headings, opinions, questions) -> 1.0 without a call "
                "(mode=direct excepted)",
                "no claim and the judge states the answer makes no factual claim -> 1.0",
                "no claim without that statement -> undefined",
                "a verdict count other than the claim count -> JudgeParseError after one repair",
                "contexts longer than 1,500 characters (mode=claims; 8,000 with mode=sentences,verdicts=list), "
                "or past the judge's context window -> mode=claims: each "
                "claim judged alone, one word, against its evidence window (as verdicts=word; context_fit and "
                "each claim's window; past the window one rejected request); mode=inline, direct: the call reads "
                "the context sentences that fit, the answer sentences' most related first (context_fit; one "
                "rejected request); mode=sentences: each sentence against its window as always (with "
                "verdicts=list as mode=claims; the cross-check's source answer reads the sentences that fit); "
                "else JudgeContextOverflow"),
    requires=("answer", "contexts"),
    calls="mode=claims: 2 (claims and verdicts shared with hallucination_rate; with steps=shared the claims "
          "come from the analysis answer_relevancy(method=questions,steps=shared) reads too), 3 when the claims "
          "leave out an answer sentence with a number or a name, or one of its numbers or names (its claims "
          "from one more claim call; with uncovered=clauses cut offline on contexts of at most 1,500 characters), "
          "with split=clauses 1 on contexts of at most 1,500 characters (the claims cut offline), "
          "with verdicts=word or contexts longer than 1,500 characters 1 + one per claim, past the judge's "
          "window 1 more (the rejected verdict list) + one per claim; "
          "mode=inline: 1 (shared with hallucination_rate); "
          "mode=direct: 1 (max_tokens 1, shared with hallucination_rate); mode=sentences: 1 per check-worthy "
          "sentence (max_tokens 1, shared with hallucination_rate; with verdicts=list 1 for all of them), plus 1 "
          "with cross_check=numbers for an answer of 1-3 such sentences to a question; 0 for empty answer, "
          "no context or (except with mode=direct) no check-worthy sentence",
    params=(CLAIM_STEPS, MODE, SCORING, VERDICTS, VETO, CHECKS, WINDOWS, CROSS_CHECK, SPLIT, UNCOVERED),
    undefined="undefined (None) when the judge lists no claim for a non-empty answer without stating it makes none",
    version="39",
    check=LabelCheck(label="faithful", data=JUDGE_VALIDATION, default=True, hard=hard_score,
                     positions=claim_positions),
    answer_preference=0,
)
