"""Probability-weighted verdicts from token log-probabilities, and the direct faithfulness verdict.

Where the backend returns log-probabilities (:attr:`ragmeter.judges.JudgeResult.logprobs`), a
yes/no verdict is scored by the judge's probabilities rather than its argmax:

.. math:: s = \\frac{P(\\text{yes})}{P(\\text{yes}) + P(\\text{no})}

where :math:`P(\\text{yes})` sums :math:`e^{\\text{logprob}}` over the verdict token's alternatives
that read "yes" once whitespace, quotes and a final period are stripped and case is folded
(``"yes"``, ``"Yes"``, ``" yes"``, ``'"yes'``, and a JSON boolean's ``" true"`` ...), and likewise
for "no" (``" false"``). Small judges that are
poorly calibrated in their argmax often still rank well in their probabilities (G-Eval's idea).
Edge cases: neither word among the alternatives, or no log-probabilities at all -> None, and the
caller falls back to the hard verdict (recorded as ``scoring: "hard"``). A log-probability that is
not a finite number (``NaN``, ``Infinity``, ``-Infinity``, as lenient servers write them) makes its
token's log-probabilities unusable: the same fallback, said in the result's ``details["notes"]``.

A rating on a whole-number scale ``[low, high]`` (``high <= 10``) is scored by the probability-weighted
mean over the rating token's alternatives (G-Eval's score, :func:`rating_distribution`):

.. math:: \\bar r = \\frac{\\sum_k k \\, P(k)}{\\sum_k P(k)}, \\quad k \\in \\{low, \\dots, high\\}

where P(k) sums :math:`e^{\\text{logprob}}` over the alternatives of the token where the rating
starts that read as k (digits only, once whitespace and quotes are stripped: ``"7"``, ``" 7"``);
alternatives that are no number on the scale (``"x"``, ``'"'``, 7 on a 1-5 scale) are left out of
both sums. A tokenizer that writes numbers digit by digit (Qwen: "10" is "1", "0") makes the
alternative "1" ambiguous on a scale reaching 10; it is split between 1 and 10:

- when the judge wrote "1" itself (rating 1 or 10), by the next token's alternatives:
  P(10 | "1") = P(next starts with "0") / (P(next starts with "0") + P(next ends the number));
- otherwise its whole mass goes to whichever of 1 and 10 is nearer the hard rating (1 for hard
  ratings 0-5, 10 for 6-9: a judge's runner-up ratings sit next to its choice); the share so
  assigned is reported as ``ambiguous``;
- never when a multi-digit alternative (``"10"``) shows that the tokenizer writes numbers whole:
  then "1" is 1.

:func:`field_ratings` locates each rating in a JSON reply and returns None for one (the caller
uses the hard rating, ``scoring: "hard"``) when the written value is not a whole number equal to
the parsed hard rating (``7.5``), the located token does not begin that number, or no alternative
is a rating on the scale; and None for the whole reply when there are no log-probabilities, the
tokens do not spell the reply, or the reply holds another number of ``field`` values than ratings
parsed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import JudgeParseError
from ...judges.base import Message, TokenLogprob
from ...registry import Param
from ...types import Sample
from ._base import note
from ._memo import shared
from ._prompting import joined_context, template

#: how many alternatives per token a probability-scored call asks for
TOP_LOGPROBS = 10

MODE = Param("mode", str, "claims", "claims: decompose the answer into claims, then verify each in a second call "
             "(mean support); inline: one call lists the claims and verifies each as it goes (mean support); "
             "direct: one yes/no question per answer, scored by P(yes); sentences: each check-worthy sentence of the "
             "answer judged alone against its evidence window, one yes/no word per sentence scored by P(yes), "
             "combined with the offline number/name checks (veto)",
             choices=("claims", "inline", "direct", "sentences"))
SCORING = Param("scoring", str, "auto", "auto: ask for log-probabilities and score verdicts by P(yes)/(P(yes)+P(no)) "
                "and ratings by sum_k k P(k) / sum_k P(k) where the backend returns them, else the hard verdict or "
                "rating; hard: hard verdicts and ratings only (no logprobs asked)", choices=("auto", "hard"))

#: the registry edge case every probability-weighted metric shares
HARD_FALLBACK = ("no log-probabilities from the backend (or scoring=hard), a rating that is not a whole number, "
                 "a token that cannot be located, or a log-probability that is not finite (said in details.notes) "
                 "-> the hard rating / verdict (details.scoring 'hard')")

_SYNONYM = {"true": "yes", "false": "no"}


def _word(token: str) -> str:
    w = token.strip().strip("\"'").strip().rstrip(".").lower()
    return _SYNONYM.get(w, w)


def usable(token: TokenLogprob | None) -> bool:
    """Whether every log-probability of ``token`` is a finite number (None: nothing to use); a
    non-finite one is said in the result's notes (:func:`._base.note`)."""
    if token is None:
        return True
    bad = next((lp for lp in (token.logprob, *(lp for _, lp in token.top)) if not math.isfinite(lp)), None)
    if bad is not None:
        note(f"the judge sent a non-finite log-probability ({bad}) at the token {token.token!r}: its "
             "log-probabilities were not used, the hard value was")
    return bad is None


