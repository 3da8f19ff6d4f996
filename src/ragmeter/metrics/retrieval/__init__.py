"""Retrieval metrics (no LLM): each module holds a per-query function, a vectorised batch function and
its registry entry.

Every module of this package is imported here by :func:`ragmeter.registry.import_package_modules`
(the registry imports this package the first time it is queried, so ``import ragmeter`` stays
light): adding a metric is adding its module, with no import line to keep in step. Modules whose
name starts with ``_`` are helpers (imported by the metrics that use them); ``base`` and
``relevance`` register nothing.
"""

from ...registry import import_package_modules

import_package_modules(__name__, __path__)
