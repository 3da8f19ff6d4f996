r"""``mode=sentences``: each check-worthy sentence judged alone against its evidence window, one word.

For an answer :math:`a` with check-worthy sentences :math:`C(a)` (:mod:`._checkworthy`):

1. each claim :math:`c` gets its evidence window :math:`W(c)` (:mod:`._evidence`): the whole context
   when it is short, else the few context sentences most related to :math:`c`;
2. one judge call per claim (prompt ``claim_supported``: the fixed instructions first, then the
   question, the window, and the claim last, so every call shares the instructions, every call of a
   sample shares the question too and, with a short context, everything but the claim: the judge
   server reuses that prefix), answered with one word, yes or no, scored
   :math:`p(c) = P(\text{yes}) / (P(\text{yes}) + P(\text{no}))` (:func:`._verdict.word_verdict`;
   the hard word as 1/0 without log-probabilities);
3. the offline checks of ``fact_consistency`` on the claim against the whole context: its numbers
   (with units) and its name runs must occur there. The combination (parameter ``veto``) is
   deterministic:

   .. math:: s(c) = \begin{cases} 0 & \text{a vetoing check fails} \\ p(c) & \text{otherwise} \end{cases}

   ``veto=numbers``: a number absent from the context vetoes; ``numbers_names``: a number or a name
   run; ``none``: :math:`s(c) = p(c)`. A veto is recorded on the claim (``veto``, with the missing
   numbers and names), so a reader sees why a claim the judge accepted scores 0.

Faithfulness is then the mean of :math:`s(c)` over :math:`C(a)`; an answer with no check-worthy
sentence (only greetings, opinions, questions) has nothing to be unfaithful about: 1.0, with the
sentences and why each is not a claim in the details. Calls per sample: :math:`|C(a)|`, no
decomposition call.

4. The answer cross-check (parameter ``cross_check=answer``), for a sample with a question and an
   answer of 1 to :data:`CROSS_CHECK_MAX_CLAIMS` check-worthy sentences: the judge first answers the
   question from the joined context alone (prompt ``answer_from_context``, one short sentence, or
   "not stated"), then says in one word whether the answer contradicts that source answer (prompt
   ``answers_contradict``), scored :math:`q = P(\text{yes})` of that word. Reading a context to answer a
   question is an easier task for a small judge than checking a statement against it, and a number
   or a name swapped with another one of the same context is exactly what it gets wrong when it
   checks. The sample's faithfulness is then

   .. math:: F(a) = (1 - q) \cdot \frac{1}{|C(a)|} \sum_{c \in C(a)} s(c)

   with :math:`q = 0` (no contradiction call) when the judge finds the question not answered by the
   context. The source answer, :math:`q` and the hard word are in ``details["cross_check"]``. Calls:
   two more per such sample (one generates up to :data:`SOURCE_ANSWER_TOKENS` tokens).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ...registry import Param
from ...types import Sample
from ..lexical.fact_consistency import check_facts
from ._checkworthy import Sentence, split_claims
from ._evidence import Span, Window, context_sentences, evidence_window
from ._memo import shared
from ._prompting import joined_context, template
from ._verdict import word_verdict

VETO = Param("veto", str, "none", "mode=sentences: which offline check of the claim against the context "
             "overrides the judge (support 0 when it fails): none (the default: the judge's P(yes) alone, chosen "
             "on design rows by a rule written before the run, bench/results/faithfulness_by_kind.md), numbers "
             "(a number, with its unit, absent from the context), numbers_names (a number or a name run)",
             choices=("none", "numbers", "numbers_names"))
WINDOWS = Param("windows", str, "lexical", "mode=sentences: how evidence windows are ranked: lexical (IDF-weighted "
                "word overlap, no model) or hybrid (plus the embedding cosine; needs the run's embedder)",
                choices=("lexical", "hybrid"))

CROSS_CHECK = Param("cross_check", str, "none", "mode=sentences: answer (for a sample with a question and an answer of "
                    "1-3 check-worthy sentences, the judge answers the question from the context, then says whether "
                    "the answer contradicts that; the score is multiplied by 1 - P(contradicts)) or none",
                    choices=("none", "answer"))

#: the longest answer (in check-worthy sentences) the answer cross-check applies to: a reply to the question,
#: not a summary of the context
CROSS_CHECK_MAX_CLAIMS = 3
#: the most tokens the judge's own answer from the context may take
SOURCE_ANSWER_TOKENS = 60


def offline_checks(claim: str, contexts: list[str]) -> dict[str, list[str]]:
    """The numbers and name runs of ``claim`` that ``fact_consistency``'s checks do not find in
    ``contexts``: ``{"numbers_missing": [...], "names_missing": [...]}`` (as written in the claim)."""
    checks = check_facts(claim, contexts)["checks"]
    return {"numbers_missing": [c["text"] for c in checks if c["kind"] == "number" and not c["passed"]],
            "names_missing": [c["text"] for c in checks if c["kind"] == "name" and not c["passed"]]}


def combine(p: float, checks: dict[str, list[str]], veto: str) -> tuple[float, bool]:
    """``(s(c), vetoed)``: the claim's support by the module docstring's rule."""
    vetoed = bool(checks["numbers_missing"]) if veto in ("numbers", "numbers_names") else False
    if veto == "numbers_names" and checks["names_missing"]:
        vetoed = True
    return (0.0 if vetoed else p), vetoed


@dataclass
class SentenceVerdicts:
    """The answer's sentences (each with its kind) and, per check-worthy one, its judged record:
    ``claim``, ``start``/``end`` in the answer, ``evidence`` (the context sentences most related to
    it, with offsets), ``window`` (what the judge read: "whole context" or its sentences),
    ``verdict``, ``p_yes``, the offline ``numbers_missing``/``names_missing``, ``veto`` and the
    combined ``support``."""

    sentences: list[Sentence]
    claims: list[dict[str, Any]]
    cross_check: dict[str, Any] | None = None

    @property
    def supports(self) -> list[float]:
        """Each claim's combined support."""
        return [c["support"] for c in self.claims]

    @property
    def score(self) -> float:
        """The mean claim support, times the cross-check's factor when it ran (module docstring)."""
        factor = 1.0 if self.cross_check is None else self.cross_check["factor"]
        return factor * sum(self.supports) / len(self.claims)

    def details(self, scoring: str, veto: str) -> dict[str, Any]:
        """Per-claim records, the sentences that are not claims (with why), the scoring, the veto and,
        when it ran, the answer cross-check."""
        out = {"claims": self.claims, "not_claims": [s.as_dict() for s in self.sentences if not s.checkworthy],
               "scoring": scoring, "veto": veto}
        if self.cross_check is not None:
            out["cross_check"] = self.cross_check
        return out


