r"""Fact consistency: are the answer's numbers, names and negations in the contexts? (no model)

``lexical_faithfulness`` counts shared words, so an answer that reuses the contexts' words with
one number changed ("6 minutes" where the context says "8") scores 1.0. This metric checks the
facts that such swaps touch, each against the retrieved context texts, and multiplies the share
of facts found by the share of the answer's content words found:

.. math::

   F = \frac{\#\text{checks passed}}{\#\text{checks}} \ (F = 1 \text{ when there is no check}),
   \qquad
   P = \frac{|C_A \cap V|}{|C_A|}, \qquad \mathrm{score} = F \cdot P

where :math:`C_A` is the set of distinct content tokens of the whole answer and :math:`V` the
tokens of all context texts (tokens and stop words as in ``lexical_faithfulness``; contractions
are folded first: *don't* -> *do*, *can't* -> *can*, *won't* -> *will*, *world's* -> *world*). The checks:

**Numbers.** Every number in the answer: digits with optional thousands separators and decimals
(``6,400`` = ``6400``, ``9.58``) and a minus sign before them (``-196``, not the hyphen of
``2019-2020`` or ``COVID-19``), the words *two* ... *twelve*, *thirteen* ... *ninety-nine*
(*sixty*, *twenty-five*, *twenty five*), "X and a half" (*two and a half hours* = 2.5 hours) and
a duration in words (*an hour and a quarter* = 1.25 hours, *half an hour* and *half-hour* = 0.5,
*a quarter of an hour* = 0.25, *three-quarters of an hour* = 0.75, also of days, weeks, minutes,
months and years; :func:`spoken_numbers`); a list marker opening a line (``1.``, ``2)``, ``(3)``) and a citation
(``[1]``, ``[1, 3]``, ``[doc2]``, ``(source 1)``) are no numbers, nor their words names. The unit
is the token right
after it when that is a known unit (``%``, ``°C``, ``°F``, ``km``, ``kg``, ``minutes``,
``seconds``, ``years``, ``feet``...; plurals, short and spelled-out forms folded: *min* = *minute*,
*centimetres* = *cm*) or a currency sign
right before it (``$1,500``). A number passes when the contexts hold the same value with the
same unit, or the same value where either side has no unit, or the same amount in another unit
of its dimension (:data:`DIMENSIONS`: one, converted, rounds to the other at its written
decimals and is within 5% of it: ``six hours`` passes on ``360 minutes``, ``1.5 kg`` on ``1,500
g``, ``about 2 hours`` fails on ``90 minutes``). A number after a hedge (*about, around, roughly,
approximately, nearly, almost, some, circa, approx., ~*) also passes when the contexts hold, in its
unit or with no unit on either side, a value that rounds to it at its written decimals (``about
-196 °C`` on ``-195.8 °C``; unhedged, ``-196 °C`` fails there). After a near bound (*just, slightly, a
little, a bit* with *under, below, less than, fewer than, over, above, more than*) it passes on such
a value on the bound's side: ``just under 8%`` on ``7.8%`` but not on ``8.2%``. A share written as a fraction
(``half``, ``a third``, ``seven-tenths``; :func:`shares`) is one check, passing when the contexts
hold the same share or a percentage within 5 points (``roughly seven-tenths`` on ``71 percent``).
A number followed by *pounds*, *dollars*, *euros* or *pence* also passes on the
contexts' amount with the currency's sign (``six pounds`` on ``£6``, ``50 pence`` on ``£0.50``;
*pounds* stays a weight too). An amount in months passes on the same span in years and the
reverse, one converted rounding to the other at its written decimals and within 5% of it (``two
years`` on ``24 months``, not on ``18 months``). A time of day
(``8 a.m.``, ``20:00``, ``1 pm``, or said in words: ``half past four``, ``quarter to ten``,
``seven o'clock``, and ``half nine`` beside a range word; :func:`clock_times`) is one check, passing
when the contexts hold the same time in any form; a range's start with no am/pm takes its end's
when it comes earlier on a 12-hour clock (``6 to 7:30 pm`` is 18:00 to 19:30; in ``9 to 5 pm`` the
9 stays a number); a day part after a time gives its half of the day (``10:40 at night`` is 22:40,
``seven in the evening`` 19:00); a time with no am/pm or day part and an hour of 1 to 12 written
without a leading zero (``8:15``, ``half past four``) passes on the same time twelve hours on as
well, on either side (``half past four`` on ``16:30``; ``08:15`` is the 24-hour clock).
``9 November 1991`` is the two numbers 9 and 1991: dates are checked through their numbers and
their month name (a name).

**Names.** Maximal runs of capitalised tokens (or tokens with an inner capital or a digit mixed with
letters: *iOS*, *NaCl*, *X2*; a superscript is not a digit: *km²* is a unit) that are not stop
words, contractions folded first (*I'm*, *I've*, *I'd* are the stop word *I*). The first token of a
sentence is not a name (the capital marks the sentence), unless the sentence is a name alone (one
to six name tokens or numbers, not one reply word such as *Yes*, not ending in "!", "?" or ":":
*Delhi.*, *Arthur's Magazine*; :func:`name_alone`). A run passes when every one of its tokens
occurs in the contexts (case-insensitive, contractions and the possessive *'s* folded on both sides:
*Moon's* passes on a context that says *Moon*), or, for an acronym (one token of two to six
capitals, or a run of single capitals), when consecutive words of the contexts spell it by their
initials (*EU* on "European Union", *DOE* on "Department of Energy"; a filler such as *of* spells
a letter or is skipped; two letters need capitalised words), or when the contexts write it
dotted (*UK* on "U.K.", *U.S.* on "US"); a month or weekday and its abbreviations are one word
(*Jan* passes on "January"). An ordinal in digits (*2nd*) is no name; its number also passes on
the word (*second*, *twenty-first*). A number followed by *thousand*, *million*, *billion* or
*trillion* is also that amount: *1.5 million dollars* passes on "1,500,000 dollars", and the
reverse.

**Negation.** For each answer clause (a sentence cut at ``;`` and ``:``, the scope of a
negation), the context clause sharing the most of its content tokens (the first on ties); when
they share at least half of the answer clause's content tokens, the check passes when both have
the same parity of negation cues (*not, no, never, none, nothing, neither, nor, cannot,
without*, and *n't*). "X is not stable" against "X is guaranteed to be stable" fails.

``P`` catches what the checks cannot name: sentences built from words the contexts never use.

**Abstentions.** A sentence that says only what the contexts do not hold, or that the answer is not
known (:func:`is_abstention`: "The passages don't say how long it takes.", "I couldn't find the 2019
figure in the sources."; the forms and their guards are the check-worthiness rules of
:mod:`ragmeter.metrics.generation._checkworthy`, which ``faithfulness`` uses), states nothing a context
could support or contradict: it is left out of every check and of ``P`` (:func:`without_abstentions`),
so a name or number in it is not checked. One right after a bare "Yes." or "No." is kept (the
reply's verdict asserts something). An answer that only abstains scores 1 (``F = P = 1``).

Edge cases: no answer (None) -> undefined; an answer with no content token -> undefined; an
answer that only abstains -> 1; no contexts retrieved -> 0; contexts with ids only (no text) ->
undefined. Blind to entities swapped between roles when both occur in the contexts ("Croatia beat
France" against "France beat Croatia"), to paraphrased negation ("sold separately" against "isn't
included" fails) and to amounts the answer works out ("four years after" 1919 and 1923; "a third
of 64" written as 21 fails).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...registry import LabelCheck
from ...types import Sample
from .base import NO_ANSWER, Outcome, register_lexical
from .lexical_faithfulness import _TOKEN, STOPWORDS, content_tokens, split_sentences

_CONTRACTION = re.compile(r"(?<=can)['’]t\b|(?<!ca)n['’]t\b|['’](?:s|re|ve|ll|d|m)\b", re.IGNORECASE)
_WONT = re.compile(r"\bwon['’]t\b", re.IGNORECASE)
_CLAUSE = re.compile(r"\s*[;:]\s+")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|neither|nor|cannot|without)\b|n['’]t\b", re.IGNORECASE)
#: a minus sign that starts a number (not the hyphen of "2019-2020" or "COVID-19"), group ``sign``
SIGN_PATTERN = r"(?:(?<![\w.,])(?P<sign>[-−]))?"
#: a number in digits, with thousands separators and decimals ("6,400", "9.58")
DIGITS_PATTERN = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUMBER = re.compile(
    r"(?P<cur>[$€£¥])?\s?" + SIGN_PATTERN + r"(?<![\w.,])(?P<num>" + DIGITS_PATTERN + r")(?![\d])"
    r"(?:\s?(?P<unit>%|°\s?[CF]\b|[A-Za-zµ]+))?"
)
#: the numbers read when written as words, with their digits
WORD_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split()) if i >= 2}
#: the number words one to twelve with their values ("one" only where it cannot be the pronoun)
_SMALL = {"one": 1} | {w: int(d) for w, d in WORD_NUMBERS.items()}
_WORD_NUMBER = re.compile(r"\b(" + "|".join(WORD_NUMBERS) + r")\b(?:\s+(?P<unit>[A-Za-z]+))?", re.IGNORECASE)
_UNITS = {
    "%": "%", "percent": "%", "°c": "°c", "°f": "°f", "c": "°c", "f": "°f",
    "km": "km", "kilometre": "km", "kilometer": "km", "m": "m", "metre": "m", "meter": "m", "cm": "cm",
    "mm": "mm", "mile": "mile", "kg": "kg", "kilogram": "kg", "g": "g", "gram": "g", "lb": "lb",
    "pound": "lb", "l": "l", "litre": "l", "liter": "l", "ml": "ml", "kpa": "kpa",
    "ms": "ms", "s": "second", "sec": "second", "second": "second", "min": "minute", "minute": "minute",
    "h": "hour", "hr": "hour", "hour": "hour", "day": "day", "week": "week", "month": "month",
    "year": "year", "visit": "visit", "cup": "cup", "gb": "gb", "mb": "mb", "kb": "kb", "tb": "tb",
    "centimetre": "cm", "centimeter": "cm", "millimetre": "mm", "millimeter": "mm", "millilitre": "ml",
    "milliliter": "ml", "inch": "inch", "inches": "inch", "foot": "foot", "feet": "foot", "ft": "foot",
    "yard": "yard", "tonne": "tonne",
}
_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy"}
_NAME_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
#: the digits that make a token with letters a name ("X2"); a superscript ("km²") marks a unit
_DIGITS = frozenset("0123456789")


#: a list marker opening the text or a line: "1.", "2)", "(3)" (one or two digits, then a space or the end)
LIST_MARKER = re.compile(r"(?m)^[ \t]*\(?\d{1,2}[.)](?=\s|$)")
_SOURCE_WORD = r"(?:[A-Za-z]{1,12}\s*)?"
#: a citation of a retrieved text: "[1]", "[1, 3]", "[2-4]", "[^1]", "[doc1]", "[Source 2]", "【1】",
#: "(source 1)", "(Document 2)"
CITATION = re.compile(r"\[\^?\s*" + _SOURCE_WORD + r"\d{1,3}(?:\s*[,;–-]\s*" + _SOURCE_WORD + r"\d{1,3})*\s*\]"
                      r"|【\d{1,3}】|\((?:source|doc|document|context|passage|ref|reference)\s*\d{1,3}\)",
                      re.IGNORECASE)


def without_markup(text: str) -> str:
    """``text`` with each :data:`LIST_MARKER` and :data:`CITATION` blanked (spaces, so offsets
    stay): the numbers of the answer's own list and of its citations are not facts ("1. Paris is
    ... [2]" checks neither 1 nor 2)."""
    return CITATION.sub(lambda m: " " * len(m.group(0)), LIST_MARKER.sub(lambda m: " " * len(m.group(0)), text))


