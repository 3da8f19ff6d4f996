"""Built-in metrics. Importing this package registers every one of them: each category package
(retrieval, generation, embedding, lexical) is imported by
:func:`ragmeter.registry.import_package_modules`, and imports every module it holds the same way."""

from ..registry import import_package_modules

import_package_modules(__name__, __path__)
