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

4. The answer cross-check (parameter ``cross_check=numbers``), for a sample with a question and an
   answer of 1 to :data:`CROSS_CHECK_MAX_CLAIMS` check-worthy sentences: the judge first answers the
   question from the joined context alone (prompt ``answer_from_context``, one short sentence, or
   "not stated"; past the judge's context window from the context sentences that fit, those most
   related to the question first: :func:`._fit.fitted_call`, recorded in the cross-check's
   ``context_fit``). Reading a context to answer a question is an easier task for a small judge than
   checking a statement against it, and a number swapped with another number of the same context
   is what it misses when it checks. Then, offline, a claim **conflicts** with that source answer
   when, for some unit :math:`u` (:func:`quantities`: a time of day, else the unit, else the noun
   counted, else for a count of a whole the whole's, else "year"; the units of one dimension,
   ``fact_consistency.DIMENSIONS``, count as one, and shares written as fractions with percentages),
   the claim has a number in :math:`u` that no number in :math:`u` of the source answer equals and
   the source answer has one that no number in :math:`u` of the claim equals, two numbers being
   equal when one is the other rounded to its decimals (-196 and -195.8), in one unit (1 mile and
   1.6 km). A conflicting claim has
   :math:`s(c) = 0` (``veto``, with the pairs in ``conflicts``). A source answer "not stated", or
   without numbers, changes nothing. The source answer is in ``details["cross_check"]``. Calls: one
   more per such sample, generating up to :data:`SOURCE_ANSWER_TOKENS` tokens.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from ...registry import Param
from ...types import Sample
from ..lexical.fact_consistency import (
    DIGITS_PATTERN,
    SHARE,
    SHARE_WITHIN,
    SIGN_PATTERN,
    TIME_OF_DAY,
    WORD_NUMBERS,
    check_facts,
    measure,
    numbers,
    same_amount,
    shares,
    times_of_day,
)
from ..lexical.lexical_faithfulness import STOPWORDS
from ._checkworthy import Sentence, split_claims
from ._claim_steps import verdict_form, verify
from ._evidence import Span, Window, claim_windows, context_sentences, evidence_window, stemmed_words, word_scores
from ._fit import alone_call, fitted_call
from ._memo import shared
from ._prompting import joined_context, template
from ._verdict import word_verdict

VETO = Param("veto", str, "auto", "which offline check of a claim overrides the judge (support 0 when it fails): "
             "auto (the default: evidence with mode=claims, none otherwise; each chosen on design rows by a rule "
             "written before the run, bench/results/faithfulness_by_kind.md, sections 2 and 16); none (the judge's "
             "P(yes) alone); with mode=sentences, numbers (a number, with its unit, absent "
             "from the context) or numbers_names (a number or a name run); evidence (a number of the claim conflicts, "
             "in the same unit or dimension, with the context sentence most related to the claim; any mode but "
             "direct); words (... with the context sentence that best matches the claim's words other than "
             "its numbers, ties by its whole context) or evidence_words (with either; both below evidence on "
             "most design sets, bench/results/faithfulness_by_kind.md, section 160a); evidence_distractor "
             "(evidence, or a number the contexts hold only in another passage than the sentence that best "
             "matches the claim's other words, which conflicts with it; section 162); quote (... with the "
             "context sentence the judge quoted for it) or quote_evidence (with both): verdict lists that "
             "quote only (verdicts=list or after_quotes with mode=claims or sentences, or mode=inline)",
             choices=("auto", "none", "numbers", "numbers_names", "evidence", "words", "evidence_words",
                      "evidence_distractor", "quote", "quote_evidence"))

#: the veto values that compare a claim's numbers with context sentences found offline (no quote needed)
EVIDENCE_VETOES = ("evidence", "words", "evidence_words", "evidence_distractor")
#: the veto values that compare a claim's numbers with one context sentence (:func:`veto_conflicts`)
SENTENCE_VETOES = (*EVIDENCE_VETOES, "quote", "quote_evidence")
WINDOWS = Param("windows", str, "lexical", "mode=sentences: how evidence windows are ranked: lexical (IDF-weighted "
                "word overlap, no model) or hybrid (plus the embedding cosine; needs the run's embedder)",
                choices=("lexical", "hybrid"))