def yes_share(token: TokenLogprob) -> float | None:
    """P(yes) / (P(yes) + P(no)) over ``token``'s alternatives (see the module docstring); None when
    neither word is among them or a log-probability is not finite (:func:`usable`)."""
    if not usable(token):
        return None
    p_yes = p_no = 0.0
    for text, lp in token.alternatives().items():
        w = _word(text)
        if w == "yes":
            p_yes += math.exp(lp)
        elif w == "no":
            p_no += math.exp(lp)
    return p_yes / (p_yes + p_no) if p_yes + p_no > 0 else None


def _offsets(tokens: Sequence[TokenLogprob]) -> list[int]:
    out, pos = [], 0
    for t in tokens:
        out.append(pos)
        pos += len(t.token)
    return out


def _value_positions(tokens: Sequence[TokenLogprob] | None, text: str, field: str) -> list[tuple[int, int]] | None:
    """Per occurrence of ``"field": <value>`` in ``text``, in reply order, ``(character where the
    value starts, index of the token holding it)``; None when there are no log-probabilities or the
    tokens do not spell ``text``."""
    if not tokens or "".join(t.token for t in tokens) != text:
        return None
    starts = _offsets(tokens)
    out: list[tuple[int, int]] = []
    for m in re.finditer(rf'"{re.escape(field)}"\s*:\s*"?', text):
        at = m.end()  # first character of the value
        idx = max(i for i, s in enumerate(starts) if s <= at)
        # a token ending exactly at the value start (e.g. '": "') is not the value's token
        if starts[idx] + len(tokens[idx].token) <= at and idx + 1 < len(tokens):
            idx += 1
        out.append((at, idx))
    return out


def field_value_tokens(tokens: Sequence[TokenLogprob] | None, text: str,
                       field: str) -> list[TokenLogprob] | None:
    """Per occurrence of ``"field": <value>`` in a JSON reply, in reply order, the token where the
    value starts (after an opening quote, if any). None when there are no log-probabilities or the
    tokens do not spell ``text`` (then the positions cannot be trusted)."""
    found = _value_positions(tokens, text, field)
    return None if found is None or tokens is None else [tokens[i] for _, i in found]


def field_yes_shares(tokens: Sequence[TokenLogprob] | None, text: str, field: str) -> list[float | None] | None:
    """Per occurrence of ``"field": "<yes|no>"`` (or a JSON boolean) in a JSON reply, in reply order, the
    :func:`yes_share` of the token where the value starts (None for an occurrence whose token has
    neither word among its alternatives). None when there are no log-probabilities or the tokens do
    not spell ``text`` (then the positions cannot be trusted)."""
    found = field_value_tokens(tokens, text, field)
    return None if found is None else [yes_share(t) for t in found]


def reply_yes_shares(r: Any, field: str, n: int, scoring: str) -> list[float | None]:
    """Per item of a judge reply ``r`` that holds ``n`` ``"field": "<yes|no>"`` verdicts, in reply
    order, its :func:`yes_share`; all None with ``scoring="hard"``, without log-probabilities, or
    when the located verdicts are not exactly ``n`` (then positions cannot be matched to items,
    and the caller uses the hard verdicts)."""
    shares = field_yes_shares(r.logprobs, r.raw, field) if scoring == "auto" else None
    return shares if shares is not None and len(shares) == n else [None] * n


def field_verdict_share(tokens: Sequence[TokenLogprob] | None, text: str, field: str, hard: bool) -> float | None:
    """:func:`yes_share` of the one ``"field"`` verdict of a JSON reply, when the reply holds exactly one
    and its token reads as the hard verdict (else the location is not trusted); otherwise None."""
    found = field_value_tokens(tokens, text, field)
    if found is None or len(found) != 1 or _word(found[0].token) != ("yes" if hard else "no"):
        return None
    return yes_share(found[0])


# ---- probability-weighted ratings (module docstring) ------------------------------------------------

@dataclass(frozen=True)
class WeightedRating:
    """A probability-weighted rating: ``mean`` = sum_k k P(k) / sum_k P(k) over ``distribution``
    (normalised P(k) of each rating on the scale found among the alternatives, ascending), and the
    share of that mass whose reading was ambiguous and assigned by nearness to the hard rating."""

    mean: float
    distribution: dict[int, float]
    ambiguous: float = 0.0

    def details(self) -> dict[str, Any]:
        """The JSON-ready details (``distribution`` keyed by the rating as text)."""
        return {"distribution": {str(k): p for k, p in self.distribution.items()}, "ambiguous": self.ambiguous}


