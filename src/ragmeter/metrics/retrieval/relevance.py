"""Deciding which retrieved contexts are relevant, from ids, labels, texts or the reference answer.

Rules, applied per sample (``rel_level`` is the binary threshold, default 1):

1. **Labels** (``sample.relevant`` is not None). Each label is an id or a text, with a grade (1 for
   a list; the mapping's value for a mapping). A label is found at the first retrieved position
   whose context ``id`` equals it; failing that, at the first position whose text matches it
   (rule below). Each label is found at most once, so a duplicated context is not counted twice.
   A position is relevant when a label with grade >= ``rel_level`` is first found there; its gain
   (for nDCG) is the highest grade first found there; |G| counts labels with grade >= ``rel_level``.
   A position that is not relevant but where a label with grade ``0 <= g < rel_level`` is first found
   is *judged non-relevant*; N counts labels with such grades. Other positions are *unjudged* (no
   label, or only negative grades).
2. **No labels, a reference answer** and texts: a context is relevant when it contains the
   reference (rule below); an exact duplicate of an earlier context is not. Its nDCG gain is the
   share of the reference's content words that it contains; the ideal ranking for IDCG is the
   retrieved gains best-first, plus a gain of 1 (a context holding the whole reference) when no
   retrieved context contains it. Metrics that need |G| (recall, MAP, R-precision, context recall)
   are undefined.
3. **Neither**: every retrieval metric is undefined for the sample.
4. **Labels that can never match** (:func:`labels_cannot_match`): labels that look like ids (no
   whitespace) while no retrieved context has an id, or labels that are texts (with whitespace)
   while no retrieved context has a text, and no label was found. Every retrieval metric is then
   undefined with the reason, not 0: the labels and the contexts speak of different things.

**Text matching rule.** Texts are compared as lower-cased word tokens (``\\w+``), so case,
whitespace and punctuation do not matter. A labelled text *L* matches a context *C* when
(a) L's token sequence occurs inside C's, or C's inside L's with C at least
:data:`MIN_PARTIAL_TOKENS` tokens long (a chunking difference), or (b) at least
:data:`TEXT_MATCH_THRESHOLD` (80%) of L's distinct content words occur in C (or, for C with at
least :data:`MIN_PARTIAL_TOKENS` distinct content words, 80% of C's occur in L). Content words
exclude a short English stop-word list. Containment of the reference answer uses (a) and the
first half of (b) only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...types import Sample
from ._batch import RankedList

TEXT_MATCH_THRESHOLD = 0.8
MIN_PARTIAL_TOKENS = 5

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    """a an the and or but if of at by for with about to from in on into onto over under is are was were be
    been being am do does did has have had having it its this that these those there here as than then so
    such not no nor can could will would shall should may might must i you he she we they me him her us them
    my your his our their what which who whom whose when where why how all any both each few more most other
    some own same too very just also""".split()
)


@lru_cache(maxsize=65536)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased word tokens of ``text``."""
    return tuple(_WORD.findall(text.casefold()))


def content_words(toks: tuple[str, ...]) -> frozenset[str]:
    """Distinct tokens that are not stop words (all distinct tokens if every one is a stop word)."""
    words = frozenset(t for t in toks if t not in STOPWORDS)
    return words or frozenset(toks)


