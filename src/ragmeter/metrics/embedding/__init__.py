"""Embedding metrics: they need an embedder (``embedder=...`` in Python, ``--embedder`` on the
command line) and embed the texts of a whole batch at once."""

from . import semantic_similarity  # noqa: F401  (importing registers the metric)
