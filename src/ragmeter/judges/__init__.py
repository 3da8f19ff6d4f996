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

from typing import Any

from ..backend_config import JudgeConfig
from ..errors import (
    JudgeAuthError,
    JudgeBadRequest,
    JudgeBudgetExceeded,
    JudgeConnectionError,
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
from .judge import Judge, JudgeResult
from .parsing import extract_json, parse_reply
from .pricing import PRICES, lookup_price
from .prompts import DATA_NOTICE, PromptTemplate, ReplyShape, delimit, escape_tags
from .registry import BackendInfo, backend_from_spec, list_backends, parse_spec, register_backend

#: Keyword options of :class:`Judge` (the fields of :class:`~ragmeter.backend_config.JudgeConfig`);
#: :func:`from_spec` sends every other option to the backend.
JUDGE_OPTIONS = JudgeConfig.judge_option_names()


#: The API key placeholder of a dry-run judge built without a key (never sent: a dry run sends nothing).
DRY_RUN_KEY = "dry-run-sends-nothing"


def from_spec(spec: str, **options: Any) -> Judge:
    """Build a :class:`Judge` from a spec string such as ``openai:gpt-4o-mini``.

    ``options`` that :class:`Judge` takes (``cache``, ``concurrency``, ``rpm``, ``tpm``,
    ``timeout``, ``max_retries``, ``max_cost``, ``prices``, ``dry_run``, ``repeat``,
    ``temperature``, ``max_tokens``, ``seed``...) configure the judge; the rest go to the backend
    (``api_key``, ``base_url``, ``structured_output``...). A missing API key raises
    :class:`~ragmeter.errors.JudgeAuthError` here, naming the environment variable to set,
    except with ``dry_run=True``, which sends nothing and so needs no key.

    Examples: ``openai:gpt-4o-mini``, ``openai:qwen2.5@http://127.0.0.1:8080/v1``,
    ``ollama:llama3.1``, ``litellm:anthropic/claude-3-5-haiku``, ``llamacpp:/models/judge.gguf``.
    """
    judge_opts = {k: v for k, v in options.items() if k in JUDGE_OPTIONS}
    backend_opts = {k: v for k, v in options.items() if k not in JUDGE_OPTIONS}
    try:
        backend = backend_from_spec(spec, **backend_opts)
    except JudgeAuthError:
        if not judge_opts.get("dry_run") or "api_key" in backend_opts:
            raise
        # a dry run sends nothing, so it needs no key: the placeholder is never used
        backend = backend_from_spec(spec, **backend_opts, api_key=DRY_RUN_KEY)
    return Judge(backend, **judge_opts)


def resolve(judge: Any) -> Any:
    """The judge of a run: a spec string is built with :func:`from_spec`, a
    :class:`~ragmeter.backend_config.JudgeConfig` with its options; a judge object or None is
    returned as it is."""
    if isinstance(judge, str):
        return from_spec(judge)
    if isinstance(judge, JudgeConfig):
        return from_spec(judge.spec, **judge.judge_options(), **judge.backend)
    return judge


__all__ = [
    "DATA_NOTICE",
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
    "JudgeConnectionError",
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