def _contains_seq(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    if not needle or len(needle) > len(hay):
        return False
    return f" {' '.join(needle)} " in f" {' '.join(hay)} "


def _share(part: frozenset[str], whole: frozenset[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


def texts_match(label: str, context: str) -> bool:
    """True when labelled text ``label`` and retrieved text ``context`` denote the same chunk (rule above)."""
    lt, ct = tokens(label), tokens(context)
    if not lt or not ct:
        return False
    if _contains_seq(ct, lt) or (len(ct) >= MIN_PARTIAL_TOKENS and _contains_seq(lt, ct)):
        return True
    lw, cw = content_words(lt), content_words(ct)
    if _share(lw, cw) >= TEXT_MATCH_THRESHOLD:
        return True
    return len(cw) >= MIN_PARTIAL_TOKENS and _share(cw, lw) >= TEXT_MATCH_THRESHOLD


def contains_reference(reference: str, context: str) -> bool:
    """True when ``context`` contains the reference answer (sequence or 80% of its content words)."""
    rt, ct = tokens(reference), tokens(context)
    if not rt or not ct:
        return False
    return _contains_seq(ct, rt) or _share(content_words(rt), content_words(ct)) >= TEXT_MATCH_THRESHOLD


def reference_overlap(reference: str, context: str) -> float:
    """Share of the reference's content words found in ``context`` (graded gain without labels)."""
    return _share(content_words(tokens(reference)), content_words(tokens(context)))


#: Reason of an undefined result under rule 4.
CANNOT_MATCH = "undefined: the relevance labels can never match the contexts"


def labels_cannot_match(sample: Sample) -> str | None:
    """Rule 4: why ``sample``'s labels can never match its contexts (None when they can, or did)."""
    rel = sample.relevant
    contexts = sample.contexts
    if not rel or not contexts:
        return None
    labels = list(rel)
    if not any(c.id is not None for c in contexts) and not any(_has_space(x) for x in labels):
        if any(c.text and texts_match(x, c.text) for x in labels for c in contexts):
            return None
        return (f"{CANNOT_MATCH}: the labels are ids ({labels[0]!r}, ...) but no retrieved context has an "
                "id; give each context its id ({id, text}), or label relevant texts")
    if not any(c.text for c in contexts) and all(_has_space(x) for x in labels):
        ids = {c.id for c in contexts}
        if any(x in ids for x in labels):
            return None
        return (f"{CANNOT_MATCH}: the labels are texts ({labels[0][:40]!r}, ...) but the retrieved contexts "
                "have only ids; label relevant ids, or give each context its text")
    return None


#: A label with inner whitespace is a text, not an id (ASCII whitespace: the columnar engine's
#: Arrow regex applies the same pattern).
SPACED_LABEL = re.compile(r"\S\s+\S", re.ASCII)


def _has_space(label: str) -> bool:
    return SPACED_LABEL.search(label) is not None


@dataclass(frozen=True)
class Relevance:
    """A sample's ranked relevance and how it was decided (``mode``: ``labels`` or ``reference``)."""

    ranked: RankedList
    mode: str
    matched_by: tuple[str | None, ...]  # per position: 'id', 'text', 'reference' or None


def judge_relevance(sample: Sample, rel_level: float = 1.0) -> Relevance | None:
    """Apply the rules of this module to ``sample``; None when neither labels nor a reference exist."""
    contexts = sample.contexts
    n = len(contexts)
    if sample.relevant is not None:
        labels = (
            list(sample.relevant.items())
            if isinstance(sample.relevant, dict)
            else [(x, 1.0) for x in sample.relevant]
        )
        gain = [0.0] * n
        covered = [0] * n
        rel = [False] * n
        how: list[str | None] = [None] * n
        judged = [False] * n  # a label with 0 <= grade < rel_level found here
        by_id: dict[str, int] = {}
        for i, c in enumerate(contexts):
            if c.id is not None and c.id not in by_id:
                by_id[c.id] = i
        for label, grade in labels:
            pos = by_id.get(label)
            method = "id"
            if pos is None:
                method = "text"
                pos = next(
                    (i for i, c in enumerate(contexts) if c.text and texts_match(label, c.text)), None
                )
            if pos is None:
                continue
            if grade > gain[pos]:
                gain[pos] = grade
            if grade >= rel_level:
                rel[pos] = True
                covered[pos] += 1
                how[pos] = how[pos] or method
            elif grade >= 0:
                judged[pos] = True
        num_rel = float(sum(1 for _, g in labels if g >= rel_level))
        num_nonrel = float(sum(1 for _, g in labels if 0 <= g < rel_level))
        ideal = sorted((g for _, g in labels if g > 0), reverse=True)
        nonrel = [j and not r for j, r in zip(judged, rel, strict=True)]
        ranked = RankedList(rel, gain, covered, num_rel, ideal, nonrel, num_nonrel)
        return Relevance(ranked, "labels", tuple(how))
    if sample.reference and sample.reference.strip():
        seen: set[tuple[str, ...]] = set()
        rel, gain, how = [], [], []
        for c in contexts:
            text = c.text or ""
            key = tokens(text)
            dup = key in seen
            seen.add(key)
            hit = not dup and contains_reference(sample.reference, text)
            rel.append(hit)
            gain.append(0.0 if dup else reference_overlap(sample.reference, text))
            how.append("reference" if hit else None)
        # The ideal ranking is the retrieved contexts best-first, plus a context that contains the
        # whole reference when none was retrieved: a complete miss never scores a perfect nDCG.
        ideal = sorted([*gain, *(() if any(rel) else (1.0,))], reverse=True)
        ranked = RankedList(rel, gain, [int(r) for r in rel], float("nan"), ideal)
        return Relevance(ranked, "reference", tuple(how))
    return None
