"""Shared machinery of the LLM-judged metrics: prompts, reply schemas, shared steps, the evaluator base.

Every judge call goes through :class:`ragmeter.judges.Judge` (cache, retries, parsing, cost).
Steps that several metrics need on the same sample are computed once per run and shared
(single-flight memo keyed by judge, event loop, step and content):

============================  =========================  ==========================================
step                          reads                      used by
============================  =========================  ==========================================
``analyse_answer``            query, answer              faithfulness, hallucination_rate (claims),
                                                         answer_relevancy (questions, noncommittal)
``verify_claims``             claims, contexts           faithfulness, hallucination_rate
``rate_chunks``               query, contexts            context_relevancy, context_precision_llm
(``chunk_relevance`` if                                  (0-10 per chunk; yes/no with scale=binary)
binary)
============================  =========================  ==========================================

So the canonical set ``faithfulness, answer_relevancy, context_relevancy, context_recall`` costs 3
judge calls per sample (context_recall is text matched). ``steps=separate`` on faithfulness /
answer_relevancy uses one prompt per task instead (4 calls).

``scale=graded`` (the default of context_relevancy, context_precision_llm, correctness and
answer_relevancy without an embedder) asks the judge for the 0-10 rating itself;
``scale=binary`` asks for yes/no decisions and derives the rating. Neither separated good from
bad with a 0.5B judge (docs/generation.md), so the default is the specified 0-10 rating.

Reply schemas are lenient about *form* (``"Yes"``, ``true`` and ``"yes"`` are one verdict; ``"7"``
is 7) but strict about *content*: every field the request schema requires is required (no
model field has a default, so ``{"score": 5}`` never validates), a list of per-item decisions
must hold exactly one entry per item asked (:func:`sized`), and a verdict that is neither yes
nor no, or a rating outside its range, fails validation. Any of these makes the judge layer ask
once for a repair and then record a :class:`~ragmeter.errors.JudgeParseError` on the sample;
a reply that failed validation is never cached.

A non-empty answer with no claim is scored only when the judge says so explicitly
(``no_facts: yes``); otherwise the claim metrics are undefined with the reason. Likewise no
generated question is undefined unless the judge called the answer evasive (then 0).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any
from weakref import WeakKeyDictionary

from pydantic import AliasChoices, BaseModel, BeforeValidator, Field, WithJsonSchema, create_model

from ...judges import PromptTemplate, ReplyShape
from ...names import MetricName
from ...registry import MetricSpec, Param
from ...types import MetricResult, Sample

PROMPTS = Path(__file__).with_name("prompts")
STEPS = Param("steps", str, "shared", "shared: one call reads query+answer for several tasks; separate: one "
              "call per task", choices=("shared", "separate"))
SCALE = Param("scale", str, "graded", "graded: the judge rates 0-10 directly; binary: yes/no decisions per item, "
              "from which ragmeter derives the 0-10 rating", choices=("graded", "binary"))


@cache
def template(name: str) -> PromptTemplate:
    """The versioned prompt template ``prompts/<name>.prompt``."""
    return PromptTemplate.from_file(PROMPTS / f"{name}.prompt")


# ---- reply schemas ---------------------------------------------------------------------------------

_YES = {"yes", "y", "true", "supported", "1"}
_NO = {"no", "n", "false", "unsupported", "not supported", "0"}


def _yes_no(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().strip(".").lower() in _YES | _NO:
        return v.strip().strip(".").lower() in _YES
    raise ValueError(f'expected "yes" or "no", got {v!r}')


#: A yes/no field that accepts ``"Yes"``, ``true``, ``"no."``... and nothing else. Its JSON schema
#: (what a grammar-enforcing server lets the model write) is the string ``"yes"`` or ``"no"``, the
#: words the prompts use.
YesNo = Annotated[bool, BeforeValidator(_yes_no), WithJsonSchema({"type": "string", "enum": ["yes", "no"]})]


class AnswerAnalysis(BaseModel):
    """Reply of ``analyse_answer`` (the prompt calls the noncommittal flag ``evasive``).

    ``no_facts`` is the judge's explicit statement that the answer makes no factual claim: only
    with it does an empty ``claims`` list mean "nothing to check" (see :func:`no_claim_result`).
    """

    claims: list[str]
    no_facts: YesNo
    questions: list[str]
    noncommittal: YesNo = Field(validation_alias=AliasChoices("evasive", "noncommittal"))


class Claims(BaseModel):
    """Reply of ``decompose_answer``."""

    claims: list[str]
    no_facts: YesNo


class Questions(BaseModel):
    """Reply of ``generate_questions`` (``evasive`` in the prompt)."""

    questions: list[str]
    noncommittal: YesNo = Field(validation_alias=AliasChoices("evasive", "noncommittal"))


class Verdict(BaseModel):
    """One claim's verdict."""

    statement: int
    evidence: str
    supported: YesNo


