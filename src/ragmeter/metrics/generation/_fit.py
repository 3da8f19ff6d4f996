r"""Judge calls that fit the judge's context window.

Ten retrieved chunks of 2,000 characters are about 5,000 tokens; a local judge server started with
a 4,096-token window rejects a call that carries them all, and every sample would be an error. When
the judge rejects a call as too long (:class:`~ragmeter.errors.JudgeContextOverflow`), what is
sent instead depends on the call.

**Claims judged alone** (:func:`alone_call`; the verdict list of ``mode=claims``, and of
``mode=sentences`` with ``verdicts=list``). So are the claims of a sample whose joined contexts are
long, without sending the verdict list, whatever the judge's window, so that the method depends on
the data, not on how the server was started:

- ``mode=claims``' list reads the whole joined contexts; past :data:`CLAIM_LIST_MAX_CHARS`
  characters (1,500, the length past which a claim's evidence window is no longer the whole
  context) each claim is judged alone, against the few sentences that bear on it rather than a
  whole article. Rules and runs: bench/results/faithfulness_by_kind.md, sections 151-152a; on
  summaries of one 2,500-3,500 character article with a 1.5B judge, AUROC 0.930, 0.600 and 0.939
  on three design sets against the list's 0.890, 0.560 and 0.899.
- ``mode=sentences``' list reads the union of its sentences' windows; past
  :data:`LONG_CONTEXT_CHARS` characters of joined contexts (8,000) each sentence is judged alone.

Each claim is judged alone,
one yes/no word scored by P(yes), against its evidence window (the few context sentences most
related to it: :func:`._evidence.claim_windows`, the prompt of
``verdicts=word``). A claim is then judged against the sentences chosen for it rather than against
an excerpt shared with the other claims. Chosen by a rule written before its runs: with a 1.5B judge
on long summaries among 8 articles each, AUROC 0.880 on design rows and 0.860 on held-out rows,
against the excerpt's 0.740 and 0.690 (bench/results/faithfulness_by_kind.md, sections 149-149a).
A claim whose window is itself rejected makes the sample an error.

**An excerpt** (:func:`fitted_call`; the one call of ``mode=direct`` and ``mode=inline``, which
reads the answer whole, the source answer of ``mode=sentences``' cross-check, which reads the
question, and a rubric that reads the contexts, :mod:`.rubric`). The call is sent again with the
context sentences that fit:

1. **Budget.** From the window :math:`n_{ctx}` and the rejected prompt's tokens :math:`P`, as the
   server says them: the prompt's characters per token :math:`r = \mathrm{chars}(prompt) / P`, and
   the context may take

   .. math:: B = \mathrm{FILL} \cdot r \cdot \left(n_{ctx} - m - (P - \mathrm{chars}(context) / r)\right)

   characters, where :math:`m` is the request's ``max_tokens`` (the reply's room: vLLM counts it
   against the window, llama.cpp stops the reply where the window ends) and ``FILL`` is
   :data:`FILL`. Where the server says the window but not the prompt's tokens, :math:`r` is
   :data:`CHARS_PER_TOKEN`; where it says neither, :math:`B` is half the context's characters.
2. **Sentences.** The contexts are cut into sentences as the evidence windows cut them
   (:func:`._evidence.context_sentences`), and each of the texts the sentences are ranked for (the
   answer's check-worthy sentences, or the question) ranks them by the windows' lexical score
   (:func:`._evidence.rank`). The sentences are taken in rounds, each text's best sentence not yet
   taken per round, in order, while the excerpt stays within :math:`B` (a sentence that does not
   fit is passed over); they are shown in document order, contexts apart
   (:class:`._evidence.Window`). Every text thus gets its most related sentences first.
3. **Retry.** The call is sent again with that excerpt. If it is rejected again, the budget is
   worked out again from the new rejection (or halved), up to :data:`MAX_FITS` excerpts; then the
   error stands, as it does when no sentence fits.

Either way, each sample's calls are worked out from its own rejection, so a sample scores the same
whatever else the run holds and in whatever order the samples go: a long sample costs one rejected
request (the server refuses it before evaluating anything), which the judge's stats count under
``attempt_errors`` and ``errors`` as ``JudgeContextOverflow``, and, once the calls sent instead
have been answered, under ``recovered`` too (:meth:`~ragmeter.judges.Judge.recovered`): the command
line's judge line counts it apart from the errors that cost a sample its score. Faithfulness and
hallucination_rate share the rejection and what follows it (:func:`._memo.shared`).

The result's details say so (``context_fit``: the window and the rejected prompt's tokens where
known, the context's sentences and characters, how many of each the judge read, and those
sentences with their offsets; for claims judged alone ``claims_alone`` and each claim's
``window``), and so do a note and the reason. A claim whose support lies in a sentence left out
can be judged unsupported: the score is the judge's reading of what it was shown, which is why it
is recorded. The offline parts (the evidence veto, the answer checks, the evidence spans) read the
whole contexts as always.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from ...errors import JudgeContextOverflow
from ...types import Sample
from ._base import note
from ._checkworthy import split_claims
from ._evidence import WHOLE_CONTEXT_CHARS, Span, Window, claim_windows, context_sentences, rank
from ._memo import shared
from ._prompting import joined_context

T = TypeVar("T")

#: joined contexts longer than this many characters have each claim judged alone against its evidence
#: window without a verdict list, whatever the judge's window (about 2,000 tokens; chosen by a rule
#: written before its runs, bench/results/faithfulness_by_kind.md section 151); mode=sentences' list
LONG_CONTEXT_CHARS = 8000
#: the same for mode=claims' verdict list, which reads the whole joined contexts: past the length where
#: an evidence window stops being the whole context (bench/results/faithfulness_by_kind.md section 152)
CLAIM_LIST_MAX_CHARS = WHOLE_CONTEXT_CHARS
#: the share of the worked-out room the excerpt may fill (token counts per character vary along a text)
FILL = 0.9
#: excerpts tried after a rejection before the error stands
MAX_FITS = 3
#: the reply's room when the judge does not say its ``max_tokens``
DEFAULT_REPLY_TOKENS = 1024
#: characters per token assumed when the server says its window but not the prompt's tokens (fewer
#: than English prose's four, so the excerpt errs short)
CHARS_PER_TOKEN = 3.0


def budget(error: JudgeContextOverflow, prompt_chars: int, context_chars: int, reply_tokens: int) -> int:
    """The characters of context that fit (rule 1 of the module docstring); 0 when none do."""
    if error.n_ctx is None:
        return context_chars // 2
    r = prompt_chars / error.prompt_tokens if error.prompt_tokens else CHARS_PER_TOKEN
    fixed = (prompt_chars - context_chars) / r
    return max(0, int(FILL * r * (error.n_ctx - reply_tokens - fixed)))


def answer_queries(sample: Sample) -> list[str]:
    """The answer's check-worthy sentences (all of them when none is), which the context sentences
    are ranked for when a call that reads the answer whole does not fit the judge's window."""
    sentences = split_claims(sample.answer or "")
    return [s.text for s in sentences if s.checkworthy] or [s.text for s in sentences] or [sample.answer or ""]


