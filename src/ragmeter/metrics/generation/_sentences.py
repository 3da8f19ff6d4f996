"""Sentences with character offsets, for the sentence-level faithfulness (answers and contexts alike).

The text is cut at line breaks and after a run of ``.``, ``!``, ``?`` or ``…`` followed by
whitespace, except where the run ends a word that is not a sentence end:

* a title or a Latin abbreviation (:data:`NEVER_ENDS`: *Dr.*, *St.*, *e.g.*, *vs.* ...) never ends
  a sentence;
* a clock or list abbreviation (:data:`ENDS_BEFORE_CAPITAL`: *a.m.*, *p.m.*, *etc.*, *approx.*)
  ends one only when the next word starts with a capital letter or a digit ("from 6 a.m. until
  1 a.m." is one sentence; "opens at 9 a.m. The museum ..." is two);
* a single capital letter (an initial: "J. K. Rowling") ends one only when the next word does not
  start with a capital letter.

A decimal point ("18.5") never cuts, as no whitespace follows it. Each sentence is returned as its
``[start, end)`` offsets in the text, stripped of surrounding whitespace.
"""

from __future__ import annotations

import re

#: words ending in "." that never end a sentence (compared case-folded)
NEVER_ENDS = frozenset("mr. mrs. ms. dr. prof. st. mt. no. nos. vs. e.g. i.e. cf. approx. ca. fig. jr. sr.".split())
#: words ending in "." that end a sentence only before a capital letter or a digit
ENDS_BEFORE_CAPITAL = frozenset("a.m. p.m. etc. inc. ltd. co.".split())

_CANDIDATE = re.compile(r"[.!?…]+(?=\s)|\n")
_LAST_WORD = re.compile(r"(\S+)$")
_NEXT_WORD = re.compile(r"\s*(\S)")


def _ends_sentence(text: str, end: int) -> bool:
    """Whether the punctuation run ending at ``end`` ends a sentence (the module docstring's rules)."""
    if text[end - 1] != ".":
        return True
    word = _LAST_WORD.search(text, 0, end)
    last = word.group(1).lstrip("(\"'“‘").casefold() if word else ""
    nxt = _NEXT_WORD.match(text, end)
    following = nxt.group(1) if nxt else ""
    if last in NEVER_ENDS:
        return False
    if last in ENDS_BEFORE_CAPITAL:
        return following.isupper() or following.isdigit()
    if word and re.fullmatch(r"[A-Z]\.", word.group(1)):
        return not following.isupper()
    return True


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` offsets of ``text``'s sentences (the module docstring's rule)."""
    cuts = [m.end() for m in _CANDIDATE.finditer(text) if m.group(0) == "\n" or _ends_sentence(text, m.end())]
    out: list[tuple[int, int]] = []
    start = 0
    for cut in [*cuts, len(text)]:
        piece = text[start:cut]
        body = piece.strip()
        if body:
            a = start + len(piece) - len(piece.lstrip())
            out.append((a, a + len(body)))
        start = cut
    return out
