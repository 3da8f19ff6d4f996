"""The claim verification steps: claims checked against the joined contexts.

- :func:`verify`: prompt ``verify_claims.prompt``, reply model :class:`Verdicts` asked with
  ``sized(Verdicts, n)`` (exactly one verdict per given claim, each after the context sentence it
  quotes), after a separate decomposition; with ``verdicts=bare`` prompt
  ``verify_claims_bare.prompt`` and :class:`BareVerdicts`: the verdicts alone; with
  ``verdicts=after_quotes`` prompts ``quote_claims.prompt`` (:class:`Quotes`) and then, in the same
  conversation, ``verdicts_after_quotes.prompt`` (:class:`BareVerdicts`); with
  ``verdicts=given_quotes`` the same conversation in one call, its first reply written offline
  (:func:`given_quote`: each claim's most related context sentence); with ``verdicts=short_quotes``
  prompt ``verify_claims_short.prompt`` and :class:`Verdicts`: the list with the first five words
  of each quoted sentence instead of the whole sentence (:func:`expand_quote` gives it back whole);
  with ``verdicts=capped_quotes`` the same prompt and :class:`CappedVerdicts`, whose schema caps
  each quote at :data:`QUOTE_CAP_CHARS` characters.
- :func:`check_inline`: prompt ``check_answer_claims.prompt``, reply model :class:`InlineClaims`:
  one call lists the answer's claims, each with its evidence and verdict (``mode=inline``).

Both are shared by faithfulness and hallucination_rate (one call per sample and scoring mode).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from ...judges import PromptTemplate, ReplyShape
from ...judges.base import Message
from ...registry import Param
from ...types import Sample
from ._evidence import Span, context_sentences, lexical_scores
from ._memo import shared
from ._prompting import joined_context, numbered, reply_shape, template
from ._schema import YesNo, align, sized
from ._verdict import TOP_LOGPROBS, reply_yes_shares


class Verdict(BaseModel):
    """One claim's verdict."""

    statement: int
    evidence: str
    supported: YesNo


#: ``verdicts=capped_quotes``'s cap on a quote, in characters (about five words)
QUOTE_CAP_CHARS = 40


class CappedVerdict(BaseModel):
    """One claim's verdict after the first words of the sentence it quotes."""

    statement: int
    # capped in the schema sent (maxLength), not in validation: a server that enforces the schema
    # with a grammar (llama.cpp, vLLM) cannot write a longer quote, and a longer quote from one
    # that does not is read as written
    evidence: str = Field(json_schema_extra={"maxLength": QUOTE_CAP_CHARS})
    supported: YesNo


class Quote(BaseModel):
    """The context sentence one claim rests on (``verdicts=after_quotes``'s first call)."""

    statement: int
    evidence: str


class Quotes(BaseModel):
    """Reply of ``quote_claims`` (ask with ``sized(Quotes, n)``)."""

    quotes: list[Quote]


class BareVerdict(BaseModel):
    """One claim's verdict without a quote."""

    statement: int
    supported: YesNo


class InlineClaim(BaseModel):
    """One claim of the answer with the context sentence that states it and its verdict."""

    claim: str
    evidence: str
    supported: YesNo


class InlineClaims(BaseModel):
    """Reply of ``check_answer_claims``: the answer's claims, each checked, and the judge's
    statement that the answer makes no factual claim (``no_facts``)."""

    claims: list[InlineClaim]
    no_facts: YesNo


class Verdicts(BaseModel):
    """Reply of ``verify_claims`` (ask with ``sized(Verdicts, n)``: exactly one verdict per claim)."""

    verdicts: list[Verdict]


class CappedVerdicts(BaseModel):
    """Reply of ``verify_claims_short`` with ``verdicts=capped_quotes`` (ask with ``sized(CappedVerdicts, n)``)."""

    verdicts: list[CappedVerdict]


class BareVerdicts(BaseModel):
    """Reply of ``verify_claims_bare`` (ask with ``sized(BareVerdicts, n)``)."""

    verdicts: list[BareVerdict]


VERDICTS = Param("verdicts", str, "auto", "how the claims (mode=claims) or check-worthy sentences (mode=sentences) "
                 "are checked: list (one call, a JSON verdict per claim with the context sentence it quotes), "
                 "bare (the same list without the quotes: statement number and yes/no only), after_quotes (two "
                 "calls of one conversation: the quotes without log-probabilities, then the yes/no list after them), "
                 "given_quotes (after_quotes in one call: the quotes are not asked of the judge but given as its "
                 "turn, each claim's most related context sentence by word overlap, and the judge writes the "
                 "yes/no list alone), short_quotes (the list with the first five words of each quoted sentence "
                 "instead of the whole sentence: fewer tokens written), capped_quotes (short_quotes with each "
                 "quote capped at 40 characters in the reply schema, which servers that enforce the schema keep), "
                 "word (one call per claim, one yes/no word scored by P(yes), against the claim's evidence window) "
                 "or auto "
                 "(list with mode=claims, word with mode=sentences)",
                 choices=("auto", "list", "bare", "after_quotes", "given_quotes", "short_quotes",
                          "capped_quotes", "word"))


