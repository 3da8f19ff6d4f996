"""The ``llamacpp`` backend: a GGUF model run in-process by llama-cpp-python (extra ``ragmeter[llamacpp]``).

``llamacpp:/models/judge.gguf``. The model loads when the judge is built; calls run in a worker
thread (one at a time: a ``Llama`` object is not thread-safe) so the event loop stays free.
Structured output uses llama.cpp's JSON-schema grammar (``response_format={"type":
"json_object", "schema": ...}``). Local: cost is 0.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError, JudgeBadRequest, JudgeError, MissingBackendError
from ..base import ChatRequest, Completion, Usage
from ..registry import BackendInfo, register_backend
from ._errors import context_overflow, overflow_error


class LlamaCppBackend:
    """A backend over ``llama_cpp.Llama.create_chat_completion``.

    Parameters
    ----------
    model:
        Path to a ``.gguf`` file.
    n_ctx:
        Context window in tokens (default 4096).
    n_gpu_layers:
        Layers to offload to a GPU (default 0, CPU only).
    chat_format:
        llama.cpp chat format name; default: the one the GGUF declares.
    extra_body:
        Extra ``create_chat_completion`` arguments of every call (e.g. ``{"repeat_penalty": 1.0}``:
        llama-cpp-python's own default is 1.1; see :mod:`.openai_compat` for what it does to a
        judge and why it is not changed by default). Part of the cache key.
    **llama_options:
        Any other ``llama_cpp.Llama`` argument.
    """

    name = "llamacpp"
    #: a request's ``repeat_penalty`` is a ``create_chat_completion`` argument (llama-cpp-python's default: 1.1)
    repeat_penalty_field = "yes"

    def __init__(self, model: str, *, base_url: str | None = None, n_ctx: int = 4096, n_gpu_layers: int = 0,
                 chat_format: str | None = None, extra_body: dict[str, Any] | None = None,
                 **llama_options: Any) -> None:
        if base_url is not None:
            raise InvalidParameterError("the llamacpp judge runs in-process and takes no base URL")
        path = Path(model).expanduser()
        if not path.is_file():
            raise InvalidParameterError(f"llamacpp judge: expected a .gguf model file, got {model!r} (not found)")
        try:
            import llama_cpp
        except ImportError as exc:
            raise MissingBackendError(
                "the llamacpp judge needs llama-cpp-python: pip install -e \".[llamacpp]\" in the ragmeter clone"
            ) from exc
        self.model = str(path)
        self.base_url: str | None = None
        #: extra ``create_chat_completion`` arguments (and cache-key fields)
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.free = True
        self._lock = threading.Lock()
        self._llm = llama_cpp.Llama(
            model_path=str(path), n_ctx=n_ctx, n_gpu_layers=n_gpu_layers, chat_format=chat_format,
            verbose=False, **llama_options,
        )

    def _run(self, request: ChatRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.repeat_penalty is not None:
            kwargs["repeat_penalty"] = request.repeat_penalty
        kwargs.update(self.extra_body)
        with self._lock:
            return self._llm.create_chat_completion(
                messages=request.message_dicts(), temperature=request.temperature,
                max_tokens=request.max_tokens, **kwargs,
            )

    async def complete(self, request: ChatRequest) -> Completion:
        """Generate in a worker thread."""
        try:
            out = await asyncio.to_thread(self._run, request)
        except ValueError as exc:  # llama.cpp's "Requested tokens (N) exceed context window of M" etc.
            found = context_overflow(str(exc))
            if found is not None:
                raise overflow_error(f"llamacpp judge: {exc}", found) from exc
            raise JudgeBadRequest(f"llamacpp judge: {exc}") from exc
        except Exception as exc:
            raise JudgeError(f"llamacpp judge: {type(exc).__name__}: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            choice["message"].get("content") or "",
            Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            choice.get("finish_reason"),
        )

    async def aclose(self) -> None:
        """Nothing to release (the model is freed with the object)."""

    def __repr__(self) -> str:
        return f"LlamaCppBackend(model={self.model!r})"


register_backend(
    BackendInfo(
        name="llamacpp",
        factory=LlamaCppBackend,
        summary="a GGUF model run in-process by llama-cpp-python",
        extra="llamacpp",
        example="llamacpp:/models/judge.gguf",
    )
)
