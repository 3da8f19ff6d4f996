r"""SQuAD-style token F1 between the answer and the reference answer (Rajpurkar et al., 2016).

Both texts are normalised as the official SQuAD v1.1/v2.0 evaluation script does: lower-case,
remove punctuation, remove the articles *a*, *an*, *the*, collapse whitespace, split on whitespace.
Punctuation here is ASCII ``string.punctuation`` (as SQuAD) plus every Unicode punctuation
character (category ``P*``), so ``«»`` or ``。`` are removed too. With :math:`A` and :math:`R` the
answer's and the reference's token multisets:

.. math::

   c = |A \cap R|_{\text{multiset}}, \quad P = \frac{c}{|A|}, \quad R_c = \frac{c}{|R|}, \quad
   F_1 = \frac{2 P R_c}{P + R_c} \;(0 \text{ when } c = 0)

Edge cases: no answer (None) or no reference (None or blank) -> undefined; an answer or a
reference that normalises to no token -> 1.0 if both do, else 0.0 (SQuAD's rule), so an empty
answer scores 0 against a real reference.

>>> round(token_f1("The cat sat on the mat.", "A cat sat on a mat"), 4)
1.0
>>> round(token_f1("Paris, France", "Paris"), 4)
0.6667
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache

from ...registry import LabelCheck
from .base import Outcome, overlap_f1, register_answer_reference

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(text: str) -> str:
    """SQuAD's ``normalize_answer``: lower-case, drop punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if not _is_punct(ch))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@lru_cache(maxsize=65536)
def squad_tokens(text: str) -> tuple[str, ...]:
    """The tokens SQuAD's F1 compares: ``normalize_answer(text).split()``."""
    return tuple(normalize_answer(text).split())


def token_f1_parts(answer: str, reference: str) -> tuple[float, float, float, int]:
    """(F1, precision, recall, common token count) of ``answer`` against ``reference``."""
    a, r = squad_tokens(answer), squad_tokens(reference)
    if not a or not r:
        same = float(a == r)
        return same, same, same, 0
    return overlap_f1(sum((Counter(a) & Counter(r)).values()), len(a), len(r))


def token_f1(answer: str, reference: str) -> float:
    """SQuAD token F1 of ``answer`` against ``reference``; see the module docstring."""
    return token_f1_parts(answer, reference)[0]


def _outcome(answer: str, reference: str) -> Outcome:
    """token_f1 of one sample, with its precision, recall and token counts in the details."""
    f1, p, r, common = token_f1_parts(answer, reference)
    na, nr = len(squad_tokens(answer)), len(squad_tokens(reference))
    details = {"precision": p, "recall": r, "common_tokens": common, "answer_tokens": na, "reference_tokens": nr}
    if na == 0 or nr == 0:
        which = "answer and reference have" if na == nr == 0 else ("answer has" if na == 0 else "reference has")
        reason = f"{which} no token after normalisation: scored {f1:g}"
    else:
        reason = f"{common} shared token(s); precision {p:.3f} of {na}, recall {r:.3f} of {nr}"
    return Outcome(f1, reason, details)


score_sample = register_answer_reference(
    "token_f1",
    _outcome,
    summary="SQuAD-style token F1 between the answer and the reference answer (no model).",
    formula="F1 = 2PR/(P+R), P = c/|A|, R = c/|R|, c = multiset overlap of the normalised tokens "
            "(lower-case, no punctuation, no articles a/an/the)",
    edge_cases=("answer or reference with no token after normalisation -> 1 if both, else 0 (SQuAD)",
                "empty answer string -> 0"),
    aliases=("squad_f1",),
    default_names=("token_f1",),
    check=LabelCheck(label="correct", at_least=4.0),
    answer_preference=5,
)