class Verdicts(BaseModel):
    """Reply of ``verify_claims`` (ask with ``sized(Verdicts, n)``: exactly one verdict per claim)."""

    verdicts: list[Verdict]


class Rating(BaseModel):
    """One passage's 0-10 rating."""

    passage: int
    reason: str
    rating: float = Field(ge=0, le=10)


class Ratings(BaseModel):
    """Reply of ``rate_chunks`` (ask with ``sized(Ratings, n)``: exactly one rating per passage)."""

    ratings: list[Rating]


class ChunkVerdict(BaseModel):
    """One passage's yes/no relevance decision."""

    passage: int
    reason: str
    relevant: YesNo


class ChunkVerdicts(BaseModel):
    """Reply of ``chunk_relevance`` (ask with ``sized(ChunkVerdicts, n)``)."""

    passages: list[ChunkVerdict]


class Responds(BaseModel):
    """Reply of ``answer_addresses``: does the answer respond to the question?"""

    reason: str
    responds: YesNo


class Agreement(BaseModel):
    """Reply of ``answer_agrees``: two decisions against the reference answer."""

    reason: str
    same_answer: YesNo
    conflicts: YesNo


class Graded(BaseModel):
    """A 0-10 rating with its reason (``answer_match``, ``correctness``)."""

    reason: str
    rating: float = Field(ge=0, le=10)


@cache
def sized(base: type[BaseModel], n: int) -> type[BaseModel]:
    """``base`` with its one list field constrained to exactly ``n`` entries (one per item asked).

    The constraint is in the JSON schema sent (``minItems``/``maxItems``: a grammar-enforcing
    server cannot stop early or add entries) and in validation: a reply with another count fails
    validation, so the judge layer asks once for a repair and then records a
    :class:`~ragmeter.errors.JudgeParseError`. ``{"verdicts": []}`` for 3 claims is never a score.
    """
    lists = [k for k, f in base.model_fields.items() if getattr(f.annotation, "__origin__", None) is list]
    if len(lists) != 1:
        raise TypeError(f"{base.__name__}: expected exactly one list field, got {lists}")
    item = base.model_fields[lists[0]].annotation
    return create_model(f"{base.__name__}{n}", __base__=base,
                        **{lists[0]: (item, Field(min_length=n, max_length=n))})


# ---- shared steps ----------------------------------------------------------------------------------

_MEMO: WeakKeyDictionary[Any, OrderedDict[tuple[Any, ...], asyncio.Future[Any]]] = WeakKeyDictionary()
_MEMO_SIZE = 20_000


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode()).hexdigest()[:32]


