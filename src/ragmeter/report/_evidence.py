"""Where a claim's support is: checked claims marked in the answer, their evidence in the contexts.

A sentence-level support check (``faithfulness(mode=sentences)``, and ``hallucination_rate`` in the
same mode, which records the same details) writes per claim its ``[start, end)`` offsets in the
answer, its ``support``, ``p_yes`` and ``veto``, and its ``evidence``: the context sentences most
related to it, each as ``{context, start, end, text}`` (``context`` counts the contexts that have
text, in rank order). The answer's other sentences are in ``not_claims`` with their ``kind``
(question, greeting, heading, opinion). Any metric whose details have that shape drives the marks; the
first such metric of the run is used.

:func:`evidence_marks` turns those details into the segments the page's script draws: the
answer's claims as marks classed by :func:`support_class`, its other sentences plain with their
kind, and each claim's evidence spans in the contexts, linked both ways. The offsets come from
``results.jsonl``, which a user can edit, and the texts from the data file, which can change after
the run, so every span is checked before use (:func:`cut`): a span whose offsets are not integers,
are empty or reversed, fall outside its text, or whose text (``claim`` / ``text``) differs from
the text at those offsets, is ignored and counted; overlapping spans are split into segments that
each know every span covering them (so they nest in the page); a span that starts beyond the
page's display cut (``clip``) is dropped and counted, one that crosses it is cut there. The
offsets handed to the page are in the units its script indexes the shown text by
(:func:`ragmeter.report._text.display_offsets`); the script puts every piece in the page with
``textContent``, so the text is escaped piece by piece by the browser.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, TypeGuard

from ._text import display_offsets

#: A claim whose support is at least this is shown as supported.
SUPPORTED_AT = 0.5
#: A claim whose support is at least this (and below :data:`SUPPORTED_AT`) is shown as doubtful;
#: below it (a veto sets 0), or with no support recorded, as unsupported.
DOUBTFUL_AT = 0.2

#: The classes as the page states them.
SCALE = (f"✓ supported: support ≥ {SUPPORTED_AT:g}; ? doubtful: ≥ {DOUBTFUL_AT:g}; "
         f"✗ unsupported: below {DOUBTFUL_AT:g} or vetoed")


def support_class(support: Any) -> str:
    """``supported``, ``doubtful`` or ``unsupported`` for a claim's support (see the thresholds above).

    >>> [support_class(s) for s in (0.93, 0.5, 0.35, 0.2, 0.1, None, "x")]
    ['supported', 'supported', 'doubtful', 'doubtful', 'unsupported', 'unsupported', 'unsupported']
    """
    if not _number(support):
        return "unsupported"
    if support >= SUPPORTED_AT:
        return "supported"
    return "doubtful" if support >= DOUBTFUL_AT else "unsupported"


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _offset(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class Segment:
    """A piece ``[start, end)`` of a text, covered by the spans ``keys`` (in the order the spans were
    given); ``opens`` start here, ``closes`` end here."""

    start: int
    end: int
    keys: tuple[Hashable, ...]
    opens: tuple[Hashable, ...]
    closes: tuple[Hashable, ...]


@dataclass(frozen=True)
class Cut:
    """A text cut into :class:`Segment` s, with how many spans were ignored (``invalid``) and how
    many start beyond the display cut (``clipped``)."""

    segments: list[Segment]
    invalid: int
    clipped: int


def cut(text: str, spans: Iterable[tuple[Any, Any, Hashable, str | None]], clip: int | None = None) -> Cut:
    """The segments of ``text`` covered by ``spans`` (``(start, end, key, expected text or None)``).

    A span is ignored (counted ``invalid``) when its offsets are not integers with
    ``0 <= start < end <= len(text)``, or when its expected text is given and is not
    ``text[start:end]``. With ``clip`` (the page shows ``text[:clip]``) a span starting at or after it
    is dropped (counted ``clipped``) and one crossing it ends there. Overlapping spans split into
    segments covered by each of them; the parts of ``text`` no span covers have no segment.

    >>> c = cut("a <b> & c", [(2, 5, 1, "<b>"), (4, 7, 2, None), (0, 99, 3, None)])
    >>> [(s.start, s.end, s.keys, s.opens, s.closes) for s in c.segments], c.invalid
    ([(2, 4, (1,), (1,), ()), (4, 5, (1, 2), (2,), (1,)), (5, 7, (2,), (), (2,))], 1)
    """
    kept: list[tuple[int, int, Hashable]] = []
    invalid = clipped = 0
    n = len(text)
    for start, end, key, expected in spans:
        if not (_offset(start) and _offset(end) and 0 <= start < end <= n) \
                or (expected is not None and text[start:end] != expected):
            invalid += 1
            continue
        if clip and start >= clip:
            clipped += 1
            continue
        kept.append((start, min(end, clip) if clip else end, key))
    bounds = sorted({b for s, e, _ in kept for b in (s, e)})
    segments: list[Segment] = []
    for a, b in pairwise(bounds):
        covering = [(s, e, k) for s, e, k in kept if s <= a and b <= e]
        if not covering:
            continue
        keys = tuple(dict.fromkeys(k for _, _, k in covering))
        opens = tuple(dict.fromkeys(k for s, _, k in covering if s == a))
        closes = tuple(dict.fromkeys(k for _, e, k in covering if e == b))
        segments.append(Segment(a, b, keys, opens, closes))
    return Cut(segments, invalid, clipped)


def _encoded(text: str, c: Cut) -> list[list[Any]]:
    """``[[start, end, keys, opens, closes], ...]`` with offsets in the page's units."""
    points = sorted({p for s in c.segments for p in (s.start, s.end)})
    shown = dict(zip(points, display_offsets(text, points), strict=True))
    return [[shown[s.start], shown[s.end], list(s.keys), list(s.opens), list(s.closes)] for s in c.segments]


