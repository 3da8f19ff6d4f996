"""The Embedder machinery shared by every backend: batching, de-duplication, normalisation, the cache.

A tiny deterministic backend (a hashing bag-of-characters) stands in for a model here; the real
backends are tested in test_st.py (the real MiniLM model) and test_openai.py (a loopback server).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from ragmeter import InvalidParameterError
from ragmeter.embedders import (
    CACHE_ENV,
    BackendInfo,
    Embedder,
    EmbedderError,
    VectorCache,
    cache_key,
    default_cache_dir,
    from_spec,
    list_backends,
    register_backend,
)


class CharCounts(Embedder):
    """Sync backend: the vector of character counts of a..h (unnormalised on purpose)."""

    backend = "chars"

    def __init__(self, **kw):
        super().__init__("chars:v1", **kw)
        self.batches: list[list[str]] = []

    def _embed_batch(self, texts):
        self.batches.append(list(texts))
        return [[t.count(c) for c in "abcdefgh"] for t in texts]


class AsyncCharCounts(CharCounts):
    async def _aembed_batch(self, texts):
        await asyncio.sleep(0)
        self.batches.append(list(texts))
        return [[t.count(c) for c in "abcdefgh"] for t in texts]


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


@pytest.mark.parametrize("cls", [CharCounts, AsyncCharCounts])
def test_rows_are_unit_float32_and_batched(cls):
    emb = cls(batch_size=2, cache=False)
    out = emb.embed(["ab", "abb", "cc", "ab", "h"])
    assert out.shape == (5, 8) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert np.allclose(out[0], out[3])  # duplicates embedded once, returned twice
    assert emb.batches == [["ab", "abb"], ["cc", "h"]]
    assert (emb.stats.texts_requested, emb.stats.texts_embedded, emb.stats.backend_calls) == (5, 4, 2)
    assert np.allclose(out[2], [0, 0, 1, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("cls", [CharCounts, AsyncCharCounts])
def test_async_and_sync_agree(cls):
    a = cls(cache=False).embed(["abc", "hgf"])
    b = asyncio.run(cls(cache=False).aembed(["abc", "hgf"]))
    assert np.array_equal(a, b)


def test_sync_embed_inside_a_running_loop():
    async def main():
        return AsyncCharCounts(cache=False).embed(["abc"])  # e.g. from evaluate_batch inside the runner

    assert asyncio.run(main()).shape == (1, 8)


def test_zero_vector_stays_zero():
    out = CharCounts(cache=False).embed(["xyz"])  # no a..h
    assert np.array_equal(out, np.zeros((1, 8), dtype=np.float32))


def test_empty_input():
    assert CharCounts(cache=False).embed([]).shape == (0, 0)


def test_cache_avoids_recomputation(tmp_path):
    first = CharCounts(cache=tmp_path)
    v1 = first.embed(["abc", "def"])
    second = CharCounts(cache=tmp_path)
    v2 = second.embed(["def", "abc", "gh"])
    assert second.batches == [["gh"]] and second.stats.cache_hits == 2
    assert np.array_equal(v1[0], v2[1]) and np.array_equal(v1[1], v2[0])
    assert (tmp_path / "embeddings.sqlite3").is_file()
    assert len(VectorCache(tmp_path)) == 3


def test_cache_disabled(tmp_path):
    CharCounts(cache=tmp_path).embed(["abc"])
    emb = CharCounts(cache=False)
    emb.embed(["abc"])
    assert emb.batches == [["abc"]] and emb.cache is None


def test_default_cache_dir_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere"
    emb = CharCounts()
    emb.embed(["abc"])
    assert emb.cache is not None and emb.cache.path == tmp_path / "elsewhere" / "embeddings.sqlite3"
    monkeypatch.delenv(CACHE_ENV)
    assert default_cache_dir().name == "ragmeter"


def test_cache_key_separates_models_and_texts():
    assert cache_key("m1", "text") != cache_key("m2", "text")
    assert cache_key("m1", "text") != cache_key("m1", "text ")
    assert cache_key("m1", "text").startswith("sha256:") and len(cache_key("m", "t")) == 7 + 64


def test_dimension_clash_is_an_error(tmp_path):
    class Wider(CharCounts):
        def _embed_batch(self, texts):
            return [[1.0] * 3 for _ in texts]

    CharCounts(cache=tmp_path).embed(["abc"])
    with pytest.raises(EmbedderError, match="differ in dimension"):
        Wider(cache=tmp_path).embed(["abc", "new"])


@pytest.mark.parametrize("make", [
    lambda texts: [[1.0, 2.0]] * (len(texts) + 1),  # one row too many
    lambda texts: [[float("nan")] * 8 for _ in texts],
    lambda texts: [[] for _ in texts],  # dimension 0
    lambda texts: [1.0, 2.0],  # not a matrix
])
def test_malformed_backend_output(make):
    class Broken(CharCounts):
        def _embed_batch(self, texts):
            return make(texts)

    with pytest.raises(EmbedderError):
        Broken(cache=False).embed(["abc"])


@pytest.mark.parametrize("bad", ["a string", ["ok", 3]])
def test_bad_input(bad):
    with pytest.raises(InvalidParameterError, match="expected a sequence of strings"):
        CharCounts(cache=False).embed(bad)


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_bad_batch_size(size):
    with pytest.raises(InvalidParameterError, match="batch_size"):
        CharCounts(batch_size=size, cache=False)


def test_a_backend_must_implement_a_hook():
    with pytest.raises(TypeError, match="must implement"):
        type("Nothing", (Embedder,), {})


def test_registry_and_plugins():
    assert {"st", "openai"} <= {b.name for b in list_backends()}
    register_backend(BackendInfo("chars", lambda model, **kw: CharCounts(**kw), "test backend"))
    emb = from_spec("chars", cache=False)
    assert isinstance(emb, CharCounts)
    assert from_spec(emb) is emb
    with pytest.raises(InvalidParameterError, match=r"unknown embedder backend 'nope'.*expected one of"):
        from_spec("nope:model")
    for bad in ["", "  ", None]:
        with pytest.raises(InvalidParameterError, match="embedder spec"):
            from_spec(bad)
    with pytest.raises(InvalidParameterError):
        register_backend(BackendInfo("Bad:Name", CharCounts))
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_backend(BackendInfo("st", CharCounts))
