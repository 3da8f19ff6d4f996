"""The user's RAG app as ragmeter calls it: one question (and parameters) in, an answer and contexts out.

An :class:`AppTarget` has an ``identity`` (part of every cache key: another app, or the same app
at another address, never serves a cached output) and ``async call(question, params)`` returning
the app's raw output; :func:`app_output` reads that output as ``(answer, contexts)``.

=========================================  ==========================================================
APP                                        called as
=========================================  ==========================================================
``pkg.module:function`` (sync or async)    ``function(question, **params)``; a sync function runs in
                                           a worker thread so calls overlap
``pkg.module:obj`` with ``ainvoke`` /      a LangChain Runnable: ``obj.ainvoke({"question": ...,
``invoke``                                 **params})`` (or ``invoke`` in a thread)
``pkg.module:obj`` with ``aquery`` /       a LlamaIndex query engine: ``obj.aquery(question)`` (no
``query``                                  parameters: for ``--param``, address a function that
                                           builds the engine from them and queries it)
``pkg.module:pipeline``                    a Haystack ``Pipeline``: ``pipeline.run(...)`` in a thread,
                                           the question on its ``query`` / ``question``
                                           inputs (:mod:`ragmeter.app.haystack_app`)
``http://...`` / ``https://...``           POST of a JSON body template (:class:`HttpApp`); HTTP 429 /
                                           5xx and connection errors are
                                           :class:`~ragmeter.errors.AppUnavailable` (retried)
=========================================  ==========================================================

What the app returns (:func:`app_output`): a mapping with an answer (``answer``, ``response``,
``output``, ``result`` or ``text``) and contexts (``contexts``, ``context``, ``source_documents``,
``documents``, ``source_nodes``, ``retrieved_contexts``); an ``(answer, contexts)`` pair; or a
LlamaIndex ``Response`` (``response`` + ``source_nodes``). Contexts in any shape ragmeter reads
(strings, ``{id, text, score, ...}`` objects, LangChain / LlamaIndex / Haystack documents).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import AppError, AppUnavailable, InvalidParameterError
from .haystack_app import HaystackApp, is_pipeline

ANSWER_KEYS = ("answer", "response", "output", "result", "text")
CONTEXT_KEYS = ("contexts", "context", "source_documents", "documents", "source_nodes", "retrieved_contexts")


class AppTarget(Protocol):
    """One app: its identity (in every cache key) and one call."""

    identity: str

    async def call(self, question: str, params: dict[str, Any]) -> Any:
        """The app's raw output for ``question`` with ``params``."""
        ...


@dataclass
class PythonApp:
    """A Python callable, a LangChain Runnable or a LlamaIndex query engine (see the module table)."""

    spec: str
    obj: Any
    identity: str = ""

    def __post_init__(self) -> None:
        self.identity = self.identity or f"python:{self.spec}"

    @property
    def takes_params(self) -> bool:
        """False for a LlamaIndex query engine: ``aquery`` takes the question only, so ``--param``
        values would be dropped and every combination would score the same app."""
        return not (hasattr(self.obj, "aquery") and hasattr(self.obj, "query")
                    and not (hasattr(self.obj, "ainvoke") and hasattr(self.obj, "invoke")))

    async def call(self, question: str, params: dict[str, Any]) -> Any:
        obj = self.obj
        if hasattr(obj, "ainvoke") and hasattr(obj, "invoke"):  # a LangChain Runnable
            return await obj.ainvoke({"question": question, **params})
        if hasattr(obj, "aquery") and hasattr(obj, "query"):  # a LlamaIndex query engine
            return await obj.aquery(question)
        if inspect.iscoroutinefunction(obj):
            return await obj(question, **params)
        result = await asyncio.to_thread(obj, question, **params)
        return await result if inspect.isawaitable(result) else result


def load_python_app(spec: str) -> PythonApp | HaystackApp:
    """The object ``pkg.module:name`` names (``name`` may be dotted: ``module:obj.attr``); the
    current directory is on the import path."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InvalidParameterError(f"APP: expected pkg.module:function or an http(s):// URL, got {spec!r}")
    if os.getcwd() not in sys.path:  # a module in the current directory is importable (as for uvicorn)
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidParameterError(f"APP {spec!r}: cannot import {module_name!r}: {exc} (is it on PYTHONPATH?)") \
            from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InvalidParameterError(f"APP {spec!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if is_pipeline(obj):
        return HaystackApp(spec, obj)
    if not callable(obj) and not hasattr(obj, "ainvoke") and not hasattr(obj, "aquery"):
        raise InvalidParameterError(f"APP {spec!r}: expected a callable, a LangChain Runnable, a LlamaIndex "
                                    f"query engine or a Haystack Pipeline, got {type(obj).__name__}")
    return PythonApp(spec, obj)


# ---- HTTP ---------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill_template(template: Any, values: dict[str, Any]) -> Any:
    """``template`` (parsed JSON) with ``{name}`` placeholders filled from ``values``: a string that is
    exactly one placeholder becomes the value itself (a number stays a number), one inside a longer
    string is replaced by the value's text.

    >>> fill_template({"q": "{question}", "k": "{top_k}", "s": "top {top_k}"}, {"question": "hi", "top_k": 3})
    {'q': 'hi', 'k': 3, 's': 'top 3'}
    """
    if isinstance(template, dict):
        return {k: fill_template(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, values) for v in template]
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
    return template


def json_path(obj: Any, path: str) -> Any:
    """The value at a dot path (``data.contexts``, ``choices.0.text``) of parsed JSON; raises KeyError.

    >>> json_path({"data": {"items": [{"t": "x"}]}}, "data.items.0.t")
    'x'
    """
    for part in [p for p in path.split(".") if p]:
        if isinstance(obj, list) and part.lstrip("-").isdigit():
            obj = obj[int(part)]
        elif isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            raise KeyError(f"the response has no {part!r} (path {path!r})")
    return obj


DEFAULT_BODY = '{"question": "{question}"}'


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (None otherwise: an HTTP date, or none).

    >>> retry_after("2"), retry_after(None), retry_after("Wed, 21 Oct 2015 07:28:00 GMT")
    (2.0, None, None)
    """
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


