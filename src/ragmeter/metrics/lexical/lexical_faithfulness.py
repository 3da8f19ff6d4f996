r"""Lexical faithfulness: the share of answer sentences whose content words appear in the contexts.

A cheap, deterministic proxy of (LLM-judged) faithfulness. With :math:`V` the set of tokens of all
retrieved context texts joined, and for each answer sentence :math:`s` its set of distinct
content tokens :math:`C_s`:

.. math::

   \mathrm{prec}(s) = \frac{|C_s \cap V|}{|C_s|}, \qquad
   \mathrm{score} = \frac{|\{s : C_s \neq \emptyset,\ \mathrm{prec}(s) \ge \theta\}|}
                         {|\{s : C_s \neq \emptyset\}|}

with :math:`\theta` the ``threshold`` parameter (default :data:`DEFAULT_THRESHOLD` = 0.5: a
sentence counts as supported when at least half of its distinct content words occur in the
contexts).

**Tokens.** Lower-cased (``casefold``) maximal runs of Unicode letters and digits. Content tokens
are those not in :data:`STOPWORDS` (a short English function-word list). No stemming: *founded*
and *founder* are different tokens.

**Sentence rule.** Leading list markers (``-``, ``*``, ``•``, ``1.``, ``2)``, ``a)``) are removed
from each line; then the answer is split at line breaks, after ``.``, ``!``, ``?`` or ``…``
followed by whitespace, and after ``。``, ``！``, ``？``. A decimal point (``3.5``) does not split;
an abbreviation followed by a space (``e.g. this``) does. Sentences with no content token (``It
is.``) are not counted.

**Threshold choice.** 0.5 separates sentences built mostly from the contexts' words from sentences
built mostly from words the contexts never use. Higher thresholds penalise faithful paraphrase
(inflections, synonyms and connective words such as *according* or *therefore* are misses without
stemming); lower ones accept sentences that share only a topic word or two. The per-sentence
precisions are in the details, so other thresholds can be applied afterwards.

**What it cannot see.** A sentence that reuses the contexts' words in a false combination (a
swapped number, a negation, two entities exchanged) passes; use an LLM-judged faithfulness metric
for those.

Edge cases: no answer (None) -> undefined; an answer with no content token (empty string, only
stop words) -> undefined; no contexts retrieved -> 0 (nothing can support the answer);
contexts without any text (ids only) -> undefined.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import InvalidParameterError
from ...registry import LabelCheck, Param
from ...types import Sample
from .base import NO_ANSWER, Outcome, register_lexical

DEFAULT_THRESHOLD = 0.5
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*•‣◦]|\d{1,3}[.)]|[A-Za-z][.)])[ \t]+", re.MULTILINE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？])\s*|\s*\n\s*")
STOPWORDS = frozenset(
    """a an the and or but if of at by for with about to from in on into onto over under is are was were be
    been being am do does did has have had having it its this that these those there here as than then so
    such not no nor can could will would shall should may might must i you he she we they me him her us them
    my your his our their what which who whom whose when where why how all any both each few more most other
    some own same too very just also""".split()
)


def split_sentences(text: str) -> list[str]:
    """The answer's sentences by the rule in the module docstring (blank pieces dropped)."""
    text = _LIST_MARKER.sub("", text)
    return [s.strip() for s in _SENTENCE_BREAK.split(text) if s and s.strip()]


def content_tokens(text: str) -> list[str]:
    """Distinct content tokens of ``text`` in order of first occurrence."""
    return list(dict.fromkeys(t for t in _TOKEN.findall(text.casefold()) if t not in STOPWORDS))


def sentence_support(answer: str, contexts: list[str], threshold: float = DEFAULT_THRESHOLD) -> list[dict[str, Any]]:
    """One record per counted answer sentence: text, precision, supported, the unsupported tokens."""
    vocab = set(_TOKEN.findall(" ".join(contexts).casefold()))
    out: list[dict[str, Any]] = []
    for sentence in split_sentences(answer):
        toks = content_tokens(sentence)
        if not toks:
            continue
        missing = [t for t in toks if t not in vocab]
        precision = 1.0 - len(missing) / len(toks)
        out.append({"sentence": sentence, "precision": precision, "supported": precision >= threshold,
                    "content_tokens": len(toks), "unsupported_tokens": missing})
    return out


def lexical_faithfulness(answer: str, contexts: list[str], threshold: float = DEFAULT_THRESHOLD) -> float | None:
    """Share of supported sentences (see the module docstring); None when no sentence has content."""
    records = sentence_support(answer, contexts, threshold)
    if not records:
        return None
    return sum(r["supported"] for r in records) / len(records)


def score_sample(sample: Sample, threshold: float = DEFAULT_THRESHOLD) -> Outcome:
    """lexical_faithfulness of one sample, with per-sentence data in the details."""
    if sample.answer is None:
        return Outcome(None, NO_ANSWER)
    texts = [c.text for c in sample.contexts if c.text]
    if sample.contexts and not texts:
        return Outcome(None, "undefined: the contexts have no text (ids only)")
    records = sentence_support(sample.answer, texts, threshold)
    if not records:
        return Outcome(None, "undefined: the answer has no content word to check", {"sentences": []})
    supported = sum(r["supported"] for r in records)
    details = {
        "threshold": threshold,
        "supported": supported,
        "sentences_counted": len(records),
        "mean_precision": sum(r["precision"] for r in records) / len(records),
        "sentences": records,
    }
    if not sample.contexts:
        reason = f"no contexts retrieved: none of {len(records)} sentence(s) can be supported"
    else:
        reason = (f"{supported} of {len(records)} sentence(s) have >= {threshold:g} of their content words "
                  "in the contexts")
        weakest = min(records, key=lambda r: r["precision"])
        if not weakest["supported"]:
            reason += f"; least supported: {weakest['sentence'][:80]!r} (missing {weakest['unsupported_tokens'][:5]})"
    return Outcome(supported / len(records), reason, details)


def _validate(params: dict[str, Any]) -> None:
    if not 0.0 < params["threshold"] <= 1.0:
        raise InvalidParameterError(
            f"metric 'lexical_faithfulness': parameter 'threshold' expected a number in (0, 1], "
            f"got {params['threshold']!r}"
        )


register_lexical(
    "lexical_faithfulness",
    score_sample,
    role="answer",
    summary="Share of answer sentences whose content words mostly occur in the retrieved contexts (no model).",
    formula="score = |{s : prec(s) >= threshold}| / |{s}| over answer sentences s with content words; "
            "prec(s) = |content tokens of s found in the contexts| / |content tokens of s| (distinct tokens)",
    edge_cases=("no answer -> undefined", "answer without content words (empty, only stop words) -> undefined",
                "no contexts retrieved -> 0", "contexts with ids only (no text) -> undefined",
                "sentences without content words are not counted",
                "blind to false combinations of the contexts' own words (swapped numbers, negation)"),
    requires=("answer", "context_texts"),
    params=(Param("threshold", float, DEFAULT_THRESHOLD,
                  "share of a sentence's content words that must occur in the contexts, in (0, 1]",
                  minimum=0.0),),
    default_names=("lexical_faithfulness",),
    undefined="undefined (None) when the sample has no answer, the answer has no content word, "
              "or the contexts carry no text",
    validate=_validate,
    check=LabelCheck(label="faithful"),
    answer_preference=7,
)
