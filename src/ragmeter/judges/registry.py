"""Judge backends are plugins: one registry, the built-ins registered like third parties.

A backend module builds a :class:`~ragmeter._plugins.BackendInfo` and calls :func:`register_backend`
at import time (the convention embedders share, :mod:`ragmeter._plugins`). Built-ins live in
:mod:`ragmeter.judges.backends`; third-party packages declare an entry point in the
``ragmeter.judges`` group naming a module to import::

    [project.entry-points."ragmeter.judges"]
    mybackend = "my_package.ragmeter_backend"

A judge spec string is ``NAME:MODEL`` with an optional ``@BASE_URL``:
``openai:gpt-4o-mini``, ``openai:qwen2.5@http://127.0.0.1:8080/v1``, ``ollama:llama3.1``,
``litellm:anthropic/claude-3-5-haiku``, ``llamacpp:/models/judge.gguf``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .._plugins import BackendInfo, BackendRegistry
from ..errors import InvalidParameterError
from ..masking import mask_secrets

if TYPE_CHECKING:
    from .base import JudgeBackend

ENTRY_POINT_GROUP = "ragmeter.judges"

_BACKENDS = BackendRegistry("judge backend", ENTRY_POINT_GROUP, "ragmeter.judges.backends")


def register_backend(info: BackendInfo) -> BackendInfo:
    """Add a judge backend (see :mod:`ragmeter._plugins`). Raises when another backend already has the name."""
    return _BACKENDS.register(info)


def list_backends() -> list[BackendInfo]:
    """Every registered judge backend, sorted by name."""
    return _BACKENDS.list()


def get_backend_info(name: str) -> BackendInfo:
    """The judge backend registered as ``name``; the error lists the known ones."""
    return _BACKENDS.get(name)


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