CROSS_CHECK = Param("cross_check", str, "none", "mode=sentences: numbers (for a sample with a question and an "
                    "answer of 1-3 check-worthy sentences, the judge answers the question from the context; a claim "
                    "whose number conflicts with that answer's, in the same unit or dimension, scores 0) or none",
                    choices=("none", "numbers"))

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
    #: ``verdicts=list`` past the judge's context window: the ``context_fit`` record of the claims
    #: judged alone instead (:func:`._fit.alone_call`; each claim's ``window`` is its own)
    fit: dict[str, Any] | None = None

    @property
    def supports(self) -> list[float]:
        """Each claim's combined support."""
        return [c["support"] for c in self.claims]

    @property
    def score(self) -> float:
        """The mean claim support."""
        return sum(self.supports) / len(self.claims)

    def details(self, scoring: str, veto: str) -> dict[str, Any]:
        """Per-claim records, the sentences that are not claims (with why), the scoring, the veto and,
        when it ran, the answer cross-check."""
        out: dict[str, Any]
        out = {"claims": self.claims, "not_claims": [s.as_dict() for s in self.sentences if not s.checkworthy],
               "scoring": scoring, "veto": veto}
        if self.cross_check is not None:
            out["cross_check"] = self.cross_check
        if self.fit is not None:
            out["context_fit"] = {k: v for k, v in self.fit.items() if k != "windows"}
        return out


#: how many context sentences a claim's ``evidence`` shows (the most related, in document order)
EVIDENCE_SENTENCES = 2


def focus_spans(claim: str, contexts: list[str], spans: list[Span]) -> tuple[Span, ...]:
    """The :data:`EVIDENCE_SENTENCES` context sentences most related to ``claim`` (for the report)."""
    return evidence_window(claim, contexts, k=EVIDENCE_SENTENCES, whole_chars=0, sentences=spans).spans


async def _judge_claim(judge: Any, question: str, window: Window, claim: str, tag: str,
                       scoring: str) -> dict[str, Any]:
    """One claim's word verdict against its window (prompt ``claim_supported``), shared by every metric
    and mode that asks it for the same (question, window, claim)."""
    t = template("claim_supported")

    async def run() -> dict[str, Any]:
        return await word_verdict(judge, t.messages(question=question, context=window.text, statement=claim),
                                  tag, t.cache_version, scoring)

    return await shared(judge, f"{t.cache_version}/{scoring}", (question, window.text, claim), run)


def evidence_sentence(claim: str, contexts: list[str], spans: list[Span]) -> str:
    """The one context sentence most related to ``claim`` (lexical ranking of the evidence windows); ""
    when the contexts have none."""
    top = evidence_window(claim, contexts, k=1, whole_chars=0, sentences=spans).spans
    return top[0].text if top else ""


def _words_ranking(claim: str, spans: list[Span]) -> tuple[list[float], int | None]:
    """The sentences' scores on ``claim``'s words other than its numbers (every word holding a digit
    left out) and the best one's index (ties: the sentence whose whole context shares more of those
    words, then the earlier one); None when no sentence shares such a word."""
    target = {w for w in stemmed_words(claim) if not any(ch.isdigit() for ch in w)}
    own, passage = word_scores(target, spans) if target and spans else ([], [])
    if not own or max(own) <= 0:
        return own, None
    return own, min(range(len(spans)), key=lambda i: (-own[i], -passage[i], i))


def words_sentence(claim: str, contexts: list[str], spans: list[Span]) -> str:
    """The context sentence that best matches ``claim``'s words other than its numbers: the
    :func:`evidence_sentence` ranking with every word holding a digit left out of the claim, so that a
    number cannot pick the sentence that repeats it (a distractor's "stems up to 20 cm" for a claim
    that gives the crested species 20 cm); ties go to the sentence whose whole context shares more
    of those words (the passage that names the claim's subject), then to the earlier one. When no
    sentence shares such a word, :func:`evidence_sentence`."""
    best = _words_ranking(claim, spans)[1]
    return evidence_sentence(claim, contexts, spans) if best is None else spans[best].text


def distractor_conflicts(claim: str, spans: list[Span]) -> list[dict[str, str]]:
    """The number pairs of ``claim`` taken from another passage (``veto=evidence_distractor``): for a
    number of the claim that the contexts hold (by value and unit, as :func:`number_conflicts` compares
    them), when the contexts are two passages or more, the sentence that best matches the claim's
    other words (:func:`words_sentence`'s ranking) scores strictly higher on them than every sentence
    holding the number, lies in a passage holding none of those sentences, and conflicts with the
    number: that conflict's pairs for the number. A number in the passage the claim matches best,
    or in a sentence that matches it as well, stands."""
    if len({s.context for s in spans}) < 2:
        return []
    own, best = _words_ranking(claim, spans)
    if best is None:
        return []
    found = [quantities(s.text) for s in spans]
    pairs = number_conflicts(claim, spans[best].text)
    out: list[dict[str, str]] = []
    for value, unit, written in quantities(claim):
        holders = [i for i, qs in enumerate(found)
                   if any(_measured(ux) == _measured(unit) and _same(value, unit, x, ux) for x, ux, _ in qs)]
        if (holders and max(own[i] for i in holders) < own[best]
                and spans[best].context not in {spans[i].context for i in holders}):
            out += [p for p in pairs if p["claim"] == written and p not in out]
    return out


