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
caller falls back to the hard verdict (recorded as ``scoring: "hard"``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from ...errors import JudgeParseError
from ...judges.base import TokenLogprob
from ...registry import Param
from ...types import Sample
from ._claim_steps import joined_context
from ._memo import shared
from ._prompting import template

#: how many alternatives per token a probability-scored call asks for
TOP_LOGPROBS = 10

MODE = Param("mode", str, "claims", "claims: decompose the answer into claims and verify each (mean support); "
             "direct: one yes/no question per answer, scored by P(yes)", choices=("claims", "direct"))
SCORING = Param("scoring", str, "auto", "auto: ask for log-probabilities and score verdicts by P(yes)/(P(yes)+P(no)) "
                "where the backend returns them, else the hard verdict; hard: hard verdicts only (no logprobs "
                "asked)", choices=("auto", "hard"))


_SYNONYM = {"true": "yes", "false": "no"}


def _word(token: str) -> str:
    w = token.strip().strip("\"'").strip().rstrip(".").lower()
    return _SYNONYM.get(w, w)


def yes_share(token: TokenLogprob) -> float | None:
    """P(yes) / (P(yes) + P(no)) over ``token``'s alternatives (see the module docstring); None when
    neither word is among them."""
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


def field_value_tokens(tokens: Sequence[TokenLogprob] | None, text: str,
                       field: str) -> list[TokenLogprob] | None:
    """Per occurrence of ``"field": <value>`` in a JSON reply, in reply order, the token where the
    value starts (after an opening quote, if any). None when there are no log-probabilities or the
    tokens do not spell ``text`` (then the positions cannot be trusted)."""
    if not tokens or "".join(t.token for t in tokens) != text:
        return None
    starts = _offsets(tokens)
    out: list[TokenLogprob] = []
    for m in re.finditer(rf'"{re.escape(field)}"\s*:\s*"?', text):
        at = m.end()  # first character of the value
        idx = max(i for i, s in enumerate(starts) if s <= at) if starts else 0
        # a token ending exactly at the value start (e.g. '": "') is not the value's token
        if starts[idx] + len(tokens[idx].token) <= at and idx + 1 < len(tokens):
            idx += 1
        out.append(tokens[idx])
    return out


def field_yes_shares(tokens: Sequence[TokenLogprob] | None, text: str, field: str) -> list[float | None] | None:
    """Per occurrence of ``"field": "<yes|no>"`` (or a JSON boolean) in a JSON reply, in reply order, the
    :func:`yes_share` of the token where the value starts (None for an occurrence whose token has
    neither word among its alternatives). None when there are no log-probabilities or the tokens do
    not spell ``text`` (then the positions cannot be trusted)."""
    found = field_value_tokens(tokens, text, field)
    return None if found is None else [yes_share(t) for t in found]


def rating_mean(token: TokenLogprob, low: int, high: int) -> float | None:
    """The probability-weighted mean rating over ``token``'s alternatives (G-Eval's score):

    .. math:: \\bar r = \\frac{\\sum_{d} d \\, P(d)}{\\sum_{d} P(d)}, \\quad d \\in \\{low, \\dots, high\\}

    over the alternatives that read as one whole number ``d`` in ``[low, high]`` once whitespace
    and quotes are stripped (``"4"``, ``" 4"``). Only meaningful when every rating is one token,
    i.e. ``0 <= low < high <= 9``: a tokenizer that writes 10 as "1", "0" (Qwen's does) makes the
    first token of 10 read as 1. None when no alternative is a rating on the scale.
    """
    mass = weighted = 0.0
    for text, lp in token.alternatives().items():
        w = text.strip().strip("\"'").strip()
        if len(w) == 1 and w in "0123456789" and low <= int(w) <= high:
            p = math.exp(lp)
            mass += p
            weighted += int(w) * p
    return weighted / mass if mass > 0 else None


def hard_yes_no(text: str) -> bool:
    """The hard verdict of a one-word reply: True for yes, False for no; JudgeParseError otherwise."""
    w = _word(text.split()[0] if text.split() else "")
    if w in ("yes", "no"):
        return w == "yes"
    raise JudgeParseError(f'expected the one-word verdict "yes" or "no", got {text!r}', raw=text)


async def direct_verdict(judge: Any, sample: Sample, tag: str, scoring: str) -> dict[str, Any]:
    """One judge call: "is every fact in the answer supported by the context?", ``max_tokens=1``.

    Returns ``{"verdict": "yes"|"no", "support": s, "p_yes": P or None, "scoring": "probability"|"hard"}``
    where ``support`` is :func:`yes_share` of the verdict token when ``scoring="auto"`` and the
    backend returned log-probabilities, else 1.0/0.0 from the hard verdict. Shared between
    faithfulness and hallucination_rate (one call per sample and scoring mode).
    """
    t = template("direct_faithfulness")
    context = joined_context(sample)
    top = TOP_LOGPROBS if scoring == "auto" else None

    async def run() -> dict[str, Any]:
        r = await judge.complete(t.messages(context=context, question=sample.query, answer=sample.answer or ""),
                                 tag=tag, template_version=t.cache_version, max_tokens=1, top_logprobs=top)
        p = yes_share(r.logprobs[0]) if r.logprobs and scoring == "auto" else None
        try:
            hard = hard_yes_no(r.value)
        except JudgeParseError:
            if p is None:
                raise
            hard = p >= 0.5  # the argmax was another token; the verdict words' probabilities still decide
        return {"verdict": "yes" if hard else "no", "p_yes": p,
                "support": p if p is not None else float(hard),
                "scoring": "probability" if p is not None else "hard"}

    return await shared(judge, f"{t.cache_version}/{scoring}", (context, sample.query, sample.answer), run)
