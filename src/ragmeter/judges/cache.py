"""The persistent judge response cache: SQLite, content-addressed, safe across processes.

Where: ``$RAGMETER_CACHE_DIR/judge-cache.sqlite3`` when the variable is set, else the user cache
directory from :mod:`platformdirs` (``~/.cache/ragmeter`` on Linux).

Keys are ``sha256:`` + the SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of
everything that decides a reply: backend, model, base URL, rendered messages, temperature,
max tokens, JSON schema, seed and prompt template version (:func:`cache_key`). Extra samples of
one judgement (``repeat=N``) are stored under ``key#1``, ``key#2``...

Each judgement is committed as soon as it succeeds (one short ``BEGIN IMMEDIATE`` transaction),
so a run killed with ``kill -9`` and restarted re-uses every judgement that completed. The
database runs in WAL mode with a busy timeout, so several processes can read and write it at
once. Schema changes are named migrations recorded in a ``_migrations`` table (like
simonw/llm). Failed calls are never stored. API keys are never part of a key or a row.

Reads are a primary-key lookup (microseconds) done inline; writes, which may wait for another
process's lock, run in a dedicated thread so the event loop never blocks on them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._plugins import default_cache_dir  # the one cache-dir rule, shared with the embedders

CACHE_FILE = "judge-cache.sqlite3"
BUSY_TIMEOUT_MS = 60_000


def canonical_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept as is."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def cache_key(payload: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``payload``."""
    return "sha256:" + hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """One stored reply."""

    key: str
    response: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    backend: str = ""
    model: str = ""
    tag: str = ""
    #: the reply's token log-probabilities as JSON (``[[token, logprob, [[alt, logprob], ...]], ...]``),
    #: or None when the request did not ask for them or the server sent none
    logprobs: str | None = None


def _m001_responses(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS responses (
               key TEXT PRIMARY KEY,
               response TEXT NOT NULL,
               prompt_tokens INTEGER NOT NULL DEFAULT 0,
               completion_tokens INTEGER NOT NULL DEFAULT 0,
               finish_reason TEXT,
               backend TEXT NOT NULL DEFAULT '',
               model TEXT NOT NULL DEFAULT '',
               tag TEXT NOT NULL DEFAULT '',
               created REAL NOT NULL
           )"""
    )


def _m002_logprobs(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE responses ADD COLUMN logprobs TEXT")


#: Named migrations, applied in order, each once per database. Append; never edit or reorder.
MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("m001_responses", _m001_responses),
    ("m002_logprobs", _m002_logprobs),
]


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


class ResponseCache:
    """The judge response cache at ``path`` (a ``.sqlite3`` file or a directory to put one in).

    ``path=None`` uses :func:`default_cache_dir`. Thread-safe; safe across processes.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        p = Path(path) if path is not None else default_cache_dir()
        if p.suffix not in (".sqlite3", ".sqlite", ".db"):
            p = p / CACHE_FILE
        p.parent.mkdir(parents=True, exist_ok=True)
        self.path = p
        self._lock = threading.Lock()
        self._writer = _connect(p)
        self._init_db()
        self._reader = _connect(p)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragmeter-cache")

    def _init_db(self) -> None:
        conn = self._writer
        for _ in range(50):  # another process may be switching the journal mode right now
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError:
                time.sleep(0.05)
        conn.execute("PRAGMA synchronous=NORMAL")  # durable against kill -9 in WAL mode
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
            done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
            for name, migrate in MIGRATIONS:
                if name not in done:
                    migrate(conn)
                    conn.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)", (name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def migrations(self) -> list[str]:
        """Names of the migrations applied to this database, in order."""
        with self._lock:
            return [r[0] for r in self._reader.execute("SELECT name FROM _migrations ORDER BY applied, name")]

    def get(self, key: str) -> CacheEntry | None:
        """The entry stored under ``key``, or None."""
        with self._lock:
            row = self._reader.execute(
                "SELECT response, prompt_tokens, completion_tokens, finish_reason, backend, model, tag, "
                "logprobs FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return CacheEntry(key, row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        """Store ``entries`` in one committed transaction (blocking; see :meth:`aput_many`)."""
        rows = [
            (e.key, e.response, e.prompt_tokens, e.completion_tokens, e.finish_reason, e.backend, e.model,
             e.tag, time.time(), e.logprobs)
            for e in entries
        ]
        if not rows:
            return
        conn = self._writer
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO responses (key, response, prompt_tokens, completion_tokens, "
                "finish_reason, backend, model, tag, created, logprobs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    async def aput_many(self, entries: list[CacheEntry]) -> None:
        """:meth:`put_many` in the cache's writer thread (never blocks the event loop)."""
        await asyncio.get_running_loop().run_in_executor(self._pool, self.put_many, entries)

    def __len__(self) -> int:
        with self._lock:
            return int(self._reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def keys(self) -> list[str]:
        """Every stored key (for tests and maintenance)."""
        with self._lock:
            return [r[0] for r in self._reader.execute("SELECT key FROM responses")]

    def clear(self) -> int:
        """Delete every stored reply; returns how many there were."""
        n = len(self)
        self._pool.submit(self._clear).result()
        return n

    def _clear(self) -> None:
        self._writer.execute("DELETE FROM responses")

    def close(self) -> None:
        """Close the connections and the writer thread."""
        self._pool.shutdown(wait=True)
        with self._lock:
            self._reader.close()
        self._writer.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"
