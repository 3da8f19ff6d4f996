r"""ROUGE-L F-measure between the answer and the reference answer (Lin, 2004).

With :math:`X` the reference's tokens, :math:`Y` the answer's, and LCS the length of their longest
common subsequence:

.. math::

   P = \frac{\mathrm{LCS}(X, Y)}{|Y|}, \qquad R = \frac{\mathrm{LCS}(X, Y)}{|X|}, \qquad
   F = \frac{2 P R}{P + R} \;(0 \text{ when LCS} = 0)

This is ``rougeL`` (not ``rougeLsum``) of Google's ``rouge-score`` package with its defaults
(no stemming, β = 1), which the tests use as an oracle. Tokens: the text lower-cased (``casefold``),
split into maximal runs of Unicode letters and digits. On ASCII text this is exactly
``rouge-score``'s tokenizer (``[a-z0-9]+`` after lower-casing); unlike it, letters outside ASCII
are kept (``rouge-score`` deletes them, so *café* becomes *caf* and Chinese text scores 0).

The LCS is computed with the bit-parallel algorithm of Allison & Dix (1986) / Hyyrö (2004) on
Python integers: one pass over the answer, O(|X|·|Y| / word size) time, O(|X|) memory, so long
answers stay cheap.

Edge cases: no answer (None) or no reference (None or blank) -> undefined; an answer or a
reference with no token -> 0 (as ``rouge-score``), so an empty answer scores 0.

>>> lcs_length("a b c d".split(), "a c x d".split())
3
>>> round(rouge_l("the cat sat on the mat", "the cat is on the mat"), 4)
0.8333
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ...registry import LabelCheck
from .base import Outcome, overlap_f1, register_answer_reference

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=65536)
def rouge_tokens(text: str) -> tuple[str, ...]:
    """Lower-cased runs of letters and digits (``rouge-score``'s tokenizer, extended beyond ASCII)."""
    return tuple(_TOKEN.findall(text.casefold()))


def lcs_length(x: Sequence[str], y: Sequence[str]) -> int:
    """Length of the longest common subsequence of ``x`` and ``y`` (bit-parallel, see module docstring).

    Bit ``i`` of ``row`` is 1 while position ``i`` of ``x`` is not yet the end of a match in the
    LCS frontier; each token of ``y`` updates all positions at once with one add and a few logic
    operations; the LCS is the number of 0 bits at the end.
    """
    if not x or not y:
        return 0
    match: dict[str, int] = {}
    for i, tok in enumerate(x):
        match[tok] = match.get(tok, 0) | (1 << i)
    full = (1 << len(x)) - 1
    row = full
    for tok in y:
        m = match.get(tok)
        if m is None:
            continue
        u = row & m
        row = ((row + u) | (row - u)) & full
    return len(x) - row.bit_count()


def rouge_l_parts(answer: str, reference: str) -> tuple[float, float, float, int]:
    """(F, precision, recall, LCS length) of ``answer`` against ``reference``."""
    y, x = rouge_tokens(answer), rouge_tokens(reference)
    return overlap_f1(lcs_length(x, y), len(y), len(x))


def rouge_l(answer: str, reference: str) -> float:
    """ROUGE-L F-measure of ``answer`` against ``reference``; see the module docstring."""
    return rouge_l_parts(answer, reference)[0]


def _outcome(answer: str, reference: str) -> Outcome:
    """rouge_l of one sample, with precision, recall and the LCS length in the details."""
    f, p, r, lcs = rouge_l_parts(answer, reference)
    na, nr = len(rouge_tokens(answer)), len(rouge_tokens(reference))
    details = {"precision": p, "recall": r, "lcs": lcs, "answer_tokens": na, "reference_tokens": nr}
    if na == 0:
        reason = "the answer has no token: scored 0"
    elif nr == 0:
        reason = "the reference has no token: scored 0"
    else:
        reason = f"longest common subsequence {lcs} token(s) of answer {na} / reference {nr}"
    return Outcome(f, reason, details)


score_sample = register_answer_reference(
    "rouge_l",
    _outcome,
    summary="ROUGE-L F-measure (longest common subsequence) between the answer and the reference (no model).",
    formula="F = 2PR/(P+R), P = LCS/|answer tokens|, R = LCS/|reference tokens|; tokens: lower-cased "
            "letter/digit runs; as rouge-score's rougeL without stemming",
    edge_cases=("answer or reference with no token -> 0 (as rouge-score)",
                "non-ASCII letters are kept (rouge-score drops them)"),
    aliases=("rougel",),
    default_names=("rouge_l",),
    check=LabelCheck(label="correct", at_least=4.0),
    answer_preference=6,
)