def veto_conflicts(veto: str, claim: str, quote: str, contexts: list[str], spans: list[Span]) -> list[dict[str, str]]:
    """The number pairs by which ``veto`` strikes ``claim`` (none: it stands). ``evidence``: the claim's
    numbers against its :func:`evidence_sentence`; ``words``: against its :func:`words_sentence`;
    ``evidence_words``: against either (the evidence sentence's pairs first); ``evidence_distractor``: the
    evidence sentence's pairs, else :func:`distractor_conflicts`; ``quote``: against the
    sentence the judge quoted; ``quote_evidence``: against both (the quote's pairs, when both
    conflict); other values: none."""
    if veto == "quote":
        return number_conflicts(claim, quote)
    if veto == "evidence":
        return number_conflicts(claim, evidence_sentence(claim, contexts, spans))
    if veto == "words":
        return number_conflicts(claim, words_sentence(claim, contexts, spans))
    if veto == "evidence_words":
        return (number_conflicts(claim, evidence_sentence(claim, contexts, spans))
                or number_conflicts(claim, words_sentence(claim, contexts, spans)))
    if veto == "evidence_distractor":
        return number_conflicts(claim, evidence_sentence(claim, contexts, spans)) or distractor_conflicts(claim, spans)
    if veto == "quote_evidence":
        pairs = number_conflicts(claim, quote)
        return pairs if pairs and number_conflicts(claim, evidence_sentence(claim, contexts, spans)) else []
    return []


def union_window(windows: list[Window]) -> Window:
    """The sentences of all ``windows`` once each, in document order (whole when every one is)."""
    spans = sorted({s for w in windows for s in w.spans}, key=lambda s: (s.context, s.start))
    return Window(tuple(spans), all(w.whole for w in windows))


async def _judge_list(judge: Any, sample: Sample, window: Window, claims: list[str], tag: str,
                      scoring: str, form: str = "list") -> list[dict[str, Any]]:
    """``verdicts=list`` (or another list form: ``form``): every claim in one verdict list
    (:func:`._claim_steps.verify`) against ``window`` (the joined contexts when it is the whole
    context, as in ``mode=claims``); records shaped as :func:`word_verdict`'s plus the ``quote``
    ("" when none)."""
    if not claims:
        return []
    triples = await verify(judge, sample, claims, tag, scoring, context=None if window.whole else window.text,
                           form=form)
    return [{"verdict": "yes" if v else "no", "p_yes": p, "support": p if p is not None else float(v),
             "scoring": "probability" if p is not None else "hard", "quote": quote} for v, quote, p in triples]


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
    source_task = asyncio.ensure_future(source_answer(judge, sample, tag)) if checking else None
    form = verdict_form(params)
    texts = [c.text for c in claims]
    fit = None

    async def words(ws: list[Window]) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(_judge_claim(judge, sample.query or "", w, c, tag, params["scoring"])
                                           for c, w in zip(texts, ws, strict=True))))

    try:
        if form != "word" and claims:  # one verdict list for every claim, against the union of their windows
            union = union_window(windows)

            async def listed(_: str | None) -> list[dict[str, Any]]:
                return await _judge_list(judge, sample, union, texts, tag, params["scoring"], form=form)

            # past the judge's window each claim alone against its own window (:func:`._fit.alone_call`)
            verdicts, fit = await alone_call(judge, sample, f"sentences/{form}/{params['scoring']}/{params['windows']}",
                                             texts, listed, words, tag=tag, windows=windows)
            if fit is None:
                windows = [union] * len(windows)
        else:
            verdicts = await words(windows)
        source, source_fit = (None, None) if source_task is None else await source_task
    except BaseException:
        if source_task is not None:
            source_task.cancel()
        raise
    answered = source is not None and not not_stated(source)
    records = []
    for c, w, d in zip(claims, windows, verdicts, strict=True):
        checks = offline_checks(c.text, contexts)
        support, vetoed = combine(d["support"], checks, params["veto"])
        record = {"claim": c.text, "start": c.start, "end": c.end, "supported": d["verdict"] == "yes",
                  "p_yes": d["p_yes"], "scoring": d["scoring"], **checks}
        if "quote" in d:
            record["quote"] = d["quote"]
        if checking:
            record["conflicts"] = number_conflicts(c.text, source or "") if answered else []
            if record["conflicts"]:
                support, vetoed = 0.0, True
        if params["veto"] in SENTENCE_VETOES:
            record["veto_conflicts"] = veto_conflicts(params["veto"], c.text, d.get("quote", ""), contexts, spans)
            if record["veto_conflicts"]:
                support, vetoed = 0.0, True
        records.append({**record, "veto": vetoed, "support": support,
                        "evidence": [s.as_dict() for s in focus_spans(c.text, contexts, spans)],
                        "window": "whole context" if w.whole else [s.as_dict() for s in w.spans]})
    cross = None if source is None else {"source_answer": source, "not_stated": not answered}
    if cross is not None and source_fit is not None:
        cross["context_fit"] = source_fit
    return SentenceVerdicts(sentences, records, cross, fit)


