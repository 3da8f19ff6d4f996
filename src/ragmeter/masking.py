"""Credentials never leave the process: masking URLs and texts before they are shown or stored.

A judge URL may carry credentials, ``http://user:pw@host/v1`` (user info) or
``https://host/v1?api_key=...`` (a query parameter). Wherever ragmeter shows or stores a URL or
a judge spec (``summary.json``, the HTML report, the cache, the console's judge line, error
messages) it goes through :func:`mask_url` / :func:`mask_secrets` first; only the HTTP client
sees the real URL.

>>> mask_url("http://user:pw@127.0.0.1:8455/v1")
'http://***@127.0.0.1:8455/v1'
>>> mask_url("https://host/v1?api_key=sk-123&mode=x")
'https://host/v1?api_key=***&mode=x'
>>> mask_secrets("openai:m@http://u:p@h:1/v1 failed")
'openai:m@http://***@h:1/v1 failed'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"

#: Query parameter names whose values are credentials (compared lower-cased, ``-`` read as ``_``).
SECRET_PARAMS = frozenset({
    "key", "api_key", "apikey", "x_api_key", "token", "access_token", "auth", "auth_token", "secret",
    "client_secret", "password", "pwd", "pass", "sig", "signature", "code", "session", "bearer",
})

_KEYLIKE = re.compile(r"\b(sk|pk|rk|key|api[_-]?key)[-_][A-Za-z0-9_\-]{8,}", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")


def _secret_param(name: str) -> bool:
    return name.lower().replace("-", "_") in SECRET_PARAMS


def mask_url(url: str | None) -> str | None:
    """``url`` with its user info replaced by ``***`` and credential query values by ``***``.

    Anything that is not a URL with a scheme and host is returned unchanged; None stays None.
    """
    if not isinstance(url, str) or "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return _crude(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_secret_param(k) for k, _ in pairs):
            query = urlencode([(k, MASK if _secret_param(k) else v) for k, v in pairs], safe="*")
    if host is None and netloc == parts.netloc:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _crude(url: str) -> str:
    """Masking for a string ``urlsplit`` rejects: drop everything between ``://`` and the last ``@``."""
    scheme, _, rest = url.partition("://")
    head, at, tail = rest.partition("/")
    if "@" in head:
        head = f"{MASK}@{head.rpartition('@')[2]}"
    return f"{scheme}://{head}{at}{tail}"


def mask_secrets(text: str | None) -> str | None:
    """``text`` with every URL in it masked (:func:`mask_url`): for specs and error messages."""
    if not isinstance(text, str) or "://" not in text:
        return text
    return _URL.sub(lambda m: mask_url(m.group(0)) or "", text)


def url_secrets(url: str | None) -> list[str]:
    """The credential strings inside ``url`` (user, password, secret query values), to redact
    from messages that might quote them in another form."""
    if not url or "://" not in url:
        return []
    try:
        parts = urlsplit(url)
        user = parts.username if parts.username and len(parts.username) >= 12 else None  # a token as user
        found = [user, parts.password]
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _secret_param(k)]
    except ValueError:
        return []
    return [s for s in found if s and len(s) >= 4]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every given secret, every ``Bearer ...`` token and key-like string masked."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    text = _BEARER.sub(r"\1***", text)
    return _KEYLIKE.sub("***", text)