def decimals(x: str) -> int:
    """How many decimals a number is written with ("3.50" -> 2)."""
    return len(x.partition(".")[2])


def equal(a: str, b: str) -> bool:
    """Whether two numbers (as :func:`numbers` writes them) are equal, one the other rounded to its decimals."""
    fa, fb = float(a), float(b)
    return fa == fb or round(fb, decimals(a)) == fa or round(fa, decimals(b)) == fb


#: a time of day: "20:00", "9:30 am", "3 pm", "11.15 p.m." (groups: 24-hour ``h``/``mm`` with an optional
#: ``ap``, or 12-hour ``h12``/``mm12`` before ``ap12``)
_TIME = re.compile(r"(?<![\w.:])(?:(?P<h>[01]?\d|2[0-3]):(?P<mm>[0-5]\d)(?![\d:])(?:\s?(?P<ap>[ap])(?:\.m\.|m\b))?"
                   r"|(?P<h12>1[0-2]|0?[1-9])(?:[.:](?P<mm12>[0-5]\d))?\s?(?P<ap12>[ap])(?:\.m\.|m\b))", re.IGNORECASE)
#: the unit of a time of day (its value: minutes after midnight)
TIME_OF_DAY = "time of day"


#: the start of a range of times that shares the am/pm of its end: "6 to" in "6 to 7:30 pm", "9.30-"
_RANGE_START = re.compile(r"(?<![\w.:])(?P<t>(?P<h>1[0-2]|0?[1-9])(?:[.:](?P<mm>[0-5]\d))?)\s*(?:-|–|—|\bto|\buntil"
                          r"|\btill|\band)\s*$", re.IGNORECASE)


def times_of_day(text: str) -> list[tuple[int, int, int]]:
    """``(start, end, minutes after midnight)`` of each time of day in ``text``: "H:MM" or "HH:MM"
    (hours 0-23), optionally with am/pm, or "H am"/"H pm" (also "H.MM pm", "a.m."; hours 1-12;
    12 am is midnight, 12 pm noon). A range whose start has no am/pm takes its end's when the start
    comes earlier on a 12-hour clock: "6 to 7:30 pm" is 18:00 to 19:30 and "between 9 and 11 am"
    9:00 to 11:00; "9 to 5 pm" leaves the 9 a bare number. A day part after a time gives its half
    of the day ("10:40 at night" is 22:40, "seven in the evening" 19:00); a time said in words
    ("half past four", "quarter to ten") is one only with a day part after it, as nothing else
    tells its half of the day (:func:`clock_times` reads them all)."""
    return [(a, b, minutes) for a, b, minutes, fixed, spoken in clock_times(text) if fixed or not spoken]


#: an hour of a 12-hour clock in digits or words
_HOUR = r"(?:1[0-2]|0?[1-9]|" + "|".join(sorted(_SMALL, key=len, reverse=True)) + r")"
#: a time said in words: "half past four", "quarter to ten", "seven o'clock", "half nine" (British:
#: 9:30, read only beside a range word), or an hour before a day part ("seven in the evening")
_SPOKEN_TIME = re.compile(
    r"(?<![\w-])(?:(?:a\s+)?(?P<part>half|quarter)\s+(?P<rel>past|to)\s+(?P<x>" + _HOUR + r")"
    r"|(?P<xo>" + _HOUR + r")\s*o['’]\s?clock"
    r"|half\s+(?P<xh>" + _HOUR + r")(?=\s*(?:[-–—]|to\b|until\b|till\b|and\b|,|\.|;|$))"
    r"|(?P<xd>" + _HOUR + r")(?=\s+(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+night)\b))(?![\w-])",
    re.IGNORECASE)