def excerpt_clause(fit: dict[str, Any], reader: str) -> str:
    """The reason's clause on a call sent again with the context sentences that fit (``fit`` is
    :func:`fitted_call`'s ``context_fit`` record); ``reader`` names what read them."""
    return (f"; the contexts exceed the judge's context window: {reader} read {fit['sentences_read']} of "
            f"their {fit['context_sentences']} sentences (context_fit)")


def fitted_window(claims: Sequence[str], spans: Sequence[Span], max_chars: int) -> Window:
    """The excerpt of rule 2: rounds of each claim's best sentence not yet taken, within
    ``max_chars`` characters as :attr:`._evidence.Window.text` joins them (a separator counted as
    two characters)."""
    orders = [rank(c, spans) for c in claims]
    taken: set[int] = set()
    size = 0
    for j in range(len(spans)):
        for order in orders:
            i = order[j]
            if i in taken:
                continue
            cost = len(spans[i].text) + (2 if taken else 0)
            if size + cost <= max_chars:
                taken.add(i)
                size += cost
    chosen = sorted(taken, key=lambda i: (spans[i].context, spans[i].start))
    return Window(tuple(spans[i] for i in chosen), False)


async def fitted_call(judge: Any, sample: Sample, step: str, claims: list[str],
                      send: Callable[[str | None], Awaitable[T]], prompt_chars: Callable[[str], int], *,
                      tag: str, items: str = "claim",
                      reply_tokens: int | None = None) -> tuple[T, dict[str, Any] | None]:
    """``await send(None)`` (the call against ``sample``'s joined contexts,
    :func:`._prompting.joined_context`) or, when the judge rejects it as too long,
    ``await send(excerpt)`` with the excerpt of the module docstring: the value and the
    ``context_fit`` record (None when the whole contexts were read). Once per judge, ``step`` and
    sample content (:func:`._memo.shared`): faithfulness and hallucination_rate share one
    rejection, one excerpt, one count.

    ``claims`` are the texts the sentences are ranked for (the answer's check-worthy sentences for
    a call that reads the answer whole), ``items`` what the note calls them;
    ``prompt_chars(context)`` is the prompt's length in characters with ``context`` in it;
    ``reply_tokens`` is the request's ``max_tokens`` where it sets one (a one-word verdict's 1),
    else ``judge.max_tokens``; ``tag`` is the calls' tag, under which the rejections are counted as
    recovered once an excerpt is answered."""
    whole = joined_context(sample)

    async def run() -> tuple[T, dict[str, Any] | None]:
        spans = context_sentences([t for t in sample.context_texts if t.strip()])
        return await _fitted(judge, claims, whole, spans, send, prompt_chars, tag, items, reply_tokens)

    key = (whole, sample.query, sample.answer, claims)
    return cast("tuple[T, dict[str, Any] | None]", await shared(judge, f"fitted/{step}", key, run))


