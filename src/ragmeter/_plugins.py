"""What judge backends and embedder backends share: one plugin convention, one cache directory,
one rule for "this server is local".

Plugin convention (the same as for metrics): a backend module builds a :class:`BackendInfo` and
calls its subsystem's ``register_backend(info)`` at import time; ``list_backends()`` returns the
registered infos sorted by name. Built-ins are registered the same way as third parties; a
third-party package declares an entry point whose value names a module to import::

    [project.entry-points."ragmeter.judges"]      # or "ragmeter.embedders"
    mybackend = "my_package.ragmeter_backend"

Cache directory: ``$RAGMETER_CACHE_DIR`` when set and non-empty, else platformdirs' user cache
directory for ``ragmeter`` (no app author, so ``%LOCALAPPDATA%\\ragmeter\\Cache`` on Windows).
The judge cache and the embedding cache are two files in it.

Local rule (:func:`is_local_url`): a base URL on this machine or a private network is a
self-hosted server, which needs no API key.

Key rule (:func:`api_key_for`): a key named explicitly (``api_key=``, ``api_key_env=NAME``) goes
to the server it is named for; a key found in the backend's usual variable (``OPENAI_API_KEY``)
only to the origin it belongs to, its provider's (``https://api.openai.com``) or that of
``OPENAI_BASE_URL``. Any other server, a loopback or private one included, gets no key unless one
is named.
"""

from __future__ import annotations

import difflib
import importlib
import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import InvalidParameterError

CACHE_ENV = "RAGMETER_CACHE_DIR"
_LOCAL_HOSTS = ("localhost", "host.docker.internal")


def default_cache_dir() -> Path:
    """``$RAGMETER_CACHE_DIR`` if set and non-empty, else the platform's user cache dir for ragmeter."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("ragmeter", appauthor=False))


def is_local_url(url: str | None) -> bool:
    """True for a base URL served from this machine or a private network (no API key needed there).

    Local: ``localhost``, ``*.localhost``, ``*.local``, ``host.docker.internal``, and loopback,
    private-network or unspecified IP addresses (``127.0.0.0/8``, ``::1``, ``10/8``,
    ``172.16/12``, ``192.168/16``, ``0.0.0.0``).

    >>> is_local_url("http://127.0.0.1:8080/v1"), is_local_url("http://10.0.0.5/v1")
    (True, True)
    >>> is_local_url("https://api.openai.com/v1"), is_local_url(None)
    (False, False)
    """
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.endswith((".localhost", ".local")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_unspecified


#: The OpenAI API, whose origin ``OPENAI_API_KEY`` belongs to.
OPENAI_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, lower-cased, the port made explicit (80 / 443).

    >>> origin("HTTPS://API.openai.com/v1") == origin("https://api.openai.com:443/other")
    True
    """
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        return "", url, None


def api_key_for(url: str, *, api_key: str | None = None, api_key_env: str | None = None,
                env_var: str | None = "OPENAI_API_KEY", home: str = OPENAI_URL,
                base_url_env: str | None = BASE_URL_ENV) -> str | None:
    """The key to send to ``url`` by the key rule (module docs), or None.

    ``api_key`` wins, then the variable ``api_key_env`` names (None when it is unset: the caller
    says so); else ``$env_var`` when ``url`` has the origin of ``home`` or of ``$base_url_env``.
    """
    if api_key:
        return api_key
    if api_key_env:
        return os.environ.get(api_key_env) or None
    key = os.environ.get(env_var) if env_var else None
    return key if key and key_belongs(url, home=home, base_url_env=base_url_env) else None


def key_belongs(url: str, *, home: str = OPENAI_URL, base_url_env: str | None = BASE_URL_ENV) -> bool:
    """True when ``url`` has the origin of ``home`` or of ``$base_url_env``: where the usual key goes."""
    owners = {origin(home)}
    if base_url_env and os.environ.get(base_url_env):
        owners.add(origin(os.environ[base_url_env]))
    return origin(url) in owners


@dataclass(frozen=True)
class BackendInfo:
    """A registered judge or embedder backend.

    Attributes
    ----------
    name:
        The spec prefix (``openai`` in ``openai:gpt-4o-mini``): lower-case, no ``:``.
    factory:
        ``factory(model, **options)`` -> the backend. It checks credentials and raises an error
        naming the env var when a key is missing.
    summary:
        One line for listings and docs.
    key_env_var:
        The environment variable holding the API key, if the backend needs one.
    extra:
        The extra (``pip install -e ".[EXTRA]"`` in the clone) the backend needs, if any.
    example:
        An example spec.
    """

    name: str
    factory: Callable[..., Any]
    summary: str = ""
    key_env_var: str | None = None
    extra: str | None = None
    example: str = ""


class BackendRegistry:
    """The backends of one subsystem (``kind``), built-ins from ``builtins``, plugins from the
    entry point ``group`` (see the module docstring)."""

    def __init__(self, kind: str, group: str, builtins: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self.builtins = builtins
        self._infos: dict[str, BackendInfo] = {}
        self._loaded = False

    def register(self, info: BackendInfo) -> BackendInfo:
        """Add ``info``. Raises when the name is malformed or another backend already has it."""
        name = info.name
        if not name or ":" in name or name != name.lower():
            raise InvalidParameterError(f"{self.kind} name: expected a lower-case name without ':', got {name!r}")
        old = self._infos.get(name)
        if old is not None and old.factory is not info.factory:
            raise InvalidParameterError(f"{self.kind} {name!r} is already registered")
        self._infos[name] = info
        return info

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.builtins is not None:
            importlib.import_module(self.builtins)
        for ep in importlib_metadata.entry_points(group=self.group):
            ep.load()

    def find(self, name: str) -> BackendInfo | None:
        """The backend registered as ``name``, or None."""
        if name not in self._infos:
            self._ensure_loaded()
        return self._infos.get(name)

    def get(self, name: str) -> BackendInfo:
        """The backend registered as ``name``; the error suggests close names and lists the known ones."""
        info = self.find(name)
        if info is None:
            close = difflib.get_close_matches(name, list(self._infos), n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise InvalidParameterError(
                f"unknown {self.kind} {name!r}.{hint} Known backends: {', '.join(sorted(self._infos))}"
            )
        return info

    def list(self) -> list[BackendInfo]:
        """Every registered backend, sorted by name."""
        self._ensure_loaded()
        return sorted(self._infos.values(), key=lambda b: b.name)