async def shared(judge: Any, step: str, content: tuple[Any, ...], compute: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``compute`` once per (judge, loop, step, content); concurrent callers await the same task.

    A failed step is not memoised, so each metric records its own error and a retry can succeed.
    """
    loop = asyncio.get_running_loop()
    memo = _MEMO.setdefault(judge, OrderedDict())
    key = (id(loop), step, _digest(*content))
    fut = memo.get(key)
    if fut is None or (fut.done() and fut.exception() is not None):
        fut = loop.create_task(compute())  # type: ignore[assignment]
        memo[key] = fut
        while len(memo) > _MEMO_SIZE:
            memo.popitem(last=False)
    else:
        memo.move_to_end(key)
    return await fut


def reply_shape(key: str, entries: Sequence[dict[str, Any]]) -> ReplyShape:
    """The reply skeleton ``{key: [entry, ...]}``, one entry per item (see :class:`ReplyShape`).

    Entries name items by number only and hold ``<...>`` slots: no evaluated text (a claim, a
    passage's opening words) is ever copied into the skeleton, which sits in the instruction part
    of the prompt; the items themselves are shown inside their data tags.
    """
    return ReplyShape(json.dumps({key: list(entries)}, ensure_ascii=False))


def numbered(items: Sequence[str]) -> str:
    """``1. a\\n2. b`` (how claims and passages are shown to the judge)."""
    return "\n".join(f"{i}. {' '.join(t.split())}" for i, t in enumerate(items, start=1))


#: Why a non-empty answer with no claim and without the judge's explicit "no fact" is undefined.
NO_CLAIM_UNDEFINED = ("undefined: the judge listed no claim for a non-empty answer but did not state that it "
                      "makes no factual claim (no_facts was 'no')")


async def analyse_answer(judge: Any, sample: Sample, tag: str) -> AnswerAnalysis:
    """Claims, back-generated questions and the noncommittal flag, in one shared call."""
    t = template("analyse_answer")

    async def run() -> AnswerAnalysis:
        r = await judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), AnswerAnalysis,
                              tag=tag, template_version=t.cache_version)
        return r.value

    return await shared(judge, t.cache_version, (sample.query, sample.answer), run)


async def decompose(judge: Any, sample: Sample, tag: str, steps: str) -> tuple[list[str], bool]:
    """The answer's atomic claims (from the shared analysis, or a dedicated call) and the judge's
    explicit ``no_facts`` statement (True: "the answer makes no factual claim")."""
    if steps == "shared":
        a = await analyse_answer(judge, sample, tag)
        return [c for c in a.claims if c.strip()], a.no_facts
    t = template("decompose_answer")

    async def run() -> tuple[list[str], bool]:
        r = await judge.judge(t.messages(question=sample.query, answer=sample.answer or ""), Claims,
                              tag=tag, template_version=t.cache_version)
        return [c for c in r.value.claims if c.strip()], r.value.no_facts

    return await shared(judge, t.cache_version, (sample.query, sample.answer), run)


def joined_context(sample: Sample) -> str:
    """The retrieved contexts' texts, joined as the evidence claims are checked against."""
    return "\n\n".join(t for t in sample.context_texts if t.strip())


EVIDENCE_SLOT = "<sentence from the context, or none>"


def _evidence(text: str) -> str:
    """The evidence a verdict quotes; "" for none or for the unfilled slot copied from the skeleton."""
    t = text.strip()
    return "" if t.lower() in ("none", "<none>", "", EVIDENCE_SLOT) else t


async def verify(judge: Any, sample: Sample, claims: list[str], tag: str,
                 scoring: str = "hard") -> list[tuple[bool, str, float | None]]:
    """One (verdict, evidence, P(yes)) per claim, all claims in one call; the reply must hold exactly
    one verdict per claim (else one repair, then a JudgeParseError).

    ``scoring="auto"`` asks for log-probabilities and gives each claim
    P(yes) / (P(yes) + P(no)) of the token where its ``"supported"`` value starts
    (:func:`._verdict.field_yes_shares`); None where the backend returned none or the token could
    not be located (the caller then uses the hard verdict). ``"hard"``: always None.
    """
    from ._verdict import TOP_LOGPROBS, field_yes_shares

    t = template("verify_claims")
    context = joined_context(sample)

    async def run() -> list[tuple[bool, str, float | None]]:
        shape = reply_shape("verdicts", [{"statement": i, "evidence": EVIDENCE_SLOT, "supported": "<yes or no>"}
                                         for i in range(1, len(claims) + 1)])
        r = await judge.judge(t.messages(context=context, statements=numbered(claims), shape=shape),
                              sized(Verdicts, len(claims)), tag=tag, template_version=t.cache_version,
                              top_logprobs=TOP_LOGPROBS if scoring == "auto" else None)
        verdicts = r.value.verdicts
        shares = field_yes_shares(r.logprobs, r.raw, "supported") if scoring == "auto" else None
        if shares is None or len(shares) != len(verdicts):
            shares = [None] * len(verdicts)
        p_of = {id(v): p for v, p in zip(verdicts, shares, strict=True)}
        return align(verdicts, len(claims), "statement",
                     lambda v: (v.supported, _evidence(v.evidence), p_of[id(v)]))

    return await shared(judge, f"{t.cache_version}/{scoring}", (context, claims), run)


async def rate_chunks(judge: Any, sample: Sample, tag: str, scale: str = "graded",
                      scoring: str = "hard") -> tuple[list[float], list[str], list[bool | None]]:
    """A 0-10 rating, a reason and the hard yes/no decision (None for graded) per retrieved chunk,
    in one call; the reply must hold exactly one entry per chunk (else one repair, then a
    JudgeParseError).

    ``scale="binary"`` asks one yes/no relevance decision per chunk: rating 10 or 0, or with
    ``scoring="auto"`` and log-probabilities from the backend 10 * P(yes) / (P(yes) + P(no)) of the
    token where the chunk's ``"relevant"`` value starts (:func:`._verdict.field_yes_shares`; 10/0
    where it cannot be located). ``scale="graded"`` asks for a 0-10 rating directly (``scoring`` is
    not used: probability-weighted ratings are not implemented yet).
    """
    from ._verdict import TOP_LOGPROBS, field_yes_shares

    scoring = scoring if scale == "binary" else "hard"
    if scale == "binary":
        t, model, key = template("chunk_relevance"), ChunkVerdicts, "passages"
        slot: dict[str, str] = {"relevant": "<yes or no>"}
        value: Callable[[Any], float] = lambda x: 10.0 if x.relevant else 0.0  # noqa: E731
    else:
        t, model, key = template("rate_chunks"), Ratings, "ratings"
        slot, value = {"rating": "<whole number 0-10>"}, lambda x: x.rating
    texts = sample.context_texts

    async def run() -> tuple[list[float], list[str], list[bool | None]]:
        shape = reply_shape(key, [{"passage": i, "reason": "<short reason>", **slot}
                                  for i in range(1, len(texts) + 1)])
        r = await judge.judge(t.messages(question=sample.query, passages=numbered(texts), shape=shape),
                              sized(model, len(texts)), tag=tag, template_version=t.cache_version,
                              top_logprobs=TOP_LOGPROBS if scoring == "auto" else None)
        items = getattr(r.value, key)
        shares = field_yes_shares(r.logprobs, r.raw, "relevant") if scoring == "auto" else None
        if shares is None or len(shares) != len(items):
            shares = [None] * len(items)
        p_of = {id(x): p for x, p in zip(items, shares, strict=True)}
        rated = align(items, len(texts), "passage",
                      lambda x: value(x) if p_of[id(x)] is None else 10.0 * p_of[id(x)])
        hard = align(items, len(texts), "passage", lambda x: x.relevant if scale == "binary" else None)
        return rated, align(items, len(texts), "passage", lambda x: x.reason), hard

    return await shared(judge, f"{t.cache_version}/{scoring}", (sample.query, texts), run)


def align(items: Sequence[Any], n: int, index_field: str, value: Callable[[Any], Any]) -> list[Any]:
    """Map judge items to positions 1..n: by their index field when every item has a valid distinct one,
    else by order. The reply models are sized (exactly n items), so every position gets a value."""
    out: list[Any] = [None] * n
    idx = [getattr(it, index_field) for it in items]
    if idx and all(isinstance(i, int) and 1 <= i <= n for i in idx) and len(set(idx)) == len(idx):
        for i, it in zip(idx, items, strict=True):
            out[i - 1] = value(it)
    else:
        for pos, it in enumerate(items[:n]):
            out[pos] = value(it)
    return out


# ---- the evaluator base ----------------------------------------------------------------------------

class JudgedEvaluator:
    """Base of every LLM-judged metric: subclasses implement :meth:`ascore`.

    A :class:`~ragmeter.errors.JudgeError` raised by the judge propagates; the runner records it
    as the sample's error for this metric (never a score).
    """

    def __init__(self, spec: MetricSpec, name: MetricName, judge: Any, embedder: Any) -> None:
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        self.params = {p.name: p.default for p in spec.params} | name.kwargs
        self.cutoff = name.cutoff
        self.judge = judge
        self.embedder = embedder

    async def ascore(self, sample: Sample) -> MetricResult:  # pragma: no cover - abstract
        """Score one sample."""
        raise NotImplementedError

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Score ``sample`` (judge calls are awaited, never blocking the loop)."""
        return await self.ascore(sample)

    def evaluate(self, sample: Sample) -> MetricResult:
        """Synchronous :meth:`aevaluate` (not for use inside a running event loop)."""
        return asyncio.run(self.aevaluate(sample))

    def result(self, score: float | None, reason: str, **details: Any) -> MetricResult:
        """A result of this metric."""
        return MetricResult(name=self.name, score=score, reason=reason, details=details, version=self.version)


def register_judged(
    name: str,
    cls: type[JudgedEvaluator],
    *,
    role: str,
    summary: str,
    formula: str,
    edge_cases: tuple[str, ...],
    requires: tuple[str, ...],
    calls: str,
    params: tuple[Param, ...] = (),
    cutoff: str = "none",
    needs_embedder: bool = False,
    higher_is_better: bool = True,
    undefined: str = "never undefined",
    version: str = "1",
    aliases: tuple[str, ...] = (),
) -> MetricSpec:
    """Declare and register one judged metric (one call per metric module)."""
    from ...registry import register

    box: list[MetricSpec] = []
    spec = MetricSpec(
        name=name, summary=summary, formula=formula, edge_cases=(*edge_cases, f"judge calls per sample: {calls}"),
        factory=lambda n, judge, embedder: cls(box[0], n, judge, embedder),
        category="generation", version=version, aliases=aliases, params=params, cutoff=cutoff,  # type: ignore[arg-type]
        needs_judge=True, needs_embedder=needs_embedder, higher_is_better=higher_is_better, requires=requires,
        default_names=(name,), undefined=undefined, extra={"calls": calls}, role=role,  # type: ignore[arg-type]
    )
    box.append(spec)
    return register(spec)
