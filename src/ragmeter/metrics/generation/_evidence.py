r"""Evidence windows: the few context sentences most related to a claim, with character offsets (no model).

A small judge that reads a 3,000-character article for every claim loses the claim in the text and
spends most of its time reading. :func:`evidence_window` gives it a short, focused excerpt instead:

1. The contexts are cut into sentences (:func:`context_sentences`, the rule of :mod:`._sentences`:
   at line breaks and after ``.``, ``!``, ``?`` or ``…`` followed by whitespace, not after a decimal
   point or an abbreviation such as "a.m."). Each sentence keeps its context index and its
   ``[start, end)`` character offsets in that context's text.
2. Each sentence :math:`s` is scored against the claim :math:`c` by the IDF-weighted overlap of
   their content words (case-folded word tokens minus function words, with the plural/verb suffix
   folding of :mod:`._grounding`; digits are words, so "142" matches "142"):

   .. math:: \mathrm{lex}(c, s) = \sum_{w \in W(c) \cap W(s)} \log\left(1 + \frac{N}{df(w)}\right)

   where :math:`N` is the number of context sentences and :math:`df(w)` the number that contain
   :math:`w`: a word that few sentences share (a name, a number) counts more than one that many do.
   With an embedder, the score is :math:`\mathrm{lex}/\max_s \mathrm{lex} + \cos(e_c, e_s)`
   (lexical share plus cosine similarity of the embeddings); without one, ``lex`` alone.
3. The window is the :data:`WINDOW_SENTENCES` highest-scoring sentences (ties: the earlier one),
   shown in document order; when the joined contexts are at most :data:`WHOLE_CONTEXT_CHARS`
   characters, the window is the whole context (nothing to focus, and every claim of the answer
   then shares the same excerpt, so the judge server can reuse the prompt prefix).

Edge cases: no context sentence -> an empty window; a claim sharing no content word with any
sentence -> the first :data:`WINDOW_SENTENCES` sentences (score 0 for all, ties by position).
Both constants were fixed before measuring (bench/results/faithfulness_by_kind.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..lexical.lexical_faithfulness import content_tokens
from ._grounding import _stem
from ._sentences import sentence_spans

#: how many context sentences a window holds when the contexts are long
WINDOW_SENTENCES = 4
#: joined contexts up to this many characters are shown whole
WHOLE_CONTEXT_CHARS = 1500


@dataclass(frozen=True)
class Span:
    """One context sentence: ``text`` is ``contexts[context][start:end]``."""

    context: int
    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready span (for the result's details and the report)."""
        return {"context": self.context, "start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True)
class Window:
    """An evidence window: its sentences in document order, whether it is the whole context, and the
    text the judge reads (the sentences joined, contexts separated by a blank line)."""

    spans: tuple[Span, ...]
    whole: bool

    @property
    def text(self) -> str:
        """The excerpt as shown to the judge."""
        out: list[str] = []
        last = None
        for s in self.spans:
            if last is not None:
                out.append("\n\n" if s.context != last.context else ("\n" if s.start > last.end + 2 else " "))
            out.append(s.text)
            last = s
        return "".join(out)


def context_sentences(contexts: Sequence[str]) -> list[Span]:
    """Every sentence of every context with its offsets (rule 1 of the module docstring)."""
    return [Span(i, a, b, text[a:b]) for i, text in enumerate(contexts) for a, b in sentence_spans(text)]


def stemmed_words(text: str) -> set[str]:
    """The content words of ``text``, stemmed: the word set :math:`W` of the module docstring's rule 2."""
    return {_stem(w) for w in content_tokens(text)}


def lexical_scores(claim: str, sentences: Sequence[Span]) -> list[float]:
    """:math:`\\mathrm{lex}(c, s)` of the module docstring for every sentence."""
    return word_scores(stemmed_words(claim), sentences)[0]


def word_scores(target: set[str], sentences: Sequence[Span]) -> tuple[list[float], list[float]]:
    """For every sentence, the IDF-weighted overlap of the word set ``target`` with the sentence (the
    :math:`\\mathrm{lex}` of the module docstring) and with the whole context the sentence is in (the
    same weights: the words of all its context's sentences)."""
    words = [stemmed_words(s.text) for s in sentences]
    n = len(sentences)
    df: dict[str, int] = {}
    for ws in words:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    passages: dict[int, set[str]] = {}
    for s, ws in zip(sentences, words, strict=True):
        passages.setdefault(s.context, set()).update(ws)
    weight = {w: math.log(1 + n / df[w]) for w in df}
    return ([sum(weight[w] for w in target & ws) for ws in words],
            [sum(weight[w] for w in target & passages[s.context]) for s in sentences])


def rank(claim: str, sentences: Sequence[Span], embeddings: Any = None, claim_embedding: Any = None) -> list[int]:
    """Sentence indices, best first (rule 2): lexical score, plus cosine similarity when the
    sentences' and the claim's embeddings (unit-normalised or not) are given."""
    lex = lexical_scores(claim, sentences)
    score = list(lex)
    if embeddings is not None and claim_embedding is not None:
        top = max(lex) or 1.0
        cn = math.sqrt(sum(float(x) * float(x) for x in claim_embedding)) or 1.0
        for i, e in enumerate(embeddings):
            en = math.sqrt(sum(float(x) * float(x) for x in e)) or 1.0
            cos = sum(float(a) * float(b) for a, b in zip(e, claim_embedding, strict=True)) / (en * cn)
            score[i] = lex[i] / top + cos
    return sorted(range(len(sentences)), key=lambda i: (-score[i], i))


def evidence_window(claim: str, contexts: Sequence[str], *, k: int = WINDOW_SENTENCES,
                    whole_chars: int = WHOLE_CONTEXT_CHARS, sentences: Sequence[Span] | None = None,
                    embeddings: Any = None, claim_embedding: Any = None) -> Window:
    """The evidence window of ``claim`` in ``contexts`` (the module docstring's rule).

    ``sentences`` (from :func:`context_sentences`) may be passed to avoid re-splitting per claim;
    ``embeddings`` (one per sentence) and ``claim_embedding`` add the embedding similarity.
    """
    spans = list(context_sentences(contexts) if sentences is None else sentences)
    if sum(len(t) for t in contexts if t.strip()) <= whole_chars:
        return Window(tuple(spans), True)
    chosen = sorted(rank(claim, spans, embeddings, claim_embedding)[:k], key=lambda i: (spans[i].context,
                                                                                         spans[i].start))
    return Window(tuple(spans[i] for i in chosen), False)


def claim_windows(contexts: Sequence[str], claims: Sequence[str]) -> list[Window]:
    """Each claim's evidence window in ``contexts`` (lexical ranking), the sentences cut once."""
    spans = context_sentences(contexts)
    return [evidence_window(c, contexts, sentences=spans) for c in claims]