#: a day part after a time: "in the morning", "in the afternoon", "in the evening", "at night"
_DAY_PART = re.compile(r"\s+(?:in\s+the\s+(?P<dp>morning|afternoon|evening)|at\s+night)\b", re.IGNORECASE)
#: before or after "half X": a range word, so the X is an hour ("half nine to half five")
_RANGE_BEFORE = re.compile(r"(?:[-–—]|\bto|\buntil|\btill|\band)\s*$", re.IGNORECASE)
_RANGE_AFTER = re.compile(r"\s*(?:[-–—]|to\b|until\b|till\b|and\b)", re.IGNORECASE)


def _hour(word: str) -> int:
    return int(word) if word.isdigit() else _SMALL[word.casefold()]


def _with_day_part(text: str, end: int, h: int) -> tuple[int, int] | None:
    """The hour ``h`` (1-12) in the half of the day named right after ``end`` ("at night": 6-11 pm,
    12 midnight, 1-5 am), with the end of that day part; None when none is named."""
    d = _DAY_PART.match(text, end)
    if d is None:
        return None
    part = (d.group("dp") or "night").casefold()
    if part == "morning":
        return h % 12, d.end()
    if part == "night" and (h == 12 or h < 6):
        return h % 12, d.end()
    return h % 12 + 12, d.end()


def clock_times(text: str) -> list[tuple[int, int, int, bool, bool]]:
    """``(start, end, minutes after midnight, fixed, spoken)`` of each time of day in ``text``: the
    times of :func:`times_of_day` and those said in words (``spoken``: "half past four" is 4:30,
    "quarter to ten" 9:45, "seven o'clock" 7:00, "half nine" 9:30 beside a range word). ``fixed``
    is whether its half of the day is known: an am/pm, a day part after it ("in the evening", "at
    night"), or an hour of 0, 13-23 or written with a leading zero ("08:15"); otherwise the time
    is read on the morning's clock and stands as well for the time twelve hours on."""
    out: list[tuple[int, int, int, bool, bool]] = []
    for m in _TIME.finditer(text):
        hour, minute, ap = ((m.group("h"), m.group("mm"), m.group("ap")) if m.group("h") is not None
                            else (m.group("h12"), m.group("mm12"), m.group("ap12")))
        h, mm = int(hour), int(minute or 0)
        end, fixed = m.end(), bool(ap) or not 1 <= h <= 12 or hour.startswith("0")
        if ap and h <= 12:
            half = 12 if ap.casefold() == "p" else 0
            r = _RANGE_START.search(text, 0, m.start())
            if r is not None and (h % 12, mm) > (start := (int(r.group("h")) % 12, int(r.group("mm") or 0))):
                if out and out[-1][0] == r.start("t"):  # "6:00 to 7:30 pm": the start was read as 06:00
                    out.pop()
                out.append((r.start("t"), r.end("t"), (start[0] + half) * 60 + start[1], True, False))
            h = h % 12 + half
        elif not ap and 1 <= h <= 12 and (parted := _with_day_part(text, end, h)) is not None:
            (h, end), fixed = parted, True
        out.append((m.start(), end, h * 60 + mm, fixed, False))
    for m in _SPOKEN_TIME.finditer(text):
        if any(a <= m.start() < b for a, b, *_ in out):
            continue
        if m.group("xh") and not _RANGE_BEFORE.search(text, 0, m.start()) and not _RANGE_AFTER.match(text, m.end()):
            continue  # "half five" read only beside a range word
        if m.group("x"):
            h = _hour(m.group("x"))
            mm = 30 if m.group("part").casefold() == "half" else 15
            if m.group("rel").casefold() == "to":
                h, mm = (h - 2) % 12 + 1, 60 - mm
        else:
            h, mm = _hour(m.group("xo") or m.group("xh") or m.group("xd")), 30 if m.group("xh") else 0
        parted = _with_day_part(text, m.end(), h)
        hh, end = parted if parted is not None else (h % 12, m.end())
        out.append((m.start(), end, hh * 60 + mm, parted is not None, True))
    return sorted(out)


#: units that measure one dimension, with their size in the dimension's smallest unit: numbers in
#: them are compared with each other ("15 metres" against "15 centimetres"); month and year are left
#: out, as "year" also stands for a calendar year
DIMENSIONS: dict[str, tuple[str, float]] = {
    "mm": ("length", 1), "cm": ("length", 10), "m": ("length", 1e3), "km": ("length", 1e6),
    "mile": ("length", 1_609_344), "inch": ("length", 25.4), "foot": ("length", 304.8), "yard": ("length", 914.4),
    "g": ("mass", 1), "kg": ("mass", 1e3), "lb": ("mass", 453.59237), "tonne": ("mass", 1e6),
    "ml": ("volume", 1), "l": ("volume", 1e3),
    "ms": ("duration", 1), "second": ("duration", 1e3), "minute": ("duration", 6e4),
    "hour": ("duration", 3.6e6), "day": ("duration", 8.64e7), "week": ("duration", 6.048e8),
    "kb": ("data", 1), "mb": ("data", 1e3), "gb": ("data", 1e6), "tb": ("data", 1e9),
}


#: how far apart (a share of the larger) two amounts in different units of a dimension may be for a
#: number check to pass: "1 mile" passes on "1.6 km" (0.6% apart), "about 2 hours" fails on "90 minutes"
AMOUNT_WITHIN = 0.05


def measure(unit: str) -> str:
    """What a unit measures: its dimension (:data:`DIMENSIONS`), else the unit itself."""
    return DIMENSIONS[unit][0] if unit in DIMENSIONS else unit


def same_amount(a: str, unit_a: str, b: str, unit_b: str, within: float | None = None,
                sizes: Mapping[str, tuple[str, float]] = DIMENSIONS) -> bool:
    """Whether ``a`` in ``unit_a`` and ``b`` in ``unit_b`` (units of one :func:`measure`) are one
    amount: :func:`equal` in one unit; across the units of a dimension (:data:`DIMENSIONS`), when
    one, converted to the other's unit, rounds to it at its written decimals ("1.6 km" and "1
    mile"), and, with ``within``, differs from it by at most that share of the larger ("2 hours" and
    "90 minutes" round to each other, 25% apart). ``sizes`` gives each unit's dimension and size
    (:data:`DIMENSIONS`, or the number checks' :data:`SPANS`)."""
    if unit_a == unit_b:
        return equal(a, b)
    size_a, size_b = sizes[unit_a][1], sizes[unit_b][1]

    def close_to(x: str, y_there: float) -> bool:  # y, converted to x's unit, rounds to x
        near = within is None or abs(y_there - float(x)) <= within * max(abs(y_there), abs(float(x)))
        return near and rounds_to(y_there, x)

    return close_to(a, float(b) * size_b / size_a) or close_to(b, float(a) * size_a / size_b)


def rounds_to(there: float, here: str) -> bool:
    """Whether ``there`` rounded to ``here``'s written decimals is ``here`` (-195.8 -> "-196")."""
    return abs(round(there, decimals(here)) - float(here)) <= 1e-9 * max(1.0, abs(float(here)))


#: a hedged round number passes on a context value within this share of it (:func:`rounds_to_place`)
ROUND_WITHIN = 0.10


def rounds_to_place(there: float, here: str) -> bool:
    """Whether ``here``, a whole number with trailing zeros ("40", "2,000"), is ``there`` rounded at
    the place of its last non-zero digit and within :data:`ROUND_WITHIN` of it (41.2 -> "40",
    1986 -> "2,000"; not 140 -> "100")."""
    digits = here.replace(",", "").lstrip("-−")
    if not digits.isdigit() or not digits.endswith("0") or not digits.strip("0"):
        return False
    value, zeros = float(digits), len(digits) - len(digits.rstrip("0"))
    value = -value if here.startswith(("-", "−")) else value
    return round(there, -zeros) == value and abs(there - value) <= ROUND_WITHIN * abs(value)