async def _fitted(judge: Any, claims: list[str], whole: str, spans: Sequence[Span],
                  send: Callable[[str | None], Awaitable[T]], prompt_chars: Callable[[str], int], tag: str,
                  items: str, reply_tokens: int | None) -> tuple[T, dict[str, Any] | None]:
    """:func:`fitted_call` on the joined contexts ``whole`` and their sentences ``spans``."""
    try:
        return await send(None), None
    except JudgeContextOverflow as exc:
        first = exc
    if reply_tokens is None:
        reply_tokens = int(getattr(judge, "max_tokens", None) or DEFAULT_REPLY_TOKENS)
    error, context, rejected = first, whole, 1
    for _ in range(MAX_FITS):
        room = budget(error, prompt_chars(context), len(context), reply_tokens)
        window = fitted_window(claims, spans, min(room, len(context) - 1))
        if not window.spans:
            break
        context = window.text
        try:
            value = await send(context)
        except JudgeContextOverflow as exc:
            error, rejected = exc, rejected + 1
            continue
        recovered = getattr(judge, "recovered", None)
        if recovered is not None:
            recovered(tag, type(first).__name__, rejected)
        return value, _record(first, whole, spans, window, items)
    raise first


async def alone_call(judge: Any, sample: Sample, step: str, claims: list[str],
                     send: Callable[[str | None], Awaitable[T]],
                     alone: Callable[[list[Window]], Awaitable[T]], *, tag: str,
                     windows: list[Window] | None = None, max_chars: int = LONG_CONTEXT_CHARS
                     ) -> tuple[T, dict[str, Any] | None]:
    """``await send(None)`` (a verdict list of ``claims``) or, when the joined contexts are longer
    than ``max_chars`` characters or the judge rejects the list as too long, ``await
    alone(windows)``: each claim judged alone against its evidence window (``windows``, else
    :func:`._evidence.claim_windows`), as the module docstring's "Claims judged alone" says; the
    value and the ``context_fit`` record (None when the list was answered). Once per judge,
    ``step`` and sample content, as :func:`fitted_call`."""
    whole = joined_context(sample)

    async def run() -> tuple[T, dict[str, Any] | None]:
        first = None
        if len(whole) <= max_chars:
            try:
                return await send(None), None
            except JudgeContextOverflow as exc:
                first = exc
        texts = [t for t in sample.context_texts if t.strip()]
        own = claim_windows(texts, claims) if windows is None else windows
        value = await alone(own)
        recovered = getattr(judge, "recovered", None)
        if first is not None and recovered is not None:
            recovered(tag, type(first).__name__, 1)
        return value, _alone_record(first, whole, context_sentences(texts), own, max_chars)

    key = (whole, sample.query, sample.answer, claims)
    return cast("tuple[T, dict[str, Any] | None]", await shared(judge, f"alone/{step}", key, run))


def _alone_record(first: JudgeContextOverflow | None, whole: str, spans: Sequence[Span],
                  windows: Sequence[Window], max_chars: int) -> dict[str, Any]:
    """The ``context_fit`` details of claims judged alone, and the note that says them; ``first``
    is the rejection, None when the contexts were longer than ``max_chars`` characters."""
    read = sorted({s for w in windows for s in w.spans}, key=lambda s: (s.context, s.start))
    if first is None:
        why = f"the contexts are longer than {max_chars:,} characters ({len(whole):,})"
    else:
        tokens = f"{first.prompt_tokens} tokens" if first.prompt_tokens else "the prompt"
        why = "the contexts do not fit the judge's context window" + (
            f" ({tokens}, window {first.n_ctx})" if first.n_ctx else "")
    note(f"{why}: each claim was judged alone against its evidence window, {len(read)} of the contexts' "
         f"{len(spans)} sentences in all (context_fit)")
    return {"cause": "window" if first is not None else "length", "max_chars": max_chars,
            "n_ctx": first.n_ctx if first is not None else None,
            "prompt_tokens": first.prompt_tokens if first is not None else None,
            "context_sentences": len(spans), "context_chars": len(whole), "claims_alone": True,
            "sentences_read": len(read), "chars_read": sum(len(s.text) for s in read),
            "read": [s.as_dict() for s in read],
            "windows": [[s.as_dict() for s in w.spans] for w in windows]}


def _record(first: JudgeContextOverflow, whole: str, spans: Sequence[Span], window: Window,
            items: str) -> dict[str, Any]:
    """The ``context_fit`` details, and the note that says them."""
    tokens = f"{first.prompt_tokens} tokens" if first.prompt_tokens else "the prompt"
    where = f" ({tokens}, window {first.n_ctx})" if first.n_ctx else ""
    note(f"the contexts do not fit the judge's context window{where}: the call read {len(window.spans)} of the "
         f"contexts' {len(spans)} sentences, those most related to each {items} first (context_fit)")
    return {"n_ctx": first.n_ctx, "prompt_tokens": first.prompt_tokens,
            "context_sentences": len(spans), "context_chars": len(whole),
            "sentences_read": len(window.spans), "chars_read": len(window.text),
            "read": [s.as_dict() for s in window.spans]}