def has_claim_spans(details: Any) -> TypeGuard[dict[str, Any]]:
    """Whether ``details`` are a sentence-level support check's: claims with offsets in the answer."""
    claims = details.get("claims") if isinstance(details, dict) else None
    return isinstance(claims, list) and any(isinstance(c, dict) and "start" in c and "end" in c for c in claims)


def _own_text(claim: dict[str, Any]) -> list[str]:
    """``[the claim's text]`` when it is not the answer text it marks (mode=claims: the judge's own
    wording of one claim of a sentence), else ``[]``."""
    text = claim.get("claim")
    return [text] if "sentence" in claim and isinstance(text, str) else []


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def evidence_marks(metric: str, details: dict[str, Any], answer: str | None, contexts: Sequence[str | None],
                   clip: int | None) -> dict[str, Any] | None:
    """The page's claim and evidence marks for one sample, or None when the answer is not known.

    ``contexts``: each retrieved context's text in rank order (None for an id-only one); ``clip``: the
    page shows each text's first ``clip`` characters (None or 0: all). Shape::

        {"m": metric, "k": [[class, p_yes, support, veto, evidence spans, of them shown], ...]  (claim n: k[n-1]),
         "a": segments of the answer (keys: claim numbers; a sentence that is not a claim: its kind),
         "c": [[context index, segments (keys: claim numbers)], ...], "n": [notes on spans not shown]}

    where a segment is ``[start, end, keys, opens, closes]`` (offsets in the page's units).
    """
    if not answer:
        return None
    claims = [c if isinstance(c, dict) else {} for c in details.get("claims") or []]
    not_claims = details.get("not_claims")
    answer_spans: list[tuple[Any, Any, Hashable, str | None]] = []
    for n, c in enumerate(claims, 1):
        said = c.get("sentence", c.get("claim"))  # mode=claims: the answer sentence the claim was taken from
        answer_spans.append((c.get("start"), c.get("end"), n, said if isinstance(said, str) else None))
    for s in not_claims if isinstance(not_claims, list) else []:
        # mode=claims: the answer sentence the judge's text was taken from ("sentence"); none in a
        # sentence a checked claim comes from (or in a run older than that), then listed by kind only
        if isinstance(s, dict) and ("start" in s or "end" in s):
            said = s.get("sentence", s.get("text"))
            answer_spans.append((s.get("start"), s.get("end"), str(s.get("kind") or "not a claim"),
                                 said if isinstance(said, str) else None))
    in_answer = cut(answer, answer_spans, clip)
    with_text = [k for k, t in enumerate(contexts) if t and t.strip()]  # what ``context`` counts
    per_context: dict[int, list[tuple[Any, Any, Hashable, str | None]]] = {}
    recorded = [0] * len(claims)
    invalid = 0
    for n, c in enumerate(claims, 1):
        evidence = c.get("evidence")
        for e in evidence if isinstance(evidence, list) else []:
            recorded[n - 1] += 1
            k = e.get("context") if isinstance(e, dict) else None
            if not (_offset(k) and 0 <= k < len(with_text)):
                invalid += 1
                continue
            text = e.get("text")
            per_context.setdefault(with_text[k], []).append(
                (e.get("start"), e.get("end"), n, text if isinstance(text, str) else None))
    shown_spans = [0] * len(claims)
    encoded: list[list[Any]] = []
    clipped = 0
    for k in sorted(per_context):
        text = contexts[k] or ""
        c_cut = cut(text, per_context[k], clip)
        invalid += c_cut.invalid
        clipped += c_cut.clipped
        for s in c_cut.segments:
            for key in s.opens:
                if isinstance(key, int):
                    shown_spans[key - 1] += 1
        if c_cut.segments:
            encoded.append([k, _encoded(text, c_cut)])
    notes = []
    beyond = [f"{_plural(in_answer.clipped, 'sentence')} of the answer"] if in_answer.clipped else []
    beyond += [_plural(clipped, "evidence span")] if clipped else []
    if beyond:
        notes.append(f"{' and '.join(beyond)} beyond the {clip or 0:,}-character display cut: not marked")
    if in_answer.invalid or invalid:
        notes.append(f"{_plural(in_answer.invalid + invalid, 'span')} whose offsets do not fit the text "
                     "(outside it, or not where the recorded text is) are not marked")
    return {
        "m": metric,
        "k": [[support_class(c.get("support")), c.get("p_yes") if _number(c.get("p_yes")) else None,
               c.get("support") if _number(c.get("support")) else None, bool(c.get("veto")), recorded[i],
               shown_spans[i], *_own_text(c)] for i, c in enumerate(claims)],
        "a": _encoded(answer, in_answer),
        "c": encoded,
        "n": notes,
    }
