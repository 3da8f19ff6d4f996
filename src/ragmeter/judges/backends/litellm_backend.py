"""The ``litellm`` backend: 100+ providers through LiteLLM (optional extra ``ragmeter[litellm]``).

``litellm:anthropic/claude-3-5-haiku``, ``litellm:bedrock/...``, ``litellm:gemini/gemini-2.0-flash``.
LiteLLM is imported only when such a judge is built. Keys come from the provider's usual
environment variable (``ANTHROPIC_API_KEY``...); a missing one is reported before the run. LiteLLM's
exceptions subclass the ``openai`` SDK's, so they are mapped by the same table.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ...errors import JudgeAuthError, MissingBackendError
from ...masking import mask_url, url_secrets
from ..base import ChatRequest, Completion, Message, Usage
from ..registry import BackendInfo, register_backend
from ._errors import map_openai_error
from .openai_compat import is_local_url, schema_instruction, usage_of


def _import_litellm() -> Any:
    try:
        import litellm
    except ImportError as exc:
        raise MissingBackendError(
            "the litellm judge needs LiteLLM: pip install -e '.[litellm]' in the ragmeter clone"
            " (or pip install litellm)"
        ) from exc
    return litellm


class LiteLLMBackend:
    """A backend over ``litellm.acompletion``.

    Parameters
    ----------
    model:
        A LiteLLM model string, ``provider/model``.
    base_url:
        Passed as ``api_base`` (a proxy or self-hosted endpoint).
    api_key, api_key_env:
        The key, or the environment variable to read it from, passed as ``api_key``. Default:
        LiteLLM reads the provider's environment variable, which goes to the provider's own
        endpoint only: with a ``base_url`` a key must be named (a local one needs none and gets
        a placeholder), else :class:`~ragmeter.errors.JudgeAuthError` here.
    check_key:
        Check at construction that the provider's key is set (default True).
    extra_body:
        Fields LiteLLM adds to every request body of an OpenAI-compatible provider (passed as its
        ``extra_body``; none by default, and no empty one is sent), e.g. ``{"repeat_penalty": 1.0}``
        for a llama.cpp server behind LiteLLM. Part of the cache key, of ``judge.stats()`` and of the
        judge-check record's judge id, as for the ``openai`` backend.
    **extra:
        Any other ``litellm.acompletion`` keyword (``top_p``, provider settings...), sent as given.
        These are **not** in the cache key (they may hold credentials): a cached reply made under
        other values is served; use another cache path, or ``extra_body``, to keep them apart.
    """

    name = "litellm"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str | None = None, check_key: bool = True, extra_body: dict[str, Any] | None = None,
                 **extra: Any) -> None:
        if api_key_env and not api_key:
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise JudgeAuthError(f"api_key_env: the environment variable {api_key_env} is not set "
                                     f"(export {api_key_env}=...)")
        if base_url and not api_key:
            # LiteLLM would send the provider's key from the environment to any api_base: a key
            # goes to another server only when named (docs/judges.md, "Keys and secrets")
            if not is_local_url(base_url):
                raise JudgeAuthError(
                    f"the litellm judge for {mask_url(base_url)} needs its key named: api_key_env=NAME "
                    "(ragmeter.yaml `api_key_env: NAME`, or --judge-key-env NAME) or api_key=...; the "
                    "provider's key in the environment goes only to the provider's own endpoint")
            api_key, check_key = "no-key-needed", False  # a placeholder, never a secret
        placeholder = api_key == "no-key-needed"
        self._litellm = _import_litellm()
        self.model = model
        self._url = base_url  # the real URL, for litellm only; shown and stored masked
        self.base_url = mask_url(base_url)
        self._secrets = url_secrets(base_url)
        if api_key and not placeholder:
            self._secrets.append(api_key)
        self.free = False
        self._api_key = api_key
        self._extra = extra
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        if check_key and api_key is None and not is_local_url(base_url):
            try:
                env = self._litellm.validate_environment(model=model)
            except Exception:  # an unknown provider: let the first call say so
                env = {}
            missing = env.get("missing_keys") or []
            if missing and not env.get("keys_in_environment", False):
                raise JudgeAuthError(
                    f"the litellm judge for {model!r} needs {', '.join(missing)}: "
                    f"export {missing[0]}=... or pass api_key=..."
                )
        try:
            self._schema_ok = bool(self._litellm.supports_response_schema(model=model))
        except Exception:
            self._schema_ok = False

    async def complete(self, request: ChatRequest) -> Completion:
        """One ``litellm.acompletion`` call, no retry."""
        messages = request.message_dicts()
        kwargs: dict[str, Any] = dict(self._extra)
        if request.json_schema is not None:
            if self._schema_ok:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name, "schema": request.json_schema},
                }
            else:
                messages = [Message("system", schema_instruction(request.json_schema)).to_dict(), *messages]
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if self.extra_body:
            kwargs["extra_body"] = dict(self.extra_body)
        if self._url:
            kwargs["api_base"] = self._url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        try:
            resp = await self._litellm.acompletion(
                model=self.model, messages=messages, temperature=request.temperature,
                max_tokens=request.max_tokens, timeout=request.timeout, num_retries=0, **kwargs,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise map_openai_error(exc, backend=self.name, secrets=self._secrets) from exc
        choice = resp.choices[0]
        usage = getattr(resp, "usage", None)
        return Completion(
            choice.message.content or "",
            Usage() if usage is None else usage_of(usage),
            getattr(choice, "finish_reason", None),
        )

    async def aclose(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"LiteLLMBackend(model={self.model!r})"


register_backend(
    BackendInfo(
        name="litellm",
        factory=LiteLLMBackend,
        summary="any provider LiteLLM supports (Anthropic, Bedrock, Gemini, Azure...)",
        extra="litellm",
        example="litellm:anthropic/claude-3-5-haiku",
    )
)
