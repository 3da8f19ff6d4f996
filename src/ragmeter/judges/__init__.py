"""LLM judges: any chat model as a judge, cached, concurrent, resilient, with cost accounting.

Quick start::

    from pydantic import BaseModel
    from ragmeter.judges import from_spec, PromptTemplate

    class Verdict(BaseModel):
        score: int
        reason: str

    judge = from_spec("openai:gpt-4o-mini", max_cost=2.0)
    result = await judge.judge(messages, Verdict, tag="faithfulness", template_version="faithfulness@1")
    result.value.score, result.raw, result.usage
    judge.stats()

Layout: :mod:`.base` (the seam: :class:`ChatRequest` -> :class:`Completion`),
:mod:`.judge` (the :class:`Judge` wrapper), :mod:`.registry` (backend plugins, spec strings),
:mod:`.backends` (built-ins), :mod:`.cache`, :mod:`.parsing`, :mod:`.prompts`, :mod:`.pricing`.
"""

from __future__ import annotations

from ..errors import (
    JudgeAuthError,
    JudgeBadRequest,
    JudgeBudgetExceeded,
    JudgeConnectionError,
    JudgeContextOverflow,
    JudgeDryRun,
    JudgeError,
    JudgeParseError,
    JudgeRateLimited,
    JudgeServerError,
    JudgeTimeout,
    JudgeUnreachable,
)
from .base import ChatRequest, Completion, FunctionBackend, JudgeBackend, Message, Usage
from .cache import ResponseCache, cache_key, default_cache_dir
from .config import DRY_RUN_KEY, JUDGE_OPTIONS, JudgeConfig, from_spec, resolve
from .judge import Judge, JudgeResult
from .parsing import extract_json, parse_reply
from .pricing import PRICES, lookup_price
from .prompts import DATA_NOTICE, PromptTemplate, ReplyShape, delimit, escape_tags
from .registry import BackendInfo, backend_from_spec, list_backends, parse_spec, register_backend

__all__ = [
    "DATA_NOTICE",
    "DRY_RUN_KEY",
    "JUDGE_OPTIONS",
    "PRICES",
    "BackendInfo",
    "ChatRequest",
    "Completion",
    "FunctionBackend",
    "Judge",
    "JudgeAuthError",
    "JudgeBackend",
    "JudgeBadRequest",
    "JudgeBudgetExceeded",
    "JudgeConfig",
    "JudgeConnectionError",
    "JudgeContextOverflow",
    "JudgeDryRun",
    "JudgeError",
    "JudgeParseError",
    "JudgeRateLimited",
    "JudgeResult",
    "JudgeServerError",
    "JudgeTimeout",
    "JudgeUnreachable",
    "Message",
    "PromptTemplate",
    "ReplyShape",
    "ResponseCache",
    "Usage",
    "backend_from_spec",
    "cache_key",
    "default_cache_dir",
    "delimit",
    "escape_tags",
    "extract_json",
    "from_spec",
    "list_backends",
    "lookup_price",
    "parse_reply",
    "parse_spec",
    "register_backend",
    "resolve",
]
