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
from ._prompting import template
from ._verdict import word_verdict

VETO = Param("veto", str, "none", "mode=sentences: which offline check of the claim against the context "
             "overrides the judge (support 0 when it fails): none (the default: the judge's P(yes) alone, chosen "
             "on design rows by a rule written before the run, bench/results/faithfulness_by_kind.md), numbers "
             "(a number, with its unit, absent from the context), numbers_names (a number or a name run)",
             choices=("none", "numbers", "numbers_names"))
WINDOWS = Param("windows", str, "lexical", "mode=sentences: how evidence windows are ranked: lexical (IDF-weighted "
                "word overlap, no model) or hybrid (plus the embedding cosine; needs the run's embedder)",
                choices=("lexical", "hybrid"))


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

    @property
    def supports(self) -> list[float]:
        """Each claim's combined support."""
        return [c["support"] for c in self.claims]

    def details(self, scoring: str, veto: str) -> dict[str, Any]:
        """Per-claim records, the sentences that are not claims (with why), the scoring and the veto."""
        return {"claims": self.claims, "not_claims": [s.as_dict() for s in self.sentences if not s.checkworthy],
                "scoring": scoring, "veto": veto}


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
    verdicts = await asyncio.gather(*(_judge_claim(judge, sample.query or "", w, c.text, tag, params["scoring"])
                                      for c, w in zip(claims, windows, strict=True)))
    records = []
    for c, w, d in zip(claims, windows, verdicts, strict=True):
        checks = offline_checks(c.text, contexts)
        support, vetoed = combine(d["support"], checks, params["veto"])
        records.append({"claim": c.text, "start": c.start, "end": c.end, "supported": d["verdict"] == "yes",
                        "p_yes": d["p_yes"], "scoring": d["scoring"], **checks, "veto": vetoed,
                        "support": support, "evidence": [s.as_dict() for s in _focus(c.text, contexts, spans)],
                        "window": "whole context" if w.whole else [s.as_dict() for s in w.spans]})
    return SentenceVerdicts(sentences, records)