def _digits(token: str) -> str | None:
    w = token.strip().strip("\"'").strip()
    return w if w.isascii() and w.isdigit() else None


def _continuation(prefix: str, ks: list[int], following: TokenLogprob | None) -> dict[int, float] | None:
    """How the judge's own ``prefix`` (e.g. "1") continues, from the next token's alternatives: a
    digit extends it (to 10), a non-digit other than "." ends it (1); normalised over ``ks``."""
    if following is None:
        return None
    mass = dict.fromkeys(ks, 0.0)
    for text, lp in following.alternatives().items():
        if text[:1].isdigit():
            whole = prefix + re.match(r"\d+", text).group()  # type: ignore[union-attr]
        elif text[:1] != ".":  # ".": a fraction, no whole rating
            whole = prefix
        else:
            continue
        if whole.isdigit() and str(int(whole)) == whole and int(whole) in mass:
            mass[int(whole)] += math.exp(lp)
    total = sum(mass.values())
    return {k: m / total for k, m in mass.items()} if total > 0 else None


def rating_distribution(token: TokenLogprob, low: int, high: int, hard: int,
                        following: TokenLogprob | None = None) -> WeightedRating | None:
    """The probability-weighted rating on ``[low, high]`` from the alternatives of ``token`` (where
    the rating starts; ``following`` is the token after it, ``hard`` the rating the judge wrote), by
    the rules of the module docstring; None when no alternative is a rating on the scale or a
    log-probability of either token is not finite (:func:`usable`)."""
    if not (usable(token) and usable(following)):
        return None
    alts = [(d, math.exp(lp)) for text, lp in token.alternatives().items() if (d := _digits(text)) is not None]
    whole = any(len(d) > 1 for d, _ in alts)  # the tokenizer writes multi-digit numbers as one token
    chosen = _digits(token.token)
    mass: dict[int, float] = {}
    ambiguous = 0.0
    for d, p in alts:  # "7" and " 7" are two tokens: both count
        ks = [k for k in range(low, high + 1) if (str(k) == d if whole else str(k).startswith(d))]
        if not ks:
            continue
        split = {ks[0]: 1.0} if len(ks) == 1 else (_continuation(d, ks, following) if d == chosen else None)
        if split is None:
            split = {min(ks, key=lambda k: (abs(k - hard), k)): 1.0}
            ambiguous += p
        for k, q in split.items():
            mass[k] = mass.get(k, 0.0) + p * q
    total = sum(mass.values())
    if total <= 0:
        return None
    dist = {k: mass[k] / total for k in sorted(mass)}
    return WeightedRating(sum(k * q for k, q in dist.items()), dist, ambiguous / total)


def field_ratings(tokens: Sequence[TokenLogprob] | None, text: str, field: str, hards: Sequence[float],
                  scales: Sequence[tuple[int, int]]) -> list[WeightedRating | None] | None:
    """Per occurrence of ``"field": <rating>`` in a JSON reply, in reply order, its
    :class:`WeightedRating` on ``scales[i]`` given the parsed hard rating ``hards[i]`` (None for that
    occurrence where it cannot be trusted); None for the reply (module docstring)."""
    found = _value_positions(tokens, text, field)
    if found is None or tokens is None or len(found) != len(hards):
        return None
    out: list[WeightedRating | None] = []
    for (at, idx), hard, (low, high) in zip(found, hards, scales, strict=True):
        lit = re.match(r"\d+(?:\.\d*)?", text[at:])
        chosen = _digits(tokens[idx].token)
        if (lit is None or not lit.group().isdigit() or float(lit.group()) != hard or chosen is None
                or not lit.group().startswith(chosen)):
            out.append(None)
            continue
        following = tokens[idx + 1] if idx + 1 < len(tokens) else None
        out.append(rating_distribution(tokens[idx], low, high, int(lit.group()), following))
    return out


def asked_logprobs(scoring: str) -> int | None:
    """The ``top_logprobs`` a judge call asks for under ``scoring``: :data:`TOP_LOGPROBS` for "auto",
    None (no log-probabilities asked, so another cache key) for "hard"."""
    return TOP_LOGPROBS if scoring == "auto" else None


def reply_rating(r: Any, field: str, hard: float, scale: tuple[int, int], scoring: str) -> WeightedRating | None:
    """The :class:`WeightedRating` of the one ``field`` rating of the judge result ``r`` (``.raw``,
    ``.logprobs``) under ``scoring``; None with ``scoring="hard"`` or where :func:`field_ratings` has
    none (the caller uses the hard rating)."""
    found = field_ratings(r.logprobs, r.raw, field, [hard], [scale]) if scoring == "auto" else None
    return found[0] if found else None