#: how many context sentences a claim's ``evidence`` shows (the most related, in document order)
EVIDENCE_SENTENCES = 2


def _focus(claim: str, contexts: list[str], spans: list[Span]) -> tuple[Span, ...]:
    """The :data:`EVIDENCE_SENTENCES` context sentences most related to ``claim`` (for the report)."""
    return evidence_window(claim, contexts, k=EVIDENCE_SENTENCES, whole_chars=0, sentences=spans).spans


async def _judge_claim(judge: Any, question: str, window: Window, claim: str, tag: str,
                       scoring: str) -> dict[str, Any]:
    t = template("claim_supported")

    async def run() -> dict[str, Any]:
        return await word_verdict(judge, t.messages(question=question, context=window.text, statement=claim),
                                  tag, t.cache_version, scoring)

    return await shared(judge, f"{t.cache_version}/{scoring}", (question, window.text, claim), run)


async def sentence_verdicts(judge: Any, sample: Sample, tag: str, params: dict[str, Any],
                            embedder: Any = None) -> SentenceVerdicts:
    """The :class:`SentenceVerdicts` of ``sample`` (one call per check-worthy sentence, in parallel
    up to the judge's concurrency)."""
    contexts = [t for t in sample.context_texts if t.strip()]
    sentences = split_claims(sample.answer or "")
    claims = [s for s in sentences if s.checkworthy]
    spans = context_sentences(contexts)
    vectors: Any = None
    claim_vectors: Any = [None] * len(claims)
    if params["windows"] == "hybrid" and embedder is not None and claims and spans:
        vectors = await embedder.aembed([s.text for s in spans])
        claim_vectors = await embedder.aembed([c.text for c in claims])
    windows = [evidence_window(c.text, contexts, sentences=spans, embeddings=vectors, claim_embedding=v)
               for c, v in zip(claims, claim_vectors, strict=True)]
    checking = cross_check_applies(sample, len(claims), params)
    cross = asyncio.ensure_future(answer_cross_check(judge, sample, tag, params["scoring"])) if checking else None
    try:
        verdicts = await asyncio.gather(*(_judge_claim(judge, sample.query or "", w, c.text, tag, params["scoring"])
                                          for c, w in zip(claims, windows, strict=True)))
    except BaseException:
        if cross is not None:
            cross.cancel()
        raise
    records = []
    for c, w, d in zip(claims, windows, verdicts, strict=True):
        checks = offline_checks(c.text, contexts)
        support, vetoed = combine(d["support"], checks, params["veto"])
        records.append({"claim": c.text, "start": c.start, "end": c.end, "supported": d["verdict"] == "yes",
                        "p_yes": d["p_yes"], "scoring": d["scoring"], **checks, "veto": vetoed,
                        "support": support, "evidence": [s.as_dict() for s in _focus(c.text, contexts, spans)],
                        "window": "whole context" if w.whole else [s.as_dict() for s in w.spans]})
    return SentenceVerdicts(sentences, records, None if cross is None else await cross)