#: a share written as a fraction: "half", "a third", "two-thirds", "three quarters", "nine tenths"
#: (not "half an hour", "half a million", "half past", "half-price", "a quarter of an hour", "quarter past")
#: one to nine
_ONES = {w: v for w, v in _SMALL.items() if v < 10}
_NUMERATORS = {"a": 1} | _ONES
_DENOMINATORS = {"third": 3, "quarter": 4, "fifth": 5, "tenth": 10}
_FRACTION = re.compile(r"(?<![\w-])(?:(?P<num>" + "|".join(_NUMERATORS) + r")[\s-]+"
                       r"(?P<den>" + "|".join(f"{d}s?" for d in _DENOMINATORS) + r")|(?P<half>half))\b"
                       r"(?![\s-]+(?:an?\b|past\b|to\b|of\s+an?\s+hour))(?!-)", re.IGNORECASE)
#: the unit of a share written as a fraction (its value: a percentage); compared with percentages
SHARE = "share"
#: how many percentage points a share written as a fraction may be from a percentage and be the same
SHARE_WITHIN = 5.0


def shares(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, percentage)`` of each share written as a fraction in ``text`` (the percentage
    to one decimal: "a third" -> "33.3"); "and a half" and a numerator not below its denominator
    are not shares."""
    out = []
    for m in _FRACTION.finditer(text):
        if m.group("half"):
            if re.search(r"\band\s+(?:a|one)[\s-]+$", text[:m.start()], re.IGNORECASE):
                continue
            num, den = 1, 2
        else:
            num = _NUMERATORS[m.group("num").casefold()]
            den = _DENOMINATORS[m.group("den").casefold().rstrip("s")]
            if num >= den:
                continue
        out.append((m.start(), m.end(), f"{100 * num / den:.1f}".rstrip("0").rstrip(".")))
    return out


def _unit(word: str | None) -> str | None:
    if not word:
        return None
    w = word.casefold().replace(" ", "")
    if w in _UNITS:
        return _UNITS[w]
    if w.endswith("s") and w[:-1] in _UNITS:
        return _UNITS[w[:-1]]
    return None


def numbers(text: str) -> list[tuple[str, str | None, str]]:
    """``(value, unit, as written)`` for every number in ``text`` (the rule in the module docs)."""
    return [(value, unit, written) for value, unit, written, _ in _numbers_at(text)]


def _numbers_at(text: str) -> list[tuple[str, str | None, str, int]]:
    """:func:`numbers`, each with the offset where its digits or word start (list markers are no
    numbers, nor are citations: :func:`without_markup`)."""
    text = without_markup(text)
    out = []
    for m in _NUMBER.finditer(text):
        value = m.group("num").replace(",", "")
        if "." in value:
            value = value.rstrip("0").rstrip(".")
        sign = "-" if m.group("sign") else ""
        word_unit = _unit(m.group("unit"))
        unit = _CURRENCY[m.group("cur")] if m.group("cur") else word_unit
        written = (m.group("cur") or "") + sign + m.group("num") + (f" {m.group('unit')}" if word_unit else "")
        out.append((sign + value if value.strip("0.") else value, unit, written, m.start("num")))
    for m in _WORD_NUMBER.finditer(text):
        word_unit = _unit(m.group("unit"))
        written = m.group(1) + (f" {m.group('unit')}" if word_unit else "")
        out.append((WORD_NUMBERS[m.group(1).casefold()], word_unit, written, m.start(1)))
    return out


#: number words from thirteen to ninety-nine ("eighteen", "sixty", "twenty-five", "twenty five")
_TEENS = {w: 13 + i for i, w in enumerate(
    "thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 20 + 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_WORD_PATTERN = (r"(?:(?P<tens>" + "|".join(_TENS) + r")(?:[-\s](?P<ones>" + "|".join(_ONES) + r"))?"
                 r"|(?P<teen>" + "|".join(_TEENS) + r"))\b")
_LARGE_WORD_NUMBER = re.compile(r"\b(?P<word>" + _WORD_PATTERN + r")(?:\s+(?P<unit>[A-Za-z]+))?", re.IGNORECASE)
#: "X and a half": X in digits or words ("one" included), then the unit
_AND_A_HALF = re.compile(r"(?<![\w.,])(?P<x>\d+|" + "|".join(_SMALL) + r"|"
                         + _WORD_PATTERN.replace("?P<", "?P<x_") + r")\s+and\s+a\s+(?P<half>half)\b"
                         r"(?:\s+(?P<unit>[A-Za-z]+))?", re.IGNORECASE)
#: a word that marks the number after it as rounded ("about -196 °C", "roughly 9.6 seconds", "~40 km")
_HEDGE = re.compile(r"(?:\b(?:about|around|roughly|approximately|nearly|almost|some|circa|approx\.?)\s+|~\s*)"
                    r"[$€£¥]?\s?[-−]?$", re.IGNORECASE)
#: a word pair that marks the number after it as a near bound: "just under 8%" (the value is below it
#: and rounds to it), "slightly more than 40"
_NEAR_BOUND = re.compile(r"\b(?:just|slightly|a\s+little|a\s+bit)\s+(?:(?P<under>under|below|less\s+than|fewer\s+than)"
                         r"|over|above|more\s+than)\s+[$€£¥]?\s?[-−]?$", re.IGNORECASE)


def _word_value(m: re.Match[str], prefix: str = "") -> int:
    """The value of a :data:`_WORD_PATTERN` match (its groups named with ``prefix``)."""
    if m.group(prefix + "teen"):
        return _TEENS[m.group(prefix + "teen").casefold()]
    ones = m.group(prefix + "ones")
    return _TENS[m.group(prefix + "tens").casefold()] + (_ONES[ones.casefold()] if ones else 0)


#: a duration said in words: "an hour and a half", "a day and a quarter", "half an hour", "half-hour",
#: "a quarter of an hour", "three-quarters of an hour"
_DURATION_UNIT = r"(?:hour|day|week|minute|month|year)"
_SPOKEN_DURATION = re.compile(
    r"(?<![\w-])(?:(?:an?|one)\s+(?P<u1>" + _DURATION_UNIT + r")\s+and\s+a\s+(?P<f1>half|quarter)"
    r"|half\s+an?\s+(?P<u2>" + _DURATION_UNIT + r")|half[-\s](?P<u3>hour|day)"
    r"|(?:a\s+)?quarter\s+of\s+an?\s+(?P<u4>" + _DURATION_UNIT + r")"
    r"|three[-\s]quarters\s+of\s+an?\s+(?P<u5>" + _DURATION_UNIT + r"))(?![\w-])", re.IGNORECASE)
#: the amount of each :data:`_SPOKEN_DURATION` form, by the group holding its unit
_DURATION_AMOUNT = {"u2": "0.5", "u3": "0.5", "u4": "0.25", "u5": "0.75"}


def spoken_numbers(text: str) -> list[tuple[int, int, str, str | None, str]]:
    """``(start, end, value, unit, as written)`` of the amounts ``text`` writes as people say them,
    which :func:`numbers` does not read whole: a duration in words ("an hour and a quarter" ->
    1.25, hour; "half an hour" -> 0.5, hour; "three-quarters of an hour" -> 0.75, hour), "X and a
    half" (X.5: "two and a half hours" -> 2.5, hour) and the number words from thirteen to
    ninety-nine ("sixty years" -> 60, year)."""
    out: list[tuple[int, int, str, str | None, str]] = []
    for m in _SPOKEN_DURATION.finditer(text):
        group = next(g for g in ("u1", "u2", "u3", "u4", "u5") if m.group(g))
        value = (("1.5" if m.group("f1").casefold() == "half" else "1.25") if group == "u1"
                 else _DURATION_AMOUNT[group])
        out.append((m.start(), m.end(), value, _unit(m.group(group)), m.group(0)))
    for m in _AND_A_HALF.finditer(text):
        if any(a <= m.start() < b for a, b, *_ in out):
            continue
        x = m.group("x").casefold()
        whole = int(x) if x.isdigit() else _SMALL[x] if x in _SMALL else _word_value(m, "x_")
        unit = _unit(m.group("unit"))
        end = m.end() if unit else m.end("half")
        out.append((m.start(), end, f"{whole}.5", unit, text[m.start():end]))
    for m in _LARGE_WORD_NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b, *_ in out):
            continue
        unit = _unit(m.group("unit"))
        end = m.end() if unit else m.end("word")
        out.append((m.start(), end, str(_word_value(m)), unit, text[m.start():end]))
    return out


def _number_checks(answer: str, joined: str) -> list[dict[str, Any]]:
    """The number checks of ``answer`` against the contexts' text ``joined`` (the rule in the module
    docs): each time of day, each amount written as people say it (:func:`spoken_numbers`), each
    share written as a fraction, then each other number."""
    ctx_found = [(_unpadded(v), u, w, at) for v, u, w, at in _numbers_at(joined)]
    ctx_numbers = {(v, u) for v, u, _, _ in ctx_found} | {(v, u) for _, _, v, u, _ in spoken_numbers(joined)}
    ctx_values = {v for v, _ in ctx_numbers}
    ctx_unitless = {v for v, u in ctx_numbers if u is None}
    ctx_clock = clock_times(joined)
    ctx_times = {minutes for _, _, minutes, _, _ in ctx_clock}
    ctx_loose = {minutes % 720 for _, _, minutes, fixed, _ in ctx_clock if not fixed}
    ctx_half_day = {minutes % 720 for minutes in ctx_times}  # on a 12-hour clock
    ctx_shares = {pct for _, _, pct in shares(joined)}
    ctx_ordinals = ordinal_words(joined)
    ctx_scaled = [(x, u) for v, u, _, at in ctx_found if (x := scaled_value(joined, v, at)) is not None]
    ctx_amounts = [(float(v), u) for v, u in ctx_numbers] + ctx_scaled
    ctx_percents = [float(v) for v, u in ctx_numbers if u == "%"]
    times = clock_times(answer)
    checks = [{"kind": "number", "text": answer[a:b].strip(),
               "passed": minutes in ctx_times or minutes % 720 in (ctx_half_day if not fixed else ctx_loose)}
              for a, b, minutes, fixed, _ in times]
    taken = [(a, b) for a, b, *_ in times]
    mine = [n for n in spoken_numbers(answer) if not any(x <= n[0] < y for x, y in taken)]
    read = taken + [(n[0], n[1]) for n in mine]
    fractions = [f for f in shares(answer) if not any(x <= f[0] < y or f[0] <= x < f[1] for x, y in read)]
    checks += [{"kind": "number", "text": answer[a:b].strip(),
                "passed": pct in ctx_shares or any(abs(float(pct) - p) <= SHARE_WITHIN for p in ctx_percents)}
               for a, b, pct in fractions]
    taken += [(a, b) for a, b, _ in fractions]
    found = [(value, unit, written, a) for a, b, value, unit, written in mine]
    taken += [(a, b) for a, b, *_ in mine]
    found += [(_unpadded(v), u, w, at) for v, u, w, at in _numbers_at(answer) if not any(a <= at < b for a, b in taken)]
    for value, unit, written, at in sorted(found, key=lambda n: n[3]):
        hedged = _HEDGE.search(answer, 0, at) is not None
        bound = _NEAR_BOUND.search(answer, 0, at)
        money = _MONEY.match(answer, at)
        ok = ((value, unit) in ctx_numbers or (unit is None and value in ctx_values) or value in ctx_unitless
              or (unit in DIMENSIONS and any(u != unit and u in DIMENSIONS and measure(u) == measure(unit)
                                             and same_amount(value, unit, v, u, AMOUNT_WITHIN)
                                             for v, u in ctx_numbers))
              or (unit in SPANS and any(u in SPANS and u != unit
                                        and same_amount(value, unit, v, u, AMOUNT_WITHIN, SPANS)
                                        for v, u in ctx_numbers))
              or (money is not None and _money_found(value, money.group("cur"), ctx_numbers))
              or (hedged and any(_rounds_near(v, u, value, unit) for v, u in ctx_numbers))
              or (bound is not None and any(_rounds_near(v, u, value, unit)
                                            and (float(v) < float(value)) == bool(bound.group("under"))
                                            for v, u in ctx_numbers))
              or (_ORDINAL.match(answer, at) is not None and float(value) in ctx_ordinals)
              or _scaled_match(scaled_value(answer, value, at), float(value), unit, ctx_amounts, ctx_scaled))
        checks.append({"kind": "number", "text": written, "passed": ok})
    return checks


#: spans of the calendar, in months: the number checks compare them with each other as the units of
#: a dimension (:func:`same_amount`: "two years" on "24 months"); the evidence veto does not, as a
#: bare 1000-2100 is a calendar year there
SPANS: dict[str, tuple[str, float]] = {"month": ("span", 1), "year": ("span", 12)}


#: a number (in digits or words) followed by a currency's name: "six pounds", "14 pounds", "50 pence"
_MONEY = re.compile(r"(?:[\d.,]+|[A-Za-z]+(?:[-\s][A-Za-z]+)?)\s+(?P<cur>pounds?|dollars?|euros?|pence)\b",
                    re.IGNORECASE)
#: the currency a currency's name stands for, and how many of its units one of the named is worth
_MONEY_NAMES = {"pound": ("gbp", 1.0), "dollar": ("usd", 1.0), "euro": ("eur", 1.0), "pence": ("gbp", 0.01)}


def _money_found(value: str, name: str, ctx_numbers: set[tuple[str, str | None]]) -> bool:
    """Whether the contexts hold ``value`` of the currency ``name`` ("pounds", "pence") as an
    amount with its symbol ("six pounds" on "£6", "50 pence" on "£0.50")."""
    cur, worth = _MONEY_NAMES[name.casefold().removesuffix("s")]
    amount = float(value) * worth
    return any(u == cur and abs(float(v) - amount) <= 1e-9 * max(1.0, amount) for v, u in ctx_numbers)


def _rounds_near(there: str, there_unit: str | None, here: str, unit: str | None) -> bool:
    """Whether the context's ``there`` (in ``there_unit``) is a value the answer's hedged ``here``
    (in ``unit``) may stand for: one unit, or no unit on either side, and ``there`` rounds to
    ``here`` at its written decimals (:func:`rounds_to`) or at its last non-zero digit
    (:func:`rounds_to_place`)."""
    return ((there_unit == unit or there_unit is None or unit is None)
            and (rounds_to(float(there), here) or rounds_to_place(float(there), here)))


def _unpadded(value: str) -> str:
    """A whole number without its leading zeros ("02" -> "2"); any other value as it is."""
    return (value.lstrip("0") or "0") if value.isdigit() else value


def _scaled_match(scaled: float | None, value: float, unit: str | None, ctx_amounts: list[tuple[float, str | None]],
                  ctx_scaled: list[tuple[float, str | None]]) -> bool:
    """Whether a number with a scale word is, by its scaled value, one of the contexts' amounts
    (as written or scaled), or a number without one is one of their scaled amounts; in its unit or
    with no unit on either side."""
    mine, theirs = (value, ctx_scaled) if scaled is None else (scaled, ctx_amounts)
    return any(abs(mine - x) <= 1e-9 * max(1.0, abs(x)) and (u == unit or u is None or unit is None) for x, u in theirs)



def _is_name(token: str) -> bool:
    if _plain(token).casefold() in STOPWORDS:  # "I'm", "I've", "I'd", "I'll": the pronoun "I"
        return False
    if token[0].isupper():
        return True
    return any(c.isupper() for c in token[1:]) or (any(c in _DIGITS for c in token) and any(c.isalpha() for c in token))


def name_tokens(sentence: str) -> list[tuple[int, re.Match[str]]]:
    """``(token index, match)`` of each name token of one sentence, its first token excepted (the
    rule in the module docs)."""
    return [(i, m) for i, m in enumerate(_NAME_TOKEN.finditer(sentence)) if i > 0 and _is_name(m.group(0))]


def names(sentence: str) -> list[str]:
    """Runs of name tokens in one sentence, its first token excepted (the rule in the module docs):
    :func:`name_tokens` with consecutive token indices joined by a space."""
    runs: list[list[str]] = []
    last = -2
    for i, m in name_tokens(sentence):
        if i == last + 1:
            runs[-1].append(m.group(0))
        else:
            runs.append([m.group(0)])
        last = i
    return [" ".join(r) for r in runs]


def _plain(text: str) -> str:
    """``text`` with contractions folded: *won't* -> *will*, *can't* -> *can*, *don't* -> *do*,
    *world's* -> *world*."""
    return _CONTRACTION.sub("", _WONT.sub("will", text))


