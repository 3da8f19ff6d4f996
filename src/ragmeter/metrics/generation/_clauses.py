"""Clauses: an answer sentence cut where it starts a new statement (no model).

A sentence such as "The museum is open Tuesday to Sunday, and adult admission is £12." states two
facts; judged whole, a small judge that finds the first says yes to both. The claim call of
``mode=claims`` splits such sentences; :func:`clauses` does the same offline, at the joints that
start a new statement, so the verdict list can say no to one part:

1. a semicolon;
2. a comma followed by *and, but, so, while, whereas, plus, yet, which, who* or *where* when
   both sides hold at least :data:`MIN_WORDS_AFTER_COMMA` words ("a tent, a stove, and a water
   filter" stays one list);
3. *and* or *but* with no comma, followed by a word that opens a predicate or a clause
   (:data:`CLAUSE_OPENERS`: a verb such as *is, has, was, can, will*, a subject pronoun such as
   *it, they*, or *then, also*), when both sides hold at least :data:`MIN_WORDS` words: "It
   opened in 2019 and is 142 metres long" is cut, "between 7 am and 7 pm" and "Emily and Anne
   Brontë" are not.

Nothing is cut inside brackets or quotation marks, nor at a comma or a bare *and* before a number
(*and 7 pm*). The joint's conjunction and comma are left out of the part after it, whose
``start`` is the first character kept; a relative pronoun (*which, who, where*) is kept, because the
part says nothing without it. A cut that leaves a side below its minimum is not made, so every part
reads as a statement or a predicate of the sentence's subject ("is 142 metres long"), which the
verdict list reads with the question and the other parts.

:func:`answer_clauses` gives ``split=clauses`` its claims: the parts of the answer's check-worthy
sentences (:func:`._checkworthy.split_claims`) that are claims by the same rules
(:func:`._checkworthy.checkworthy_claims`; a part such as
"a bike is the perfect way to explore" is an opinion and is left out, with its kind), or the whole
sentence when none of its parts is.

Known limits: no parser, so a verb the list does not hold ("and boils at -183 °C") is not a joint,
and a comma before *and* that joins two noun phrases of four words or more is.
"""

from __future__ import annotations

import re
from typing import Any

from ._checkworthy import checkworthy_claims, split_claims

#: the fewest words each side of a joint without a comma holds (rule 3)
MIN_WORDS = 3

#: the fewest words each side of a comma joint holds (rule 2)
MIN_WORDS_AFTER_COMMA = 4

#: words after a bare *and* / *but* that open a predicate or a clause (rule 3)
CLAUSE_OPENERS = frozenset(
    "is are was were has have had can could will would should must may might does do did "
    "isn't aren't wasn't weren't hasn't haven't hadn't can't cannot couldn't won't wouldn't doesn't don't "
    "didn't it it's its they they're there he she we you i then also still now so "
    "takes took costs cost runs ran opens opened closes closed lasts lasted holds held starts started "
    "ends ended began begins leaves left arrives arrived stays stayed covers covered includes included "
    "makes made gives gave needs needed uses used keeps kept became becomes won lost".split())

_COMMA_JOINT = re.compile(r",\s+(and|but|so|while|whereas|plus|yet|which|who|where)\b\s*", re.IGNORECASE)
_BARE_JOINT = re.compile(r"\s+(and|but)\s+(?=([A-Za-z']+))")
_SEMICOLON = re.compile(r";\s*")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_KEEP_WORD = ("which", "who", "where")


def _protected(text: str) -> list[bool]:
    """Per character, whether it lies inside brackets or quotation marks."""
    out, depth, quoted = [], 0, False
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
        elif ch in "\"“”":
            quoted = not quoted if ch == '"' else ch == "“"
        out.append(depth > 0 or quoted)
    return out


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def clauses(sentence: str) -> list[tuple[str, int, int]]:
    """The parts of ``sentence`` by the module's rules, each ``(text, start, end)`` with
    ``text == sentence[start:end]``, in order; the whole sentence (stripped) when nothing is cut."""
    inside = _protected(sentence)
    cuts: list[tuple[int, int]] = []  # (end of the left part, start of the right part)
    for m in _SEMICOLON.finditer(sentence):
        if not inside[m.start()]:
            cuts.append((m.start(), m.end()))
    for m in _COMMA_JOINT.finditer(sentence):
        if inside[m.start()]:
            continue
        keep = m.group(1).lower() in _KEEP_WORD
        right = m.start(1) if keep else m.end()
        if sentence[right:right + 1].isdigit():
            continue
        cuts.append((m.start(), right))
    for m in _BARE_JOINT.finditer(sentence):
        if inside[m.start()] or m.group(2).lower() not in CLAUSE_OPENERS:
            continue
        cuts.append((m.start(), m.end()))
    bounds = _kept(sentence, sorted(set(cuts)))
    out: list[tuple[str, int, int]] = []
    start = 0
    for left_end, right_start in [*bounds, (len(sentence), len(sentence))]:
        a, b = start, left_end
        while a < b and sentence[a].isspace():
            a += 1
        while b > a and sentence[b - 1] in " \t\n,":
            b -= 1
        out.append((sentence[a:b], a, b))
        start = right_start
    return out


def _kept(sentence: str, cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The cuts whose sides hold their minimum of words, made left to right."""
    kept: list[tuple[int, int]] = []
    start = 0
    for i, (left_end, right_start) in enumerate(cuts):
        nxt = cuts[i + 1][0] if i + 1 < len(cuts) else len(sentence)
        comma = sentence[left_end] == ","
        least = MIN_WORDS_AFTER_COMMA if comma else MIN_WORDS
        if sentence[left_end] == ";":
            least = 1
        left, right = sentence[start:left_end], sentence[right_start:nxt]
        if _words(left) >= least and _words(right) >= least and right_start > start:
            kept.append((left_end, right_start))
            start = right_start
    return kept


def answer_clauses(answer: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The claims of ``split=clauses`` (the module docstring), in answer order, and what is not a
    claim as ``{"text", "kind"}``: the sentences that are not check-worthy and the parts of those
    that are which are not claims themselves. A part repeated word for word is kept once."""
    claims: list[str] = []
    not_claims: list[dict[str, Any]] = []
    for s in split_claims(answer):
        if not s.checkworthy:
            not_claims.append({"text": s.text, "kind": s.kind})
            continue
        kept, dropped = checkworthy_claims([t for t, _a, _b in clauses(s.text)])
        if not kept:
            kept = [s.text.strip()]
        else:
            not_claims += dropped
        claims += [t for t in kept if t not in claims]
    return claims, not_claims
