"""Retrieval metrics (no LLM): each module holds a per-query function, a vectorised batch function and
its registry entry.

Every module of this package is imported here by :func:`ragmeter.registry.import_package_modules`
(the registry imports this package the first time it is queried, so ``import ragmeter`` stays
light): adding a metric is adding its module, with no import line to keep in step. Modules whose
name starts with ``_`` are helpers (imported by the metrics that use them); ``base`` and
``relevance`` register nothing. :class:`RelevanceBatch` (the CSR arrays every kernel reads) and
:class:`RankedList` (one query's ranking, what the reference functions read) are the package's
types other packages build (the columnar engines, ``ragmeter trec``).
"""

from ...registry import import_package_modules
from ._batch import RankedList, RelevanceBatch

import_package_modules(__name__, __path__)

__all__ = ["RankedList", "RelevanceBatch"]
