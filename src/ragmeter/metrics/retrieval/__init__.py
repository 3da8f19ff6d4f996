"""Retrieval metrics (no LLM): each module holds a per-query function, a vectorised batch function and
its registry entry.

Every module of this package is imported here, found with :mod:`pkgutil` (the registry imports this
package the first time it is queried, so ``import ragmeter`` stays light): adding a metric is adding
its module, with no import line to keep in step. Modules whose name starts with ``_`` are helpers
(imported by the metrics that use them); ``base`` and ``relevance`` register nothing.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