def clauses(text: str) -> list[str]:
    """Sentences (the ``lexical_faithfulness`` rule) cut further at ``;`` and ``:``: the scope
    of a negation."""
    return [c for s in split_sentences(text) for c in _CLAUSE.split(s) if c.strip()]


def _content(text: str) -> list[str]:
    text = _plain(text).casefold()
    return list(dict.fromkeys(t for t in _TOKEN.findall(text) if t not in STOPWORDS))


def _negations(text: str) -> int:
    return len(_NEGATION.findall(text))


#: words an acronym may take a letter from or skip ("Department of Energy": DOE or DE)
_ACRONYM_FILLERS = frozenset("of and the for in on to a".split())
_ACRONYM = re.compile(r"[A-Z]{2,6}")
_WORD = re.compile(r"[^\W\d_]+")
#: an ordinal in digits: "2nd", "21st", "19th"
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)\b", re.IGNORECASE)
_ORDINAL_ONES = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                 "eighth": 8, "ninth": 9}
_ORDINAL_WORDS = {**_ORDINAL_ONES, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
                  "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
                  **{w[:-1] + "ieth": v for w, v in _TENS.items()}}
_ORDINAL_WORD = re.compile(r"\b(?:(?P<tens>" + "|".join(_TENS) + r")[-\s](?P<ones>" + "|".join(_ORDINAL_ONES) + r")"
                           r"|(?P<word>" + "|".join(_ORDINAL_WORDS) + r"))\b", re.IGNORECASE)


