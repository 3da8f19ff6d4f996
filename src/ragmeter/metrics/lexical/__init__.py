"""Lexical metrics (no model, deterministic): each module holds a pure per-sample function and its
registry entry. ``token_f1`` and ``rouge_l`` compare the answer with the reference answer;
``lexical_faithfulness`` checks the answer's sentences against the retrieved contexts and
``fact_consistency`` its numbers, names and negations.

Every module is imported here by :func:`ragmeter.registry.import_package_modules`: adding a metric
is adding its module, with no import line to keep in step (``base``, the shared evaluator and
:func:`.base.register_lexical`, registers nothing)."""

from ...registry import import_package_modules

import_package_modules(__name__, __path__)
