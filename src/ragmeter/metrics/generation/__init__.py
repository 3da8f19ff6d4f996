"""Generation metrics judged by an LLM (faithfulness, answer relevancy, ...) and their pure arithmetic.

Importing this package registers every judged metric; each module holds one metric, its prompt
templates live in ``prompts/`` beside them (versioned; the version is part of every cache key).
Every module is imported here by :func:`ragmeter.registry.import_package_modules`: adding a judged
metric is adding its module, with no import line to keep in step. Modules whose name starts with
``_`` are helpers (schemas, prompting, memo, the evaluator base) imported by the metrics that use
them; ``passage_recall_math`` and ``rubric`` register nothing at import (a rubric registers itself
when it is defined, in ``ragmeter.yaml`` or with :func:`.rubric.register_rubric`).
:func:`prompt_versions` gives the version of every bundled prompt.
"""

from ...registry import import_package_modules
from ._prompting import prompt_versions

import_package_modules(__name__, __path__)

__all__ = ["prompt_versions"]