#: the verdict forms that quote a context sentence for each claim (what ``veto=quote`` reads)
QUOTING_FORMS = ("list", "after_quotes")


def verdict_form(params: dict[str, Any]) -> str:
    """``"list"``, ``"bare"``, ``"after_quotes"``, ``"given_quotes"``, ``"short_quotes"``, ``"capped_quotes"``
    or ``"word"``:
    the form ``params["verdicts"]`` gives under ``params["mode"]``."""
    if params.get("verdicts", "auto") != "auto":
        return str(params["verdicts"])
    return "word" if params.get("mode") == "sentences" else "list"

EVIDENCE_SLOT = "<sentence from the context, or none>"
#: ``verdicts=short_quotes``'s evidence slot
SHORT_EVIDENCE_SLOT = "<first five words of that sentence, or none>"


def _evidence(text: str) -> str:
    """The evidence a verdict quotes; "" for none or for the unfilled slot copied from the skeleton."""
    t = text.strip()
    return "" if t.lower() in ("none", "<none>", "", EVIDENCE_SLOT, SHORT_EVIDENCE_SLOT) else t


def _folded(text: str) -> str:
    """``text`` lower-cased, its runs of characters other than letters and digits one space."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def expand_quote(quote: str, sentences: list[Span]) -> str:
    """``verdicts=short_quotes``'s quote given back whole: the first of ``sentences`` that opens with
    ``quote`` (both compared lower-cased, letters and digits only); ``quote`` as written where none
    does (the judge quoted something else, such as the claim)."""
    head = _folded(quote)
    if not head:
        return quote
    for s in sentences:
        text = _folded(s.text)
        if text == head or text.startswith(head + " "):
            return s.text
    return quote


async def verify(judge: Any, sample: Sample, claims: list[str], tag: str,
                 scoring: str = "hard", context: str | None = None,
                 repeat_penalty: float | None = None, form: str = "list") -> list[tuple[bool, str, float | None]]:
    """One (verdict, evidence, P(yes)) per claim, all claims in one call; the reply must hold exactly
    one verdict per claim (else one repair, then a JudgeParseError). The judge reads ``context``
    when given (``mode=sentences``: the claims' evidence windows), else the sample's joined contexts.

    ``scoring="auto"`` asks for log-probabilities and gives each claim
    P(yes) / (P(yes) + P(no)) of the token where its ``"supported"`` value starts
    (:func:`._verdict.field_yes_shares`); None where the backend returned none or the token could
    not be located (the caller then uses the hard verdict). ``"hard"``: always None.
    ``repeat_penalty`` goes with the request (:attr:`~ragmeter.judges.base.ChatRequest.repeat_penalty`;
    faithfulness ``mode=claims`` asks for none). ``form`` (the ``verdicts`` parameter): ``"list"``
    each verdict after the sentence it quotes; ``"bare"`` the verdicts alone (``verify_claims_bare``;
    every evidence is ""); ``"after_quotes"`` two calls (:func:`_verify_after_quotes`);
    ``"short_quotes"`` each verdict after the first five words of the sentence it quotes
    (``verify_claims_short``), the evidence that sentence whole where the contexts hold one that
    opens with them (:func:`expand_quote`); ``"capped_quotes"`` the same with each quote capped
    in the reply schema (:class:`CappedVerdicts`).
    """
    if form == "after_quotes":
        return await _verify_after_quotes(judge, sample, claims, tag, scoring, context, repeat_penalty)
    if form == "given_quotes":
        return await _verify_given_quotes(judge, sample, claims, tag, scoring, context, repeat_penalty)
    texts = sample.context_texts if context is None else [context]
    if context is None:
        context = joined_context(sample)
    t, messages = _verdict_messages(claims, context, form)

    async def run() -> list[tuple[bool, str, float | None]]:
        model = sized(_LISTS[form][2], len(claims))
        r = await judge.judge(messages, model, tag=tag, template_version=t.cache_version,
                              top_logprobs=TOP_LOGPROBS if scoring == "auto" else None,
                              repeat_penalty=repeat_penalty)
        out = _read_verdicts(r, len(claims), scoring, None)
        if _LISTS[form][1] != SHORT_EVIDENCE_SLOT:
            return out
        sentences = context_sentences(texts)  # the first words of a quote given back whole
        return [(v, expand_quote(e, sentences) if e else e, p) for v, e, p in out]

    # the form in the key: short_quotes and capped_quotes share a prompt, not a reply schema
    return await shared(judge, f"{t.cache_version}/{form}/{scoring}", (context, claims, repeat_penalty), run)


def given_quote(claim: str, sentences: list[Span]) -> str:
    """``verdicts=given_quotes``'s quote for ``claim``: of ``sentences``, the one with the highest
    IDF-weighted overlap of content words with it (:func:`._evidence.lexical_scores`; ties: the
    earlier), the sentence the evidence veto reads; "" when no sentence shares a content word."""
    scores = lexical_scores(claim, sentences)
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i), default=None)
    return "" if best is None or scores[best] <= 0 else sentences[best].text


async def _verify_given_quotes(judge: Any, sample: Sample, claims: list[str], tag: str, scoring: str,
                               context: str | None, repeat_penalty: float | None
                               ) -> list[tuple[bool, str, float | None]]:
    """``verdicts=given_quotes``: ``verdicts=after_quotes``'s conversation in one call. The first
    reply, the quotes, is not asked of the judge: each claim's :func:`given_quote` from the sentences
    of the contexts it is checked against ("none" where there is none) stands as the judge's turn, in
    the JSON ``quote_claims`` asks for, and the judge writes the yes/no list alone (the
    :class:`BareVerdicts` shape; P(yes) at each ``"supported"`` value where ``scoring="auto"``). The
    reply must hold exactly one entry per claim."""
    t1, t2 = template("quote_claims"), template("verdicts_after_quotes")
    sentences = context_sentences(sample.context_texts if context is None else [context])
    if context is None:
        context = joined_context(sample)
    quotes = [given_quote(c, sentences) for c in claims]
    version = f"{t1.cache_version}+given+{t2.cache_version}"

    async def run() -> list[tuple[bool, str, float | None]]:
        turn = json.dumps({"quotes": [{"statement": i, "evidence": q or "none"} for i, q in enumerate(quotes, 1)]})
        return await _verdicts_after(judge, _quote_messages(claims, context), turn, quotes, tag, version, scoring,
                                     repeat_penalty)

    return await shared(judge, f"{version}/{scoring}", (context, claims, repeat_penalty), run)


def inline_prompt_chars(sample: Sample, context: str) -> int:
    """The characters of :func:`check_inline`'s prompt with ``context`` in it."""
    return sum(len(m.content) for m in _inline_messages(sample, context))


def _inline_messages(sample: Sample, context: str) -> list[Message]:
    return template("check_answer_claims").messages(context=context, question=sample.query,
                                                    answer=sample.answer or "")


#: the verdict list's template, evidence slot ("" for none; :data:`SHORT_EVIDENCE_SLOT` where the
#: quote is its first words, given back whole by :func:`expand_quote`) and reply model, by its form
_LISTS: dict[str, tuple[str, str, type[BaseModel]]] = {
    "list": ("verify_claims", EVIDENCE_SLOT, Verdicts),
    "bare": ("verify_claims_bare", "", BareVerdicts),
    "short_quotes": ("verify_claims_short", SHORT_EVIDENCE_SLOT, Verdicts),
    "capped_quotes": ("verify_claims_short", SHORT_EVIDENCE_SLOT, CappedVerdicts)}


def _verdict_messages(claims: list[str], context: str, form: str) -> tuple[PromptTemplate, list[Message]]:
    """The verdict list's template (``verify_claims``; ``verify_claims_bare`` for ``form="bare"``,
    ``verify_claims_short`` for ``"short_quotes"`` and ``"capped_quotes"``) and its messages for
    ``claims`` against ``context``."""
    name, slot, _ = _LISTS[form]
    t = template(name)
    return t, t.messages(context=context, statements=numbered(claims), shape=_verdicts_shape(len(claims), slot))


def _verdicts_shape(n: int, evidence: str) -> ReplyShape:
    """The reply skeleton of a verdict list of ``n`` claims, with an evidence slot holding
    ``evidence`` (none for "")."""
    slot = {"evidence": evidence} if evidence else {}
    return reply_shape("verdicts", [{"statement": i, **slot, "supported": "<yes or no>"} for i in range(1, n + 1)])


def _read_verdicts(r: Any, n: int, scoring: str, quotes: list[str] | None) -> list[tuple[bool, str, float | None]]:
    """(verdict, evidence, P(yes)) per claim of a verdict reply ``r`` (evidence from the reply's
    own ``evidence`` fields, or ``quotes`` when given)."""
    verdicts = r.value.verdicts
    shares = reply_yes_shares(r, "supported", len(verdicts), scoring)
    p_of = {id(v): p for v, p in zip(verdicts, shares, strict=True)}
    out = align(verdicts, n, "statement",
                lambda v: (v.supported, _evidence(getattr(v, "evidence", "")), p_of[id(v)]))
    return out if quotes is None else [(v, q, p) for (v, _, p), q in zip(out, quotes, strict=True)]


def _quote_messages(claims: list[str], context: str) -> list[Message]:
    """``quote_claims``'s messages: one context sentence (or "none") asked for each of ``claims``."""
    shape = reply_shape("quotes", [{"statement": i, "evidence": EVIDENCE_SLOT} for i in range(1, len(claims) + 1)])
    return template("quote_claims").messages(context=context, statements=numbered(claims), shape=shape)


async def _verdicts_after(judge: Any, first: list[Message], turn: str, quotes: list[str], tag: str, version: str,
                          scoring: str, repeat_penalty: float | None) -> list[tuple[bool, str, float | None]]:
    """The yes/no list after a quotes turn: ``first`` (:func:`_quote_messages`), ``turn`` as the
    judge's own reply, then ``verdicts_after_quotes``'s user turn (the system message is the first
    call's); the :class:`BareVerdicts` shape, one entry per quote, log-probabilities asked where
    ``scoring="auto"``; each verdict returned with its quote."""
    n = len(quotes)
    then = template("verdicts_after_quotes").messages(shape=_verdicts_shape(n, ""))[1:]
    r = await judge.judge([*first, Message("assistant", turn), *then], sized(BareVerdicts, n), tag=tag,
                          template_version=version, top_logprobs=TOP_LOGPROBS if scoring == "auto" else None,
                          repeat_penalty=repeat_penalty)
    return _read_verdicts(r, n, scoring, quotes)


async def _verify_after_quotes(judge: Any, sample: Sample, claims: list[str], tag: str, scoring: str,
                               context: str | None, repeat_penalty: float | None
                               ) -> list[tuple[bool, str, float | None]]:
    """``verdicts=after_quotes``: the sentence each claim rests on, then the verdicts, in two calls of
    one conversation. (1) ``quote_claims``: one quoted context sentence (or "none") per claim,
    asked without log-probabilities; (2) the same messages, the judge's reply as its own turn, and
    ``verdicts_after_quotes``'s user turn: one yes/no per claim (the :class:`BareVerdicts` shape),
    asked with log-probabilities where ``scoring="auto"``. The second call starts with every token
    of the first call's prompt and reply, so a server that keeps the previous prompt's state
    evaluates only its last turn; and the quotes, most of what is written, are written without the
    per-token cost of log-probabilities. Each reply must hold exactly one entry per claim."""
    t1, t2 = template("quote_claims"), template("verdicts_after_quotes")
    if context is None:
        context = joined_context(sample)

    async def run() -> list[tuple[bool, str, float | None]]:
        n = len(claims)
        first = _quote_messages(claims, context)
        r1 = await judge.judge(first, sized(Quotes, n), tag=tag, template_version=t1.cache_version,
                               repeat_penalty=repeat_penalty)
        quotes = align(r1.value.quotes, n, "statement", lambda q: _evidence(q.evidence))
        return await _verdicts_after(judge, first, r1.raw, quotes, tag, f"{t1.cache_version}+{t2.cache_version}",
                                     scoring, repeat_penalty)

    return await shared(judge, f"{t1.cache_version}+{t2.cache_version}/{scoring}",
                        (context, claims, repeat_penalty), run)


async def check_inline(judge: Any, sample: Sample, tag: str, scoring: str = "hard", context: str | None = None
                       ) -> tuple[list[tuple[str, bool, str, float | None]], bool]:
    """The answer's claims as the judge lists them, each ``(claim, verdict, evidence, P(yes))``,
    and its ``no_facts`` statement, from one call that decomposes and checks together.

    Empty claims are dropped (with their verdicts). ``scoring="auto"``: P(yes) / (P(yes) + P(no))
    of each ``"supported"`` value's first token (:func:`._verdict.field_yes_shares`); None for
    every claim where the backend returned no log-probabilities or the tokens cannot be aligned
    with the claims (the caller then uses the hard verdicts). ``"hard"``: always None. ``context``
    replaces the joined contexts (an excerpt that fits the judge's window, :mod:`._fit`).
    """
    t = template("check_answer_claims")
    context = joined_context(sample) if context is None else context

    async def run() -> tuple[list[tuple[str, bool, str, float | None]], bool]:
        r = await judge.judge(_inline_messages(sample, context), InlineClaims, tag=tag,
                              template_version=t.cache_version,
                              top_logprobs=TOP_LOGPROBS if scoring == "auto" else None)
        items = r.value.claims
        shares = reply_yes_shares(r, "supported", len(items), scoring)
        out = [(c.claim.strip(), c.supported, _evidence(c.evidence), p)
               for c, p in zip(items, shares, strict=True) if c.claim.strip()]
        return out, r.value.no_facts

    return await shared(judge, f"{t.cache_version}/{scoring}", (context, sample.query, sample.answer), run)