async def claim_words(judge: Any, sample: Sample, claims: list[str], tag: str, scoring: str,
                      windows: list[Window] | None = None) -> list[tuple[bool, str, float | None]]:
    """``mode=claims, verdicts=word``: one (verdict, quote, P(yes)) per claim the judge extracted,
    each claim judged alone, one yes/no word, against its evidence window (step 2 above; no offline
    veto, no cross-check; ``windows`` from :func:`._evidence.claim_windows` when already worked out). The quote
    is always "": a one-word verdict quotes nothing (the claim's evidence spans are added by the
    metric, as for the verdict list)."""
    if windows is None:
        windows = claim_windows([t for t in sample.context_texts if t.strip()], claims)
    verdicts = await asyncio.gather(*(_judge_claim(judge, sample.query or "", w, c, tag, scoring)
                                      for c, w in zip(claims, windows, strict=True)))
    return [(d["verdict"] == "yes", "", d["p_yes"]) for d in verdicts]


def cross_check_applies(sample: Sample, n_claims: int, params: dict[str, Any]) -> bool:
    """Whether the answer cross-check runs on ``sample`` (module docstring, step 4)."""
    return (params.get("cross_check") == "numbers" and bool((sample.query or "").strip())
            and 1 <= n_claims <= CROSS_CHECK_MAX_CLAIMS)


def not_stated(text: str) -> bool:
    """Whether the judge's source answer says the context does not answer the question."""
    return " ".join(text.lower().strip(" .\"'").split()).startswith("not stated")


async def source_answer(judge: Any, sample: Sample, tag: str) -> tuple[str, dict[str, Any] | None]:
    """The judge's answer to ``sample``'s question from its joined context alone (one short sentence,
    or "not stated"), or, when the contexts do not fit the judge's context window, from the context
    sentences that fit, those most related to the question first (:func:`._fit.fitted_call`); with
    the ``context_fit`` record (None when it read them whole). One call per (question, context),
    shared across metrics."""
    t = template("answer_from_context")
    question = sample.query or ""

    async def send(excerpt: str | None) -> str:
        context = joined_context(sample) if excerpt is None else excerpt

        async def run() -> str:
            r = await judge.complete(t.messages(context=context, question=question), tag=tag,
                                     template_version=t.cache_version, max_tokens=SOURCE_ANSWER_TOKENS)
            return " ".join(r.value.split())

        return str(await shared(judge, t.cache_version, (sample.query, context), run))

    def chars(context: str) -> int:
        return sum(len(m.content) for m in t.messages(context=context, question=question))

    return await fitted_call(judge, sample, t.cache_version, [question], send, chars, tag=tag, items="question",
                             reply_tokens=SOURCE_ANSWER_TOKENS)


_QUANTITY = re.compile(r"(?P<cur>[$€£¥])?" + SIGN_PATTERN + r"(?<![\w.,])(?P<num>" + DIGITS_PATTERN
                       + r"|(?i:" + "|".join(WORD_NUMBERS) + r")\b)(?!\d)"
                       r"(?:[ -]?(?P<word>%|°\s?[CF]\b|[A-Za-zµ]+))?")