def ordinal_words(text: str) -> set[int]:
    """The values of the ordinals ``text`` writes as words, first to ninety-ninth ("twenty-first" -> 21)."""
    out = set()
    for m in _ORDINAL_WORD.finditer(text):
        if m.group("word"):
            out.add(_ORDINAL_WORDS[m.group("word").casefold()])
        else:
            out.add(_TENS[m.group("tens").casefold()] + _ORDINAL_ONES[m.group("ones").casefold()])
    return out


def acronym_letters(run: str) -> str | None:
    """The letters of a name run that is an acronym: one token of two to six capitals ("EU", "NASA")
    or a run of single capitals ("U S", as "U.S." is read); else None."""
    tokens = run.split()
    if len(tokens) == 1 and _ACRONYM.fullmatch(tokens[0]):
        return tokens[0]
    if len(tokens) > 1 and all(len(t) == 1 and t.isupper() for t in tokens):
        return "".join(tokens)
    return None


def spelled_out(letters: str, words: list[str]) -> bool:
    """Whether consecutive ``words`` of the contexts spell ``letters`` by their initials, in order,
    starting on a word that is not a filler (:data:`_ACRONYM_FILLERS`, which may also spell a
    letter or be skipped); for two letters the spelling words must be capitalised ("EU": "European
    Union", not "each unit")."""
    capitalised = len(letters) == 2
    wanted = letters.casefold()

    def spell(rest: str, i: int) -> bool:
        if not rest:
            return True
        if i >= len(words):
            return False
        w = words[i]
        filler = w.casefold() in _ACRONYM_FILLERS
        if w[0].casefold() == rest[0] and (filler or not capitalised or w[0].isupper()) and spell(rest[1:], i + 1):
            return True
        return filler and spell(rest, i + 1)

    return any(w.casefold() not in _ACRONYM_FILLERS and spell(wanted, i) for i, w in enumerate(words))


_MONTHS = "january february march april may june july august september october november december".split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
#: a month's or weekday's forms, each to its full name: "jan" and "january" -> "january", "sept" -> "september"
CALENDAR = {**{m: m for m in _MONTHS + _DAYS}, **{m[:3]: m for m in _MONTHS + _DAYS}, "sept": "september",
            "tues": "tuesday", "thur": "thursday", "thurs": "thursday"}
#: an acronym written with dots: "U.S.", "U.K."
_DOTTED = re.compile(r"\b(?:[A-Za-z]\.){2,}")
#: a scale word after a number: "1.5 million", "two billion"
_SCALED = re.compile(r"[\w.,]+\s+(?P<scale>thousand|million|billion|trillion)s?\b", re.IGNORECASE)
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def scaled_value(text: str, value: str, at: int) -> float | None:
    """``value`` (read at offset ``at`` of ``text``) times the scale word after it ("1.5 million" ->
    1500000.0), None when no scale word follows."""
    m = _SCALED.match(text, at)
    return float(value) * _SCALES[m.group("scale").casefold()] if m else None


#: one-word sentences that reply rather than name ("Yes.", "Sure.", "Thanks.")
REPLY_WORDS = frozenset("yes no yeah yep nope sure ok okay thanks hi hello hey bye goodbye yay wow oh certainly "
                        "absolutely indeed correct right true false maybe none".split())


def name_alone(sentence: str) -> str | None:
    """The sentence as one name run when it is nothing but a name ("Delhi.", "Arthur's Magazine"):
    one to six tokens, each a name token or a number, at least one a name token, not ending in "!",
    "?" or ":" (an exclamation, a question, a heading; markdown emphasis and heading marks set
    aside: "**Eligibility:**"), and not one reply word
    (:data:`REPLY_WORDS`); else None."""
    tokens = [m.group(0) for m in _NAME_TOKEN.finditer(sentence)]
    if not 1 <= len(tokens) <= 6 or sentence.strip(EMPHASIS_MARKS).endswith(("!", "?", ":")):
        return None
    if not all(_is_name(t) or t.isdigit() for t in tokens) or all(t.isdigit() for t in tokens):
        return None
    if len(tokens) == 1 and tokens[0].casefold() in REPLY_WORDS:
        return None
    return " ".join(t for t in tokens if not t.isdigit())


#: markdown emphasis and heading marks around a heading or label ("**Eligibility:**", "## Opening hours:")
EMPHASIS_MARKS = "*_# \t\n"
#: a bare "Yes." or "No.": with the sentence after it, one claim (the reply's verdict and what it rests on)
BARE_REPLY = re.compile(r"(?:yes|no|yeah|yep|nope)\W*", re.IGNORECASE)
#: an abstention's parts (rule 4 of :mod:`ragmeter.metrics.generation._checkworthy`)
_LEAD = r"^(?:(?:but|however|unfortunately|sadly|still)\b[\s,]*)?"
_MATERIAL = (r"(?:(?:the|these|those|this|that|your|my|our|its|their)\s+)?"
             r"(?:(?:provided|given|retrieved|supplied|available|above|attached|quoted|cited|shared)\s+)?"
             r"(?:passages?|contexts?|documents?|docs|sources?|texts?|articles?|excerpts?|extracts?|snippets?|"
             r"search\s+results|information|info)")
_SAYING = (r"(?:say|state|mention|give|provide|specify|include|list|contain|cover|indicate|tell|describe|"
           r"explain|discuss|address|show|name|report|detail|clarify)")
