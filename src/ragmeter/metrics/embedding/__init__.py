"""Embedding metrics: they need an embedder (``embedder=...`` in Python, ``--embedder`` on the
command line) and embed the texts of a whole batch at once. Every module is imported here by
:func:`ragmeter.registry.import_package_modules` (adding a metric is adding its module)."""

from ...registry import import_package_modules

import_package_modules(__name__, __path__)