def cross_check_applies(sample: Sample, n_claims: int, params: dict[str, Any]) -> bool:
    """Whether the answer cross-check runs on ``sample`` (module docstring, step 4)."""
    return (params.get("cross_check") == "answer" and bool((sample.query or "").strip())
            and 1 <= n_claims <= CROSS_CHECK_MAX_CLAIMS)


def not_stated(text: str) -> bool:
    """Whether the judge's source answer says the context does not answer the question."""
    return " ".join(text.lower().strip(" .\"'").split()).startswith("not stated")


async def source_answer(judge: Any, sample: Sample, tag: str) -> str:
    """The judge's answer to ``sample``'s question from its joined context alone (one short sentence,
    or "not stated"); one call per (question, context), shared across metrics."""
    t = template("answer_from_context")
    context = joined_context(sample)

    async def run() -> str:
        r = await judge.complete(t.messages(context=context, question=sample.query or ""), tag=tag,
                                 template_version=t.cache_version, max_tokens=SOURCE_ANSWER_TOKENS)
        return " ".join(r.value.split())

    return str(await shared(judge, t.cache_version, (sample.query, context), run))


async def answer_cross_check(judge: Any, sample: Sample, tag: str, scoring: str) -> dict[str, Any]:
    """Step 4 of the module docstring: ``{"source_answer", "verdict", "p_contradicts", "factor",
    "scoring"}``; ``verdict`` is "not stated" (and ``factor`` 1.0, no second call) when the judge finds
    the question unanswered by the context."""
    source = await source_answer(judge, sample, tag)
    if not source or not_stated(source):
        return {"source_answer": source, "verdict": "not stated", "p_contradicts": None, "factor": 1.0,
                "scoring": scoring}
    t = template("answers_contradict")
    fields = {"question": sample.query or "", "source_answer": source, "answer": sample.answer or ""}

    async def run() -> dict[str, Any]:
        return await word_verdict(judge, t.messages(**fields), tag, t.cache_version, scoring)

    d = await shared(judge, f"{t.cache_version}/{scoring}", tuple(fields.values()), run)
    return {"source_answer": source, "verdict": "contradicts" if d["verdict"] == "yes" else "agrees",
            "p_contradicts": d["p_yes"], "factor": 1.0 - d["support"], "scoring": d["scoring"]}