_NOT_SAYING = (r"\s+(?:(?:[a-z]+ly|also|even|here)\s+){0,2}"
               r"(?:(?:(?:do|does|did)\s+not|(?:don|doesn|didn)['’]t)\s+(?:[a-z]+ly\s+)?" + _SAYING + r"s?\b"
               r"|makes?\s+no\s+mention\s+of\b|says?\s+nothing\s+(?:about|on)\b|(?:is|are)\s+silent\s+(?:on|about)\b)")
_NO_INFORMATION = (r"there(?:['’]s|\s+is|\s+are)\s+no\s+(?:information|mention|details?|data|figures?)\s+"
                   r"(?:about|on|of|regarding|for|in)\b")
_NOT_FOUND = (r"i\s+(?:can['’]t|cannot|couldn['’]t|could\s+not|don['’]t|do\s+not|didn['’]t|did\s+not)\s+"
              r"(?:(?:find|see|tell)\b|know(?=\W*$|\s+(?:whether|if|how|what|when|where|who|which|why)\b))"
              r"|i\s+(?:cannot|can['’]t)\s+(?:determine|answer|say)\b"
              r"|i(?:\s+am|['’]m)\s+unable\s+to\s+(?:determine|answer|say|find|see|tell)\b")
_NOT_STATED = (r"(?:it|that|this)(?:\s+is\s+not|['’]s\s+not|\s+isn['’]t)\s+"
               r"(?:stated|mentioned|specified|given|said|listed)\s+in\s+" + _MATERIAL + r"\b")
#: where the answer looked, before an abstention ("Based on the provided context, ...")
_WHERE = r"(?:based\s+on|according\s+to|from|in)\s+" + _MATERIAL + r"\b[\s,]*"
#: the thing not said as subject: up to eight words (no relative pronoun, no clause or sentence mark), then
#: "is / are / was / were not" and a verb of saying ("the opening hours are not mentioned")
_UNSAID = (r"(?:(?!(?:that|which|who|whom|whose)\b)(?:\d+\.\d+|[^\s,;:()\[\]—–.!?]+)\s+){1,8}?"
           r"(?:(?:is|are|was|were)\s+not|(?:isn|aren|wasn|weren)['’]t)\s+(?:[a-z]+ly\s+)?"
           r"(?:mentioned|stated|specified|described|discussed)"
           r"(?=\W*$|\s+(?:in|by)\s+" + _MATERIAL + r"\W*$)")
_ABSTENTION = re.compile(
    _LEAD + r"(?:" + _WHERE + r"(?:" + _MATERIAL + _NOT_SAYING + "|" + _NO_INFORMATION + "|" + _NOT_FOUND
    + "|" + _NOT_STATED + "|" + _UNSAID + r")"
    r"|" + _UNSAID + r"\s+(?:in|by)\s+" + _MATERIAL + r"\b"
    r"|" + _MATERIAL + _NOT_SAYING
    + r"|" + _NO_INFORMATION + r"[^,;:()\[\]—–]*?\b(?:in|from)\s+" + _MATERIAL + r"\b"
    r"|" + _NOT_FOUND + r"|" + _NOT_STATED + r")", re.IGNORECASE)
#: after an abstention, any of these starts a second clause, which makes the sentence a claim
_SECOND_CLAUSE = re.compile(r"[,;:()\[\]—–]|\s-\s|\b(?:but|though|although|however|instead|only|except|because|"
                            r"since|which|while|whereas)\b|\bso\b(?!\W*$)", re.IGNORECASE)
#: *which* right after the match opens an indirect question ("don't say which platform ...")
_INDIRECT_WHICH = re.compile(r"\s*which\b", re.IGNORECASE)


def is_abstention(sentence: str) -> bool:
    """Whether ``sentence`` says only what the retrieved material does not hold, or that the answer
    is not known (rule 4 of :mod:`ragmeter.metrics.generation._checkworthy`)."""
    s = without_markup(sentence).strip().strip(EMPHASIS_MARKS).strip()
    m = _ABSTENTION.match(s)
    if m is None:
        return False
    tail = s[m.end():]
    w = _INDIRECT_WHICH.match(tail)
    return not _SECOND_CLAUSE.search(tail[w.end():] if w else tail)


def without_abstentions(answer: str) -> tuple[str, list[str]]:
    """``answer`` with each sentence that is an abstention (:func:`is_abstention`) blanked (spaces,
    so offsets stay), and those sentences in order. A sentence right after a bare "Yes." or "No."
    (:data:`BARE_REPLY`) is kept: the reply's verdict and what it rests on are one claim."""
    out, at, after_reply = answer, 0, False
    found: list[str] = []
    for sentence in split_sentences(answer):
        i = answer.find(sentence, at)
        if i >= 0:
            at = i + len(sentence)
            if not after_reply and is_abstention(sentence):
                out = out[:i] + " " * len(sentence) + out[at:]
                found.append(sentence)
        after_reply = BARE_REPLY.fullmatch(sentence) is not None
    return out, found


#: a remark with no number or name of at most this many words that ends with "!" or holds an
#: evaluative word is an opinion, not a claim
SHORT_REMARK_WORDS = 12

#: a sentence with an evaluative word is a remark only with at most this many other content words
#: (:func:`ragmeter.metrics.lexical.lexical_faithfulness.content_tokens`)
REMARK_CONTENT_WORDS = 4

EVALUATIVE = frozenset("""great lovely love amazing awesome cool wonderful fantastic beautiful fun adorable exciting
excited frustrating sad nice favourite favorite worth interesting wild fascinating brilliant classic lucky glad
happy sorry terrible awful delicious gorgeous incredible impressive cute scary funny boring perfect""".split())

_REMARK_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_INTERJECTION = re.compile(r"^(?:(?:oh|ah|aw|aww|wow|haha|hah|ha|yay|ooh|well|hmm|ugh|okay|ok)\b[\s,!.]*)+",
                           re.IGNORECASE)
_GREETING = re.compile(r"^(?:hi|hello|hey|good (?:morning|afternoon|evening|night)|thanks|thank you|"
                       r"you(?:'|’)?re welcome|welcome back|bye|goodbye|see you|take care|have a\b|sorry|"
                       r"congratulations|congrats|cheers|let me know|feel free to|hope (?:this|that|it) helps|"
                       r"happy to help|glad to help)\b", re.IGNORECASE)
#: praise of the question, the whole sentence: "That's a good question", "Good question", "What a fair
#: question" ("good" and "fair" are not :data:`EVALUATIVE`: they state facts elsewhere)
_QUESTION_PRAISE = re.compile(r"^(?:(?:that(?:['’]s| is)|it(?:['’]s| is)|what|such)\s+)?(?:an?\s+)?"
                              r"(?:(?:really|very)\s+)?(?:good|great|fair|excellent|interesting)\s+question$",
                              re.IGNORECASE)
_STANCE = re.compile(r"^(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|me too|my favou?rite|honestly|personally|"
                     r"you['’]ve got this)\b", re.IGNORECASE)


def classify(sentence: str) -> str:
    """``claim``, ``question``, ``greeting``, ``heading``, ``abstention`` or ``opinion`` by the rules
    of check-worthiness (:mod:`ragmeter.metrics.generation._checkworthy`)."""
    s = sentence.strip()
    if s.endswith("?"):
        return "question"
    rest = _INTERJECTION.sub("", s).strip(" ,!.")
    has_number = bool(numbers(rest))
    if not rest or (_GREETING.match(rest) and not has_number):
        return "greeting"
    if s.strip(EMPHASIS_MARKS).endswith(":") and not has_number:
        return "heading"
    if is_abstention(rest):
        return "abstention"
    if has_number or names(s):
        return "claim"
    if _STANCE.match(rest) or _QUESTION_PRAISE.match(rest):
        return "opinion"
    words = [w.lower() for w in _REMARK_WORD.findall(rest)]
    if len(words) <= SHORT_REMARK_WORDS and (s.endswith("!") or (
            any(w in EVALUATIVE for w in words)
            and len([w for w in content_tokens(rest) if w not in EVALUATIVE]) <= REMARK_CONTENT_WORDS)):
        return "opinion"
    return "claim"


