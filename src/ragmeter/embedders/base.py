"""The :class:`Embedder` interface: texts in, L2-normalised float32 rows out, batched and cached.

A backend subclasses :class:`Embedder` and implements **one** of two hooks:

* ``_embed_batch(texts) -> array`` (sync; e.g. a local sentence-transformers model). The async
  :meth:`Embedder.aembed` then runs it in a worker thread, so it never blocks the event loop.
* ``async _aembed_batch(texts) -> array`` (async; e.g. an HTTP API). The sync :meth:`Embedder.embed`
  then drives it on an event loop of its own (in a worker thread when one is already running).

Everything else is shared: duplicates are embedded once, cached vectors are read from the on-disk
:class:`~ragmeter.embedders.cache.VectorCache` (``cache=False`` disables it), the rest is sent in
batches of ``batch_size``, and every row is L2-normalised to float32 (a zero row stays zero, so its
cosine with anything is 0). :attr:`Embedder.stats` counts backend calls and cache hits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..errors import EmbedderError, InvalidParameterError
from .cache import VectorCache, cache_key

T = TypeVar("T")
CacheOption = bool | VectorCache | str | os.PathLike[str] | None


@dataclass
class EmbedStats:
    """Counters of one embedder: what was asked, what the cache served, what the backend computed."""

    texts_requested: int = 0
    cache_hits: int = 0
    texts_embedded: int = 0
    backend_calls: int = 0


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code, also when an event loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def l2_normalise(matrix: Any, expected_rows: int) -> np.ndarray:
    """``matrix`` as float32 rows of unit L2 norm (zero rows stay zero); checks its shape."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != expected_rows or arr.shape[1] == 0:
        raise EmbedderError(
            f"the embedding backend returned an array of shape {arr.shape}, expected ({expected_rows}, dim)"
        )
    if not np.all(np.isfinite(arr)):
        raise EmbedderError("the embedding backend returned NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0).astype(np.float32, copy=False)


class Embedder:
    """Base class of every embedding backend (see the module docstring).

    Parameters
    ----------
    model_id:
        A stable identifier of the model *and its weights* (e.g. ``st:all-MiniLM-L6-v2@0.1.0``);
        it is part of every cache key.
    batch_size:
        Texts per backend call; None uses the backend's ``default_batch_size``.
    cache:
        True (default): the on-disk cache in the default cache dir (``$RAGMETER_CACHE_DIR`` or the
        user cache dir); a path or a :class:`VectorCache`: that cache; False or None: no cache.
    """

    backend: ClassVar[str] = ""
    default_batch_size: ClassVar[int] = 64
    #: Batches sent at once by :meth:`aembed` (1 for a local model that already uses every core).
    concurrency: ClassVar[int] = 1

    def __init__(self, model_id: str, *, batch_size: int | None = None, cache: CacheOption = True) -> None:
        if batch_size is None:
            batch_size = self.default_batch_size
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidParameterError(f"batch_size: expected an integer >= 1, got {batch_size!r}")
        self.model_id = model_id
        self.batch_size = batch_size
        if cache is True:
            self.cache: VectorCache | None = VectorCache()
        elif cache is False or cache is None:
            self.cache = None
        elif isinstance(cache, VectorCache):
            self.cache = cache
        else:
            self.cache = VectorCache(cache)
        self.stats = EmbedStats()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._embed_batch is Embedder._embed_batch and cls._aembed_batch is Embedder._aembed_batch:
            raise TypeError(f"{cls.__name__} must implement _embed_batch or _aembed_batch")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_id!r}>"

    # -- backend hooks: implement one -------------------------------------------------------------

    def _embed_batch(self, texts: list[str]) -> Any:
        """Embed one batch synchronously (default: drive :meth:`_aembed_batch`)."""
        return run_sync(self._aembed_batch(texts))

    async def _aembed_batch(self, texts: list[str]) -> Any:
        """Embed one batch asynchronously (default: :meth:`_embed_batch` in a worker thread)."""
        return await asyncio.to_thread(self._embed_batch, texts)

    async def _aclose_loop_resources(self) -> None:
        """Release what the backend holds on the running event loop (e.g. an HTTP client)."""

    @property
    def _async_native(self) -> bool:
        return type(self)._aembed_batch is not Embedder._aembed_batch

    async def _aembed_and_close(self, texts: Sequence[str]) -> np.ndarray:
        try:
            return await self.aembed(texts)
        finally:
            await self._aclose_loop_resources()

    # -- public API --------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: an array of shape ``(len(texts), dim)``, float32, rows of unit L2 norm.

        An empty input gives an array of shape ``(0, 0)``. Raises :class:`EmbedderError` when the
        backend fails.
        """
        if self._async_native:
            return run_sync(self._aembed_and_close(texts))
        todo, found = self._prepare(texts)
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            found.update(self._store(batch, self._embed_batch(batch)))
        return self._assemble(texts, found)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Async twin of :meth:`embed`; up to ``concurrency`` batches are in flight at once."""
        todo, found = self._prepare(texts)
        batches = [todo[s : s + self.batch_size] for s in range(0, len(todo), self.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(batch: list[str]) -> dict[str, np.ndarray]:
            async with gate:
                return self._store(batch, await self._aembed_batch(batch))

        for part in await asyncio.gather(*(one(b) for b in batches)):
            found.update(part)
        return self._assemble(texts, found)

    # -- shared machinery --------------------------------------------------------------------------

    def _prepare(self, texts: Sequence[str]) -> tuple[list[str], dict[str, np.ndarray]]:
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise InvalidParameterError(
                f"embed: expected a sequence of strings, got {type(texts).__name__}"
                + ("" if isinstance(texts, str) else " with non-string items")
            )
        unique = list(dict.fromkeys(texts))
        self.stats.texts_requested += len(texts)
        found: dict[str, np.ndarray] = {}
        if self.cache is not None and unique:
            keys = {t: cache_key(self.model_id, t) for t in unique}
            hits = self.cache.get_many(keys.values())
            found = {t: hits[k] for t, k in keys.items() if k in hits}
            self.stats.cache_hits += len(found)
        return [t for t in unique if t not in found], found

    def _store(self, batch: list[str], raw: Any) -> dict[str, np.ndarray]:
        vectors = l2_normalise(raw, len(batch))
        self.stats.backend_calls += 1
        self.stats.texts_embedded += len(batch)
        out = dict(zip(batch, vectors, strict=True))
        if self.cache is not None:
            self.cache.put_many({cache_key(self.model_id, t): v for t, v in out.items()})
        return out

    @staticmethod
    def _assemble(texts: Sequence[str], found: dict[str, np.ndarray]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        dims = {found[t].shape[0] for t in texts}
        if len(dims) != 1:
            raise EmbedderError(
                f"cached and fresh vectors differ in dimension ({sorted(dims)}): the model id does not "
                "identify the model; clear the cache (RAGMETER_CACHE_DIR) or pass cache=False"
            )
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)
