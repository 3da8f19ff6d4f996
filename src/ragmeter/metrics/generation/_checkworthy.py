r"""Check-worthiness: which sentences of an answer make a factual claim to check (no model).

A reply in a conversation mixes facts with greetings, feelings, opinions and questions back. "I love
that film!" cannot be supported or contradicted by a context, so it is not a claim, and a reply made
only of such sentences is not unfaithful. Each sentence of the answer (cut by
:func:`answer_sentences`, with its ``[start, end)`` offsets in the answer) is classified by the first
rule that applies; the reason is recorded:

1. ``question``: it ends with ``?``.
2. ``greeting``: once leading interjections are removed (*oh, ah, aw, wow, haha, ha, yay, ooh, well,
   hmm, ugh*), it is empty, or it opens with a greeting, thanks, farewell, apology or offer of more
   help (*hi, hello, hey, good morning, thanks, thank you, you're welcome, welcome back, bye,
   goodbye, see you, take care, have a ..., sorry, congratulations, cheers, let me know, feel free
   to, hope this helps, happy to help, glad to help*) and holds no number.
3. ``heading``: markdown emphasis and heading marks (``*``, ``_``, ``#``) set aside, it ends with
   ":" and holds no number: a lead-in or heading above a list ("Here is what the documents say:",
   "**Eligibility:**"), whose items are the claims.
4. ``abstention``: it says what the retrieved material does not hold, or that the answer is not
   known, and nothing else: after optional *but, however, unfortunately, sadly, still*, either the
   material as subject (*the passages, the provided context, these documents, the sources, the
   text, the article, the excerpts, the snippets, the search results, the information* ...), at
   most two adverbs, and a negated verb of saying ("don't say", "does not mention", "did not
   give", *state, provide, specify, include, list, contain, cover, indicate, tell, describe,
   explain, discuss, address, show, name, report, detail, clarify*; or "makes no mention
   of", "says nothing about", "is silent on"); or "there is no information / mention / detail /
   data / figure about ... in" the material; or "I can't / couldn't / don't / didn't find / see
   / tell", or "... know" at the sentence's end or before *whether, if, how, what, when, where,
   who, which, why* ("I didn't know the tower was repainted in 1990!" asserts the repainting); or
   "it is not stated / mentioned / specified / given / said / listed in" the material; "I cannot /
   can't / am unable to determine / answer / say" (and *find, see, tell*) also counts; so does the
   thing not said as subject, up to eight words with no relative pronoun or clause mark, then "is
   / are / was / were not" and *mentioned, stated, specified, described, discussed*, ending the
   sentence or followed by *in* or *by* and the material, the material named there or before it
   ("The price isn't specified in the documents."; "The opening hours are not mentioned." names
   no material, and *included, provided, given, listed* also say things of the world). Any of
   these may open with where the answer looked, *based on, according to, from* or *in* the
   material ("Based on the provided context, there is no information about the refund policy.",
   which names the material for the "there is no information" form). A study's
   *results* are not the material and *confirm* is not a verb of saying here ("The results do not
   show a link", "The sources did not confirm the arrest" are statements about the world); nor is
   "there is no information about the motive" without the material named. A wrong
   abstention is a failure of relevancy or correctness, not a hallucination, so a name or number
   inside it ("The passages don't give the 2019 figure.") is not checked. It must end there: a
   comma, semicolon, colon, dash or bracket after the match, or one of *but, though, although,
   however, instead, only, except, so, because, since, which, while, whereas*, makes it a claim
   ("The documents don't mention a fee, so it's probably free."), and so does a bare "Yes." or
   "No." joined to it (the reply's verdict asserts something); *which* as the first word after
   the match opens the indirect question ("The passages don't say which platform it leaves
   from.") and *so* as the sentence's last word is the thing not said ("The passages don't say
   so."), neither a second clause.
5. ``opinion``: it holds no number and no name (the number and name rules of ``fact_consistency``)
   and either opens with a first-person stance or feeling (*I*, *I'm*, *I've*, *I'd*, *me too*,
   *my favourite*, *honestly*, *personally*, *you've got this*) or is at most
   ``SHORT_REMARK_WORDS`` words long and ends with ``!``, or holds an evaluative word
   (``EVALUATIVE``: *great, lovely, amazing, cool, fun, sad* ...) and at most
   ``REMARK_CONTENT_WORDS`` other content words ("Such a sad story." is a remark; "They pair
   best with underfloor heating or big radiators." states a fact with an evaluative word in it).
   A superlative such as *best* is not an evaluative word: "They pair best with small radiators"
   and "the best-selling vacuum in Europe" are facts a context can support or contradict.
6. Otherwise the sentence is a ``claim``.

The rules are :func:`ragmeter.metrics.lexical.fact_consistency.classify` and its constants, beside
the number, name and abstention rules they use.

A hedge does not rescue a claim: "probably around 90 minutes" has a number and is checked. Known
limits: an opinion that carries a name or a number ("Tram 28 is lovely") is checked as a claim; a
long first-person sentence with a fact and no number or name ("I think it's worth it, since the
roads stay open") is not, nor a short statement of fact with an evaluative word and few other
words ("They need cool water.").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..lexical.fact_consistency import (
    BARE_REPLY,
    classify,
    without_markup,
)
from ._sentences import sentence_spans


@dataclass(frozen=True)
class Sentence:
    """One sentence of the answer: ``text`` is ``answer[start:end]``; ``kind`` is ``claim``,
    ``question``, ``greeting``, ``heading``, ``abstention`` or ``opinion``."""

    text: str
    start: int
    end: int
    kind: str

    @property
    def checkworthy(self) -> bool:
        """Whether the sentence is a claim to check."""
        return self.kind == "claim"

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready sentence (for the result's details)."""
        return {"text": self.text, "start": self.start, "end": self.end, "kind": self.kind}


def answer_sentences(answer: str) -> list[tuple[str, int, int]]:
    """The answer's sentences with offsets (:func:`._sentences.sentence_spans`)."""
    return [(answer[a:b], a, b) for a, b in sentence_spans(answer)]


def checkworthy_claims(claims: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The claims a judge extracted that are claims to check (any of their sentences is), and the
    others as ``{"text", "kind"}`` (the kind of their first sentence), in order."""
    kept: list[str] = []
    dropped: list[dict[str, Any]] = []
    for c in claims:
        kinds = [s.kind for s in split_claims(c)]
        if "claim" in kinds:
            kept.append(c)
        else:
            dropped.append({"text": c, "kind": kinds[0] if kinds else "greeting"})
    return kept, dropped


def split_claims(answer: str) -> list[Sentence]:
    """Every sentence of ``answer`` with its offsets and :func:`classify` kind; a bare "Yes." or
    "No." is joined to the sentence after it (one claim: the reply's verdict and what it rests on);
    a sentence that is list markers or citations alone ("1.", "2)", "[3]") is no sentence. Memoised
    per answer text (a sample's planning, claim and answer-check steps each ask)."""
    return list(_split_claims(answer))


@lru_cache(maxsize=4096)
def _split_claims(answer: str) -> tuple[Sentence, ...]:
    parts = answer_sentences(answer)
    joined: list[tuple[int, int]] = []
    i = 0
    while i < len(parts):
        _t, a, b = parts[i]
        if BARE_REPLY.fullmatch(parts[i][0]) and i + 1 < len(parts):
            b = parts[i + 1][2]
            i += 1
        joined.append((a, b))
        i += 1
    return tuple(Sentence(answer[a:b], a, b, classify(answer[a:b])) for a, b in joined
                 if without_markup(answer[a:b]).strip())