#: words after a number that count nothing ("93 to 104", "in 1977 and")
_NOT_UNITS = STOPWORDS | {"am", "pm", "and", "or", "to", "until", "till", "from", "per", "than", "more", "less", "out"}
#: what follows the number of a count of a whole: "of" or "out of", then "the" or "all", a number and
#: the word the whole is counted in ("35 of the 70 card points", "3 out of 5 judges", "12 of the stalls")
_PARTITIVE = re.compile(r"\s*(?:out\s+)?of\s+(?:(?:the|all)\s+)?(?:\d[\d,]*(?:\.\d+)?[ -])?(?P<word>[A-Za-z]+)")


def _counted(value: str, word: str) -> str | None:
    """The unit of ``value`` followed by ``word``: the unit ``fact_consistency`` reads, else the
    noun, singular; None for a word that counts nothing."""
    word = word.casefold()
    if not word.isalpha() or word in _NOT_UNITS:
        return None
    return numbers(f"{value} {word}")[0][1] or (word[:-1] if len(word) > 3 and word.endswith("s")
                                                and not word.endswith("ss") else word)


def _measured(unit: str) -> str:
    """What the veto compares a unit with: shares and percentages together, else :func:`measure`."""
    return SHARE if unit in (SHARE, "%") else measure(unit)


def _same(a: str, unit_a: str, b: str, unit_b: str) -> bool:
    """Whether the veto reads two amounts as one: a share and a percentage within
    :data:`SHARE_WITHIN` points, else :func:`same_amount`."""
    if {unit_a, unit_b} == {SHARE, "%"}:
        return abs(float(a) - float(b)) <= SHARE_WITHIN
    return same_amount(a, unit_a, b, unit_b)


def quantities(text: str) -> list[tuple[str, str, str]]:
    """``(value, unit, as written)`` of the numbers in ``text`` that say what they count: a time of
    day (unit :data:`TIME_OF_DAY`, the value in minutes after midnight: "8:30 pm" -> 1230,
    :func:`times_of_day`), else the unit ``fact_consistency`` reads ("142 metres" -> m, "$5" -> usd),
    else the noun after the number, singular ("56 floors" -> floor), else, for a count of a whole,
    the whole's ("35 of the 70 card points" -> card, as 70 has), else "year" for a whole number from
    1000 to 2100; a bare number ("93 to 104") is left out. A minus sign is part of its number
    ("-20 °C" is not "20 °C"; the hyphen of "2019-2020" is no sign). Numbers from two to twelve
    written as words count as their digits ("three hearts" -> 3, heart). A share written as a
    fraction is a percentage with the unit :data:`SHARE` ("about half" -> 50, :func:`shares`)."""
    times = times_of_day(text)
    fractions = shares(text)
    out = [(str(minutes), TIME_OF_DAY, text[a:b].strip()) for a, b, minutes in times]
    out += [(pct, SHARE, text[a:b].strip()) for a, b, pct in fractions]
    taken = [(a, b) for a, b, _ in times] + [(a, b) for a, b, _ in fractions]
    for m in _QUANTITY.finditer(text):
        if any(a <= m.start("num") < b for a, b in taken):
            continue
        found = numbers(m.group(0))
        if not found:
            continue
        value, unit, written = found[0]
        word = m.group("word") or ""
        if unit is None and word and (unit := _counted(value, word)) is not None:
            written = m.group(0).strip()
        whole = _PARTITIVE.match(text, m.end("num")) if unit is None else None
        if whole is not None and (unit := _counted(value, whole.group("word"))) is not None:
            written = text[m.start():whole.end()].strip()
        if unit is None and value.isdigit() and 1000 <= int(value) <= 2100:
            unit = "year"
        if unit is not None:
            out.append((value, unit, written))
    return out


def number_conflicts(claim: str, source: str) -> list[dict[str, str]]:
    """The numbers of ``claim`` that conflict with those of ``source`` (module docstring, step 4):
    per unit (:func:`quantities`; the units of one dimension together, ``fact_consistency.DIMENSIONS``,
    and shares with percentages, :func:`_same`) where each side has a number the other lacks, those pairs."""
    out: list[dict[str, str]] = []
    mine, theirs = quantities(claim), quantities(source)
    for what in sorted({_measured(u) for _, u, _ in mine} & {_measured(u) for _, u, _ in theirs}):
        a = [(v, u, w) for v, u, w in mine if _measured(u) == what]
        b = [(v, u, w) for v, u, w in theirs if _measured(u) == what]
        lone_a = [w for v, u, w in a if not any(_same(v, u, x, ux) for x, ux, _ in b)]
        lone_b = [w for v, u, w in b if not any(_same(v, u, x, ux) for x, ux, _ in a)]
        if lone_a and lone_b:
            out += [{"claim": x, "source": y} for x in lone_a for y in lone_b]
    return out
