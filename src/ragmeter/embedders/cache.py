"""The on-disk cache of embedding vectors: one SQLite file, content-addressed.

A vector is stored under ``sha256(model_id + "\\x00" + text)`` (hex, with the ``sha256:`` algorithm
prefix), so a different model, model version or text never serves a stale vector. The value is the
L2-normalised float32 row as raw bytes, with its dimension. The file lives at
``<cache dir>/embeddings.sqlite3``; the cache dir is ``$RAGMETER_CACHE_DIR`` when set, else the
platform's user cache dir for ``ragmeter`` (``~/.cache/ragmeter`` on Linux).

The database runs in WAL mode with a busy timeout, so two processes can share it; within a
process one connection is shared behind a lock.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .._plugins import default_cache_dir  # the one cache-dir rule, shared with the judges

FILENAME = "embeddings.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
)
"""
_MAX_VARS = 500  # keys per SELECT ... IN (...), below SQLite's variable limit


def cache_key(model_id: str, text: str) -> str:
    """The content address of ``text`` embedded by ``model_id``."""
    digest = hashlib.sha256(model_id.encode("utf-8") + b"\x00" + text.encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


class VectorCache:
    """A persistent ``key -> float32 vector`` store (see the module docstring).

    Parameters
    ----------
    path:
        The SQLite file, or a directory to put ``embeddings.sqlite3`` in. None: the default cache dir.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        p = Path(path) if path is not None else default_cache_dir()
        if p.suffix != ".sqlite3":
            p = p / FILENAME
        p.parent.mkdir(parents=True, exist_ok=True)
        self.path = p
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(p), timeout=30.0, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (missing keys are simply absent from the result)."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(wanted), _MAX_VARS):
                part = wanted[start : start + _MAX_VARS]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(f"SELECT key, dim, vec FROM vectors WHERE key IN ({marks})", part)
                for key, dim, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] == dim:
                        out[key] = vec
        return out

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors (replacing any under the same key)."""
        rows = [
            (k, int(v.shape[0]), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items.items()
        ]
        if not rows:
            return
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("INSERT OR REPLACE INTO vectors (key, dim, vec) VALUES (?, ?, ?)", rows)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def clear(self) -> None:
        """Delete every cached vector."""
        with self._lock:
            self._conn.execute("DELETE FROM vectors")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
