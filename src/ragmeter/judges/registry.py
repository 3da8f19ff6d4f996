"""Judge backends are plugins: one registry, the built-ins registered like third parties.

A backend module builds a :class:`BackendInfo` and calls :func:`register_backend` at import
time. Built-ins live in :mod:`ragmeter.judges.backends`; third-party packages declare an entry
point in the ``ragmeter.judges`` group naming a module to import::

    [project.entry-points."ragmeter.judges"]
    mybackend = "my_package.ragmeter_backend"

A judge spec string is ``NAME:MODEL`` with an optional ``@BASE_URL``:
``openai:gpt-4o-mini``, ``openai:qwen2.5@http://127.0.0.1:8080/v1``, ``ollama:llama3.1``,
``litellm:anthropic/claude-3-5-haiku``, ``llamacpp:/models/judge.gguf``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameterError
from .masking import mask_secrets

if TYPE_CHECKING:
    from .base import JudgeBackend

ENTRY_POINT_GROUP = "ragmeter.judges"


@dataclass(frozen=True)
class BackendInfo:
    """A registered judge backend.

    Attributes
    ----------
    name:
        The spec prefix (``openai`` in ``openai:gpt-4o-mini``).
    factory:
        ``factory(model, *, base_url=None, **options) -> JudgeBackend``. It checks credentials
        and raises :class:`~ragmeter.errors.JudgeAuthError` naming the env var when a key is missing.
    summary:
        One line for ``ragmeter judges`` / docs.
    key_env_var:
        The environment variable holding the API key, if the backend needs one.
    extra:
        The ``pip install ragmeter[EXTRA]`` extra the backend needs, if any.
    example:
        An example spec.
    """

    name: str
    factory: Callable[..., JudgeBackend]
    summary: str
    key_env_var: str | None = None
    extra: str | None = None
    example: str = ""


_BACKENDS: dict[str, BackendInfo] = {}
_loaded = False


def register_backend(info: BackendInfo) -> BackendInfo:
    """Add a backend. Raises when another backend already has the name."""
    old = _BACKENDS.get(info.name)
    if old is not None and old.factory is not info.factory:
        raise InvalidParameterError(f"judge backend {info.name!r} is already registered")
    _BACKENDS[info.name] = info
    return info


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    importlib.import_module("ragmeter.judges.backends")
    for ep in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def list_backends() -> list[BackendInfo]:
    """Every registered backend, sorted by name."""
    _ensure_loaded()
    return sorted(_BACKENDS.values(), key=lambda b: b.name)


def get_backend_info(name: str) -> BackendInfo:
    """The backend registered as ``name``; the error lists the known ones."""
    _ensure_loaded()
    if name not in _BACKENDS:
        close = difflib.get_close_matches(name, list(_BACKENDS), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise InvalidParameterError(
            f"unknown judge backend {name!r}.{hint} Known backends: {', '.join(sorted(_BACKENDS))}"
        )
    return _BACKENDS[name]


_URL_START = re.compile(r"@(?=https?://)", re.IGNORECASE)


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """Split ``NAME:MODEL[@BASE_URL]`` into ``(name, model, base_url)``.

    The base URL starts at the **first** ``@`` followed by ``http://`` or ``https://`` and runs to
    the end as one unit, so a URL with credentials (``openai:m@http://user:pw@127.0.0.1:8455/v1``)
    keeps its host and never leaks ``user:pw`` into the model name. A model name may itself
    contain ``@`` or ``:`` (``ollama:qwen2.5:7b``, ``openai:m@v2@http://host/v1``).

    >>> parse_spec("openai:m@http://user:pw@127.0.0.1:8455/v1")
    ('openai', 'm', 'http://user:pw@127.0.0.1:8455/v1')
    >>> parse_spec("ollama:qwen2.5:7b")
    ('ollama', 'qwen2.5:7b', None)
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise InvalidParameterError(
            f"expected a judge spec such as 'openai:gpt-4o-mini' or 'ollama:llama3.1', got {mask_secrets(spec)!r}"
        )
    name, _, rest = spec.partition(":")
    base_url: str | None = None
    model = rest
    m = _URL_START.search(rest)
    if m is not None:
        model, base_url = rest[: m.start()], rest[m.end():]
    name, model = name.strip().lower(), model.strip()
    if not name or not model:
        raise InvalidParameterError(f"expected NAME:MODEL in the judge spec, got {mask_secrets(spec)!r}")
    return name, model, base_url


def backend_from_spec(spec: str, **options: Any) -> JudgeBackend:
    """Build the backend a spec names; ``options`` go to its factory (``api_key``, ``base_url``...)."""
    name, model, base_url = parse_spec(spec)
    info = get_backend_info(name)
    if base_url is not None:
        if options.get("base_url") not in (None, base_url):
            raise InvalidParameterError(
                f"the judge spec {mask_secrets(spec)!r} names a base URL and base_url= names another; give one"
            )
        options["base_url"] = base_url
    return info.factory(model, **options)
