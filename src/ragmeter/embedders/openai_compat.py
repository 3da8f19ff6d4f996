"""The ``openai`` backend: any OpenAI-compatible ``/v1/embeddings`` endpoint, through the official SDK.

Spec: ``openai:MODEL`` or ``openai:MODEL@BASE_URL``, e.g.
``openai:text-embedding-3-small@http://127.0.0.1:8080/v1`` (a local llama.cpp / vLLM / TEI server).
The base URL is, in order: the one in the spec, the ``base_url=`` argument, ``$OPENAI_BASE_URL``,
``https://api.openai.com/v1``. The key follows the judges' rule
(:func:`ragmeter._plugins.api_key_for`): ``api_key=`` or the variable ``api_key_env=`` names goes
to the URL given; ``$OPENAI_API_KEY`` only to ``https://api.openai.com`` or the origin of
``$OPENAI_BASE_URL``. A local or private-network URL works without a key; any other URL without
one raises :class:`~ragmeter.errors.MissingBackendError` when the embedder is built, saying how to
name it.

The SDK comes with the ``judges`` extra (``pip install 'ragmeter[judges]'``); without it building
the embedder raises :class:`~ragmeter.errors.MissingBackendError` saying so.

Requests use ``encoding_format="float"`` (which every compatible server supports) and one
:class:`openai.AsyncOpenAI` client per event loop. SDK errors become :class:`EmbedderError` in one
place, :func:`map_openai_error`, with the status code and what to do next.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from typing import Any

from .._optional import require
from .._plugins import api_key_for, is_local_url, key_belongs
from ..errors import MissingBackendError
from ..masking import mask_secrets, mask_url, redact, url_secrets
from .base import CacheOption, Embedder, EmbedderError

DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"


def map_openai_error(exc: Exception, base_url: str, model: str, secrets: Sequence[str | None] = ()) -> EmbedderError:
    """Translate an :mod:`openai` SDK exception into an :class:`EmbedderError` that says what to do.

    ``base_url`` is shown as given (pass it masked); every URL in the message is masked and each of
    ``secrets`` (the key, the URL's credentials) replaced by ``***``, as the judges' errors are.
    """
    import openai

    where = f"embedding model {model!r} at {base_url}"
    if isinstance(exc, openai.AuthenticationError):
        msg = f"{where} rejected the API key (HTTP 401): check {KEY_ENV}"
    elif isinstance(exc, openai.NotFoundError):
        msg = f"{where}: not found (HTTP 404): check the model name and that the base URL ends in /v1"
    elif isinstance(exc, openai.RateLimitError):
        msg = f"{where}: rate limited (HTTP 429) after retries: lower the batch size or try later"
    elif isinstance(exc, openai.APIStatusError):
        msg = f"{where}: HTTP {exc.status_code}: {exc.message}"
    elif isinstance(exc, openai.APITimeoutError):
        msg = f"{where}: timed out: raise timeout= or lower batch_size"
    elif isinstance(exc, openai.APIConnectionError):
        msg = f"{where}: could not connect ({exc}): is the server running?"
    else:
        msg = f"{where}: {type(exc).__name__}: {exc}"
    return EmbedderError(redact(mask_secrets(msg) or msg, secrets))


def _no_key_message(url: str, api_key_env: str | None, own_origin: bool) -> str:
    """Why the embedder has no key for ``url``, and what to do."""
    if api_key_env:
        return f"api_key_env: the environment variable {api_key_env} is not set (export {api_key_env}=...)"
    if own_origin:
        how = f"set the {KEY_ENV} environment variable (export {KEY_ENV}=sk-...) or name another with api_key_env=NAME"
    else:
        how = (f"{KEY_ENV} is sent only to https://api.openai.com and to the origin of ${BASE_URL_ENV}: "
               "name this server's key with api_key_env=NAME or pass api_key=...")
    return (f"the openai embedder for {url} needs an API key: {how}, or point it at a local server "
            "(openai:MODEL@http://127.0.0.1:PORT/v1)")


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible HTTP API (see the module docstring).

    Parameters
    ----------
    model:
        ``MODEL`` or ``MODEL@BASE_URL`` (the part after ``openai:`` in a spec).
    base_url, api_key, api_key_env:
        Override ``$OPENAI_BASE_URL``; the key, or the variable to read it from (module docs).
    dimensions:
        Ask the server for shorter vectors (text-embedding-3 models); part of the cache key.
    timeout, max_retries:
        Per request; passed to :class:`openai.AsyncOpenAI`.
    batch_size, cache:
        See :class:`~ragmeter.embedders.base.Embedder`.
    """

    backend = "openai"
    default_batch_size = 128
    concurrency = 4

    def __init__(self, model: str | None = None, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str | None = None, dimensions: int | None = None, timeout: float = 60.0,
                 max_retries: int = 2, batch_size: int | None = None, cache: CacheOption = True) -> None:
        require("openai", "the openai embedder")
        name, _, spec_url = (model or "").partition("@")
        self.model = name or DEFAULT_MODEL
        url = (spec_url or base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self._url = url  # the real URL, for the client only; shown, keyed and stored masked
        self.base_url = mask_url(url) or url
        key = api_key_for(url, api_key=api_key, api_key_env=api_key_env, env_var=KEY_ENV)
        if key is None and (api_key_env or not is_local_url(url)):
            raise MissingBackendError(_no_key_message(self.base_url, api_key_env, key_belongs(url)))
        self._api_key = key or "not-needed"
        self._secrets = [key, *url_secrets(url)]
        self.dimensions = dimensions
        self.timeout = timeout
        self.max_retries = max_retries
        model_id = f"openai:{self.model}@{self.base_url}" + (f"?dimensions={dimensions}" if dimensions else "")
        super().__init__(model_id, batch_size=batch_size, cache=cache)
        self._clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def _client(self) -> Any:
        import asyncio

        import openai

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self._url,
                                        timeout=self.timeout, max_retries=self.max_retries)
            self._clients[loop] = client
        return client

    async def _aclose_loop_resources(self) -> None:
        import asyncio

        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def _aembed_batch(self, texts: list[str]) -> Any:
        import openai

        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            resp = await self._client().embeddings.create(
                model=self.model, input=texts, encoding_format="float", **extra
            )
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, self.base_url, self.model, self._secrets) from exc
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbedderError(
                f"embedding model {self.model!r} at {self.base_url} returned {len(data)} vectors "
                f"for {len(texts)} inputs"
            )
        return [d.embedding for d in data]