def rating_details(hard: float, weighted: WeightedRating | None, name: str = "rating") -> dict[str, Any]:
    """The details of one rated reply: the hard rating as ``name``, the weighted one as
    ``weighted_<name>`` (None when hard) with its ``distribution`` and ``ambiguous`` share, and
    ``scoring`` ("probability" or "hard")."""
    return {name: hard, f"weighted_{name}": weighted.mean if weighted else None,
            "scoring": "probability" if weighted else "hard", **(weighted.details() if weighted else {})}


def scoring_of(weighted: Sequence[bool]) -> str:
    """A result's ``scoring`` from whether each item's value came from log-probabilities:
    "probability" when every one did, "hard" when none did (or there is no item), else "mixed"."""
    known = sum(weighted)
    return "probability" if weighted and known == len(weighted) else ("hard" if not known else "mixed")


def hard_yes_no(text: str) -> bool:
    """The hard verdict of a one-word reply: True for yes, False for no; JudgeParseError otherwise."""
    w = _word(text.split()[0] if text.split() else "")
    if w in ("yes", "no"):
        return w == "yes"
    raise JudgeParseError(f'expected the one-word verdict "yes" or "no", got {text!r}', raw=text)


#: the one-word verdict's ``max_tokens``
WORD_REPLY_TOKENS = 1


async def word_verdict(judge: Any, messages: Any, tag: str, template_version: str, scoring: str) -> dict[str, Any]:
    """One judge call answered with one word, yes or no (``max_tokens=1``, free text).

    Returns ``{"verdict": "yes"|"no", "support": s, "p_yes": P or None, "scoring": "probability"|"hard"}``
    where ``support`` is :func:`yes_share` of the reply's token when ``scoring="auto"`` and the
    backend returned log-probabilities, else 1.0/0.0 from the hard word. A first token that is
    neither word is read from the two words' probabilities when there are any, else it is a
    :class:`~ragmeter.errors.JudgeParseError`, and such a reply is not stored in the cache.
    """
    top = TOP_LOGPROBS if scoring == "auto" else None

    def share(logprobs: Sequence[TokenLogprob] | None) -> float | None:
        return yes_share(logprobs[0]) if logprobs and scoring == "auto" else None

    def readable(text: str, logprobs: Sequence[TokenLogprob] | None) -> bool:
        """Whether the reply decides (a yes/no word, or the two words' probabilities): else not cached."""
        try:
            hard_yes_no(text)
        except JudgeParseError:
            return share(logprobs) is not None
        return True

    r = await judge.complete(messages, tag=tag, template_version=template_version, max_tokens=WORD_REPLY_TOKENS,
                             top_logprobs=top, accept=readable)
    p = share(r.logprobs)
    try:
        hard = hard_yes_no(r.value)
    except JudgeParseError:
        if p is None:
            raise
        hard = p >= 0.5  # the argmax was another token; the verdict words' probabilities still decide
    return {"verdict": "yes" if hard else "no", "p_yes": p,
            "support": p if p is not None else float(hard),
            "scoring": "probability" if p is not None else "hard"}


def direct_prompt_chars(sample: Sample, context: str) -> int:
    """The characters of :func:`direct_verdict`'s prompt with ``context`` in it."""
    return sum(len(m.content) for m in _direct_messages(sample, context))


def _direct_messages(sample: Sample, context: str) -> list[Message]:
    return template("direct_faithfulness").messages(context=context, question=sample.query, answer=sample.answer or "")


def word_reason(d: dict[str, Any]) -> str:
    """A :func:`word_verdict` result as a result's reason: ``"yes (P(yes) 0.93)"`` or ``"no (hard verdict)"``."""
    how = f"P(yes) {d['p_yes']:.2f}" if d["p_yes"] is not None else "hard verdict"
    return f"{d['verdict']} ({how})"


async def direct_verdict(judge: Any, sample: Sample, tag: str, scoring: str,
                         context: str | None = None) -> dict[str, Any]:
    """One judge call: "is every fact in the answer supported by the context?", :func:`word_verdict`.

    Shared between faithfulness and hallucination_rate (one call per sample and scoring mode).
    ``context`` replaces the joined contexts (an excerpt that fits the judge's window, :mod:`._fit`).
    """
    t = template("direct_faithfulness")
    context = joined_context(sample) if context is None else context

    async def run() -> dict[str, Any]:
        return await word_verdict(judge, _direct_messages(sample, context), tag, t.cache_version, scoring)

    return await shared(judge, f"{t.cache_version}/{scoring}", (context, sample.query, sample.answer), run)