#: a date written year-month-day ("2025-04-02")
_ISO_DATE = re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")
#: a label opening a sentence: up to five words ending in ":" in bold ("**How to apply:**"), or up
#: to two plain ("Note:", "Opening hours:"), followed by the sentence's text
_LABEL = re.compile(r"^\s*(?:(?:\*\*|__)(?:[^\W\d_][\w'’-]*\s+){0,4}[^\W\d_][\w'’-]*:(?:\*\*|__)"
                    r"|(?:[^\W\d_][\w'’-]*\s+)?[^\W\d_][\w'’-]*:)\s+(?=\S)")


#: the month May next to a number ("2 May", "May 2025", "May 14th"): "may" is a stop word (the verb)
_MAY = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+May\b|\bMay\s+\d{1,4}(?:st|nd|rd|th)?\b")
#: a capitalised "May" that does not open a sentence: the month ("opens in May")
_MAY_INSIDE = re.compile(r"[^.!?\s]\s+\(?(?P<may>May)\b")


def iso_dates(text: str) -> str:
    """``text`` with each ``YYYY-MM-DD`` date written "D Month YYYY" ("2025-04-02" -> "2 April 2025")."""
    return _ISO_DATE.sub(lambda m: f"{int(m['d'])} {_MONTHS[int(m['m']) - 1].title()} {m['y']}", text)


def months_may(sentence: str) -> list[int]:
    """The offsets of the month May in ``sentence``: each "May" next to a number (:data:`_MAY`) or
    capitalised without opening the sentence (:data:`_MAY_INSIDE`: "opens in May")."""
    at = {m.start("may") for m in _MAY_INSIDE.finditer(sentence)}
    at |= {m.start() + m.group(0).index("May") for m in _MAY.finditer(sentence)}
    return sorted(at)


def _unlabelled(sentence: str) -> str:
    """The sentence without a label opening it (:data:`_LABEL`): the word after it is its first."""
    return _LABEL.sub("", sentence, count=1)


def check_facts(answer: str, contexts: list[str]) -> dict[str, Any]:
    """Every check of the answer against the contexts, and ``F``, ``P`` and the score."""
    answer, abstentions = without_abstentions(iso_dates(without_markup(answer)))
    joined = iso_dates(" ".join(contexts))
    vocab = set(_TOKEN.findall(_plain(joined).casefold()))
    checks = _number_checks(answer, joined)
    words = _WORD.findall(joined)
    vocab |= {CALENDAR[t] for t in vocab if t in CALENDAR}
    dotted = {d.replace(".", "").casefold() for d in _DOTTED.findall(joined)}

    def known(part: str) -> bool:  # one token of a name run
        return all(t in vocab or CALENDAR.get(t) in vocab for t in _TOKEN.findall(_plain(part).casefold()))

    def spelled(letters: str) -> bool:  # an acronym the contexts spell out or write dotted
        return spelled_out(letters, words) or letters.casefold() in dotted

    may_there = _MAY.search(joined) is not None or _MAY_INSIDE.search(joined) is not None
    for sentence in map(_unlabelled, split_sentences(answer)):
        alone = name_alone(sentence)
        for run in [alone] if alone else names(sentence):
            run = " ".join(t for t in run.split() if not _ORDINAL.fullmatch(t))  # "2nd" is a number
            if not run:
                continue
            ok = all(known(t) for t in run.split())
            letters = None if ok else acronym_letters(run)
            ok = ok or (letters is not None and (spelled(letters) or (" " in run and letters.casefold() in vocab)))
            # an acronym inside a longer run ("Bluetooth LE" on "Bluetooth Low Energy")
            ok = ok or (" " in run and all(known(t) or (_ACRONYM.fullmatch(t) is not None and spelled(t))
                                           for t in run.split()))
            checks.append({"kind": "name", "text": run, "passed": ok})
        checks += [{"kind": "name", "text": "May", "passed": may_there} for _ in months_may(sentence)]
    ctx_sentences = [(s, set(_content(s))) for c in contexts for s in clauses(c)]
    for sentence in clauses(answer):
        toks = _content(sentence)
        if not toks or not ctx_sentences:
            continue
        best, shared = max(((s, len(set(toks) & c)) for s, c in ctx_sentences), key=lambda p: p[1])
        if shared * 2 >= len(toks):
            ok = _negations(sentence) % 2 == _negations(best) % 2
            checks.append({"kind": "negation", "text": sentence, "passed": ok, "context": best})
    words = _content(answer)
    found = [t for t in words if t in vocab]
    f = sum(c["passed"] for c in checks) / len(checks) if checks else 1.0
    p = len(found) / len(words) if words else 1.0 if abstentions else 0.0
    return {"F": f, "P": p, "score": f * p, "checks": checks, "content_tokens": len(words),
            "unsupported_tokens": [t for t in words if t not in vocab], "abstentions": abstentions}


def fact_consistency(answer: str, contexts: list[str]) -> float | None:
    """``F * P`` (see the module docstring); None when the answer has no content token."""
    if not _content(answer):
        return None
    return check_facts(answer, contexts)["score"]


def score_sample(sample: Sample) -> Outcome:
    """fact_consistency of one sample, with every check in the details."""
    if sample.answer is None:
        return Outcome(None, NO_ANSWER)
    texts = [c.text for c in sample.contexts if c.text]
    if sample.contexts and not texts:
        return Outcome(None, "undefined: the contexts have no text (ids only)")
    if not _content(sample.answer):
        return Outcome(None, "undefined: the answer has no content word to check")
    got = check_facts(sample.answer, texts)
    failed = [c for c in got["checks"] if not c["passed"]]
    if got["abstentions"] and not got["content_tokens"]:
        reason = "the answer only says what the contexts do not hold (an abstention): no fact to check"
    elif not sample.contexts:
        reason = "no contexts retrieved: nothing supports the answer"
    else:
        reason = (f"{len(got['checks']) - len(failed)} of {len(got['checks'])} number/name/negation checks "
                  f"pass; {got['P']:.0%} of the answer's content words are in the contexts")
        if failed:
            reason += "; failed: " + ", ".join(f"{c['kind']} {c['text'][:60]!r}" for c in failed[:4])
        if got["abstentions"]:
            reason += f"; {len(got['abstentions'])} abstention(s) not checked"
    return Outcome(got["score"], reason, got)


register_lexical(
    "fact_consistency",
    score_sample,
    role="answer",
    version="18",
    summary="Numbers (with units), names and negations of the answer checked against the contexts, "
            "times the share of its content words found there (no model).",
    formula="score = F * P; F = passed checks / checks (1 when none), one check per number, per "
            "name run and per answer clause's negation parity against its best-matching context "
            "clause; P = |answer content tokens in the contexts| / |answer content tokens|",
    edge_cases=("no answer -> undefined", "answer without content words -> undefined",
                "an answer that only abstains ('The passages don't say ...') -> 1: no fact to check",
                "no contexts retrieved -> 0", "contexts with ids only (no text) -> undefined",
                "no number, name or matched sentence -> F = 1 (score = P)",
                "a sentence's first word is never a name",
                "blind to swapped roles of names that both occur in the contexts, paraphrased negation, "
                "and numbers written as fractions or shares"),
    requires=("answer", "context_texts"),
    default_names=("fact_consistency",),
    undefined="undefined (None) when the sample has no answer, the answer has no content word, "
              "or the contexts carry no text",
    check=LabelCheck(label="faithful"),
)