@dataclass
class HttpApp:
    """An HTTP endpoint: POST ``body`` (a JSON template, :func:`fill_template` with the question and
    the parameters), answer and contexts read at ``answer_path`` / ``contexts_path`` of the JSON
    reply. ``headers`` maps a header name to the environment variable holding its value (read when
    the app is built; the value is never part of the identity or of any file)."""

    url: str
    body: str = DEFAULT_BODY
    answer_path: str = "answer"
    contexts_path: str = "contexts"
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    identity: str = ""
    _header_values: dict[str, str] = field(default_factory=dict, repr=False)
    _session: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            self._template = json.loads(self.body)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"--body: expected a JSON template, got {self.body!r} ({exc.msg})") from exc
        for name, var in self.headers.items():
            value = os.environ.get(var)
            if value is None:
                raise InvalidParameterError(f"--header {name}={var}: the environment variable {var} is not set; "
                                            f"export {var}=... first")
            self._header_values[name] = value
        self.identity = self.identity or "http:" + json.dumps(
            [self.url, self._template, self.answer_path, self.contexts_path], sort_keys=True)

    async def call(self, question: str, params: dict[str, Any]) -> Any:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        payload = fill_template(self._template, {**params, "question": question})
        try:
            async with self._session.post(self.url, json=payload, headers=self._header_values) as resp:
                text = await resp.text()
                if resp.status == 429 or resp.status >= 500:  # transient: retried (ragmeter.app.calls)
                    raise AppUnavailable(f"HTTP {resp.status} from {self.url}: {text[:300]}",
                                         retry_after=retry_after(resp.headers.get("Retry-After")))
                if resp.status >= 400:
                    raise AppError(f"HTTP {resp.status} from {self.url}: {text[:300]}")
        except aiohttp.ClientConnectionError as exc:  # refused, reset, dropped mid-reply
            raise AppUnavailable(f"cannot reach {self.url}: {type(exc).__name__}: {exc}") from exc
        try:
            reply = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AppError(f"the reply of {self.url} is not JSON: {text[:200]!r}") from exc
        try:
            contexts = json_path(reply, self.contexts_path)
        except (KeyError, IndexError, TypeError) as exc:
            raise AppError(f"--contexts-path: {exc}") from exc
        try:
            return {"answer": json_path(reply, self.answer_path), "contexts": contexts}
        except (KeyError, IndexError, TypeError) as exc:
            raise AppError(f"--answer-path: {exc}") from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def resolve_app(spec: str, **http: Any) -> PythonApp | HaystackApp | HttpApp:
    """The app ``spec`` names: an ``http(s)://`` URL (``http`` options as :class:`HttpApp` takes
    them) or ``pkg.module:function``."""
    if spec.startswith(("http://", "https://")):
        return HttpApp(spec, **{k: v for k, v in http.items() if v is not None})
    return load_python_app(spec)


# ---- reading the app's output --------------------------------------------------------------------


def _first(obj: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    for k in keys:
        if k in obj:
            return True, obj[k]
    return False, None


def app_output(raw: Any) -> tuple[str | None, list[Any] | None]:
    """``(answer, contexts)`` of what an app returned (see the module docstring); raises
    :class:`~ragmeter.errors.AppError` when it is none of the accepted shapes."""
    if isinstance(raw, tuple | list) and len(raw) == 2 and not isinstance(raw[0], list | dict):
        answer, contexts = raw
    elif isinstance(raw, Mapping):
        has_answer, answer = _first(raw, ANSWER_KEYS)
        has_ctx, contexts = _first(raw, CONTEXT_KEYS)
        if not has_answer and not has_ctx:
            raise AppError(f"the app returned a mapping with keys {sorted(map(str, raw))[:10]}: expected "
                           f"an answer ({', '.join(ANSWER_KEYS)}) and contexts ({', '.join(CONTEXT_KEYS)})")
    elif hasattr(raw, "response") and hasattr(raw, "source_nodes"):  # a LlamaIndex Response
        answer, contexts = raw.response, list(raw.source_nodes)
    elif isinstance(raw, str):
        answer, contexts = raw, None
    else:
        raise AppError(f"the app returned {type(raw).__name__}: expected a mapping with answer and contexts, "
                       "an (answer, contexts) pair or a framework response")
    if answer is not None and not isinstance(answer, str):
        answer = getattr(answer, "content", None) if hasattr(answer, "content") else str(answer)
    if contexts is not None and not isinstance(contexts, list):
        contexts = list(contexts) if isinstance(contexts, tuple) else [contexts]
    return answer, contexts
